package sim

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func preset(t testing.TB, name string) devices.Profile {
	t.Helper()
	p, err := devices.Preset(name)
	require.NoError(t, err)
	return p
}

func scenarioFor(t testing.TB, system, device, dataset string, d, p int, ordering string) Scenario {
	t.Helper()
	sys, err := LookupSystem(system)
	require.NoError(t, err)
	ds, err := workload.LookupDataset(dataset)
	require.NoError(t, err)
	return Scenario{System: sys, Profile: preset(t, device), Dataset: ds, Training: DefaultTraining(ds, d), P: p, Ordering: ordering}
}

// TestGoldenReports pins whole Reports of one small case per system; run
// go test ./sim -update after an intended model change and review the diff.
func TestGoldenReports(t *testing.T) {
	cases := []struct {
		file string
		sc   Scenario
	}{
		{"marius_fb86m_d100_p16_beta.json", scenarioFor(t, "marius", "p3.2xlarge", "freebase86m", 100, 16, "beta")},
		{"pbg_livejournal_d100_p8.json", scenarioFor(t, "pbg", "p3.2xlarge", "livejournal", 100, 8, "")},
		{"legend_twitter_d100_p8.json", scenarioFor(t, "legend", "legend-a100", "twitter", 100, 8, "")},
		{"ge2_twitter_d100_p16.json", scenarioFor(t, "ge2", "legend-a100", "twitter", 100, 16, "")},
		{"dglke_livejournal_d100.json", scenarioFor(t, "dglke", "p3.2xlarge", "livejournal", 100, 0, "")},
		{"ingpu_fb15k_d400.json", scenarioFor(t, "in-gpu", "h100-nvme", "fb15k", 400, 0, "")},
	}
	for _, tc := range cases {
		t.Run(tc.file, func(t *testing.T) {
			tc.sc.C = 0
			if tc.sc.System.Name == "marius" {
				tc.sc.C = 4
			}
			r, err := Simulate(tc.sc)
			require.NoError(t, err)
			r.Timeline = r.Timeline[:10] // keep the files short
			got, err := json.MarshalIndent(r, "", " ")
			require.NoError(t, err)
			path := filepath.Join("testdata", tc.file)
			if *update {
				require.NoError(t, os.MkdirAll("testdata", 0o755))
				require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(got))
			assert.GreaterOrEqual(t, r.EpochSeconds, r.BoundSeconds)
		})
	}
}

// BenchmarkSimulateTwitter simulates one Marius epoch on Twitter (26,280
// batches) per op and reports events per second.
func BenchmarkSimulateTwitter(b *testing.B) {
	sc := scenarioFor(b, "marius", "p3.2xlarge", "twitter", 100, 32, "hilbert")
	sc.C = 8
	cfg, err := sc.Config()
	require.NoError(b, err)
	b.ResetTimer()
	events := 0
	for i := 0; i < b.N; i++ {
		r, err := Run(cfg)
		if err != nil {
			b.Fatal(err)
		}
		events += r.Events
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
