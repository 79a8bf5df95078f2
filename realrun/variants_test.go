package realrun

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// TestPredictionVariants is a measurement, not a check, and runs only
// when TIERFLOW_VARIANTS_WORKDIR names a prepared Dot work directory with
// c = 3 orderings in mind (REPRODUCE.md, validation): it calibrates, runs
// BETA, Legend and BETA again with the disk measured around each run, and
// re-predicts each run with one part of the model switched off at a time
// (I/O or compute interference, checksums) and with the configuration's
// disk calibration instead of the ones taken around the run, to show
// which part of the model the prediction depends on.
func TestPredictionVariants(t *testing.T) {
	dir := os.Getenv("TIERFLOW_VARIANTS_WORKDIR")
	if dir == "" {
		t.Skip("set TIERFLOW_VARIANTS_WORKDIR to a prepared work directory")
	}
	st, err := store.Open(dir)
	require.NoError(t, err)
	h := Hyper{Training: workload.Training{Model: workload.Dot, Dim: st.M.Dim, Batch: 1000, Negatives: 4}, DegreeFrac: 0.5, LR: 0.1, Workers: 2}
	scratch := t.TempDir()
	cal, err := ShapeProfile(st, h, scratch)
	require.NoError(t, err)
	itf := cal.Profile.CPU.Interference
	t.Logf("interference: compute %.2f, I/O %.2f; checksums %.1f GB/s", itf.Compute, itf.IO, cal.ChecksumBW/1e9)
	for _, name := range []string{"beta", "legend", "beta"} {
		plan, err := orderings.Build(name, st.M.P, 3, orderings.Belady, 0)
		require.NoError(t, err)
		cmp, _, err := RunAndCompare(st, plan, h, cal.Profile, CompareOptions{Repeats: 1, Prefetch: true, Seed: 1, DiskScratch: scratch})
		require.NoError(t, err)
		m := cmp.Measured
		t.Logf("%s: measured epoch %.2f s (stall %.2f, compute %.2f); disk before the run: read %.0f, write %.0f, combined %.0f MB/s",
			name, m.EpochSeconds, m.StallSeconds, m.ComputeSeconds, float64(cmp.Disk.Read)/1e6, float64(cmp.Disk.Write)/1e6, float64(cmp.Disk.Combined)/1e6)
		base := cal.Profile
		base.Disk, base.CPU.Checksum = cmp.Disk, cmp.Checksum
		for _, v := range []struct {
			name string
			edit func(p *devices.Profile)
		}{
			{"as predicted", func(*devices.Profile) {}},
			{"no I/O interference", func(p *devices.Profile) { p.CPU.Interference.IO = 0 }},
			{"no compute interference", func(p *devices.Profile) { p.CPU.Interference.Compute = 0 }},
			{"no checksums", func(p *devices.Profile) { p.CPU.Checksum = 0 }},
			{"configuration's disk", func(p *devices.Profile) { p.Disk = cal.Profile.Disk }},
		} {
			p := base
			v.edit(&p)
			r, err := Predict(st, plan, h, true, p)
			require.NoError(t, err)
			t.Logf("  %-24s predicted %.2f s (stall %.2f, compute %.2f): %+.1f%%", v.name, r.EpochSeconds, r.StallSeconds, r.ComputeSeconds, 100*(r.EpochSeconds/m.EpochSeconds-1))
		}
	}
}
