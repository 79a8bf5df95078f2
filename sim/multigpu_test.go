package sim

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/workload"
)

// multiCase builds a multi-GPU config (and the single-GPU scenario it
// must agree with at G = 1) for a system on a preset.
func multiCase(t *testing.T, system, device, dataset string, d, p, g int) (MultiGPUConfig, Scenario) {
	t.Helper()
	prof, err := devices.Preset(device)
	require.NoError(t, err)
	ds, err := workload.LookupDataset(dataset)
	require.NoError(t, err)
	sys, err := LookupSystem(system)
	require.NoError(t, err)
	sc := Scenario{System: sys, Profile: prof, Dataset: ds, Training: DefaultTraining(ds, d)}
	cfg := MultiGPUConfig{System: sys, Profile: prof, Dataset: ds, Training: sc.Training, GPUs: g, HostBW: 40e9}
	if sys.Partitioned {
		sc.P = p
		c, err := sc.Config()
		require.NoError(t, err)
		cfg.Plan = c.Plan
	}
	return cfg, sc
}

func TestMultiGPUOneGPUMatchesRun(t *testing.T) {
	cases := []struct {
		system, device, dataset string
		d, p                    int
	}{
		{"ge2", "ge2-paper", "twitter", 100, 16},
		{"ge2", "ge2-paper", "freebase86m", 100, 16},
		{"ge2", "legend-a100", "twitter", 100, 16},
		{"ge2", "ge2-paper", "twitter", 100, 64},
		{"dglke", "ge2-paper", "twitter", 100, 0},
		{"dglke", "p3.2xlarge", "freebase86m", 50, 0},
	}
	for _, tc := range cases {
		t.Run(tc.system+"/"+tc.device+"/"+tc.dataset, func(t *testing.T) {
			cfg, sc := multiCase(t, tc.system, tc.device, tc.dataset, tc.d, tc.p, 1)
			one, err := Simulate(sc)
			require.NoError(t, err)
			got, err := SimulateMultiGPU(cfg)
			require.NoError(t, err)
			assert.InEpsilon(t, one.EpochSeconds, got.EpochSeconds, 0.01)
			require.Len(t, got.PerGPU, 1)
			assert.Equal(t, sc.Dataset.TrainEdges(), got.PerGPU[0].Edges)
			assert.Equal(t, one.Batches, got.PerGPU[0].Batches)
			if sc.System.Partitioned {
				// One GPU runs the Plan as it is: the same loads.
				assert.Equal(t, one.Counts.Loads, got.PerGPU[0].Loads)
				assert.Zero(t, got.Conflicts)
			}
		})
	}
}

func TestMultiGPUSplit(t *testing.T) {
	cases := []struct {
		system string
		p, g   int
	}{
		{"ge2", 16, 2},
		{"ge2", 16, 4},
		{"ge2", 64, 4},
		{"ge2", 16, 3}, // 4 lines a round do not split evenly over 3 GPUs
		{"dglke", 0, 2},
		{"dglke", 0, 4},
	}
	for _, tc := range cases {
		t.Run(tc.system, func(t *testing.T) {
			cfg, _ := multiCase(t, tc.system, "ge2-paper", "twitter", 100, tc.p, tc.g)
			one := cfg
			one.GPUs = 1
			base, err := SimulateMultiGPU(one)
			require.NoError(t, err)
			r, err := SimulateMultiGPU(cfg)
			require.NoError(t, err)
			require.Len(t, r.PerGPU, tc.g)
			assert.Zero(t, r.Conflicts, "a partition resident on two GPUs at once")
			var edges int64
			var buckets int
			for _, u := range r.PerGPU {
				edges += u.Edges
				buckets += u.Buckets
				assert.LessOrEqual(t, u.BusySeconds, r.EpochSeconds)
				assert.LessOrEqual(t, u.EndSeconds, r.EpochSeconds+1e-9)
			}
			assert.Equal(t, cfg.Dataset.TrainEdges(), edges)
			assert.Less(t, r.EpochSeconds, base.EpochSeconds)
			if tc.system == "ge2" {
				assert.Equal(t, tc.p*tc.p, buckets)
				assert.Equal(t, (tc.p-1)/3, r.Rounds) // the parallel classes of AG(k,4)
				loads := 0
				for _, u := range r.PerGPU {
					loads += u.Loads
				}
				assert.InDelta(t, float64(loads)*float64(r.PartitionBytes), r.H2DBytes, 1)
				if (tc.p/4)%tc.g == 0 {
					// Uniform buckets and equal shares of lines: the GPUs
					// are evenly loaded and scaling is nearly linear.
					for _, u := range r.PerGPU {
						assert.InEpsilon(t, float64(edges)/float64(tc.g), float64(u.Edges), 0.01)
					}
					assert.InEpsilon(t, base.EpochSeconds/float64(tc.g), r.EpochSeconds, 0.05)
				}
			}
		})
	}
}

// TestMultiGPUHostCap moves partitions much larger than a batch's work so
// that PCIe dominates: a host cap below the GPUs' links together holds
// them back, and never below what the cap allows.
func TestMultiGPUHostCap(t *testing.T) {
	cfg, _ := multiCase(t, "ge2", "ge2-paper", "twitter", 100, 16, 4)
	cfg.Training.Negatives = 1 // almost no arithmetic
	cfg.Dataset.Edges /= 1000  // and few edges
	cases := []struct {
		name   string
		hostBW float64
		capped bool
	}{
		{"none", 0, false},
		{"above the links", 200e9, false},
		{"below the links", 24e9, true},
		{"tight", 12e9, true},
	}
	var prev float64
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := cfg
			c.HostBW = tc.hostBW
			r, err := SimulateMultiGPU(c)
			require.NoError(t, err)
			assert.Zero(t, r.Conflicts)
			if tc.capped {
				assert.Positive(t, r.HostCappedSeconds)
				assert.Greater(t, r.EpochSeconds, prev)
				// Every byte crossed the cap: the epoch cannot be shorter.
				assert.GreaterOrEqual(t, r.EpochSeconds, (r.H2DBytes+r.D2HBytes)/tc.hostBW)
			} else {
				assert.Zero(t, r.HostCappedSeconds)
			}
			prev = r.EpochSeconds
		})
	}
}

func TestMultiGPUDeterministic(t *testing.T) {
	for _, system := range []string{"ge2", "dglke"} {
		t.Run(system, func(t *testing.T) {
			cfg, _ := multiCase(t, system, "ge2-paper", "twitter", 100, 16, 4)
			var reps []MultiGPUReport
			for _, procs := range []int{1, 4, 16} {
				old := runtime.GOMAXPROCS(procs)
				r, err := SimulateMultiGPU(cfg)
				runtime.GOMAXPROCS(old)
				require.NoError(t, err)
				reps = append(reps, r)
			}
			assert.Equal(t, reps[0], reps[1])
			assert.Equal(t, reps[0], reps[2])
		})
	}
}

func TestMultiGPUErrors(t *testing.T) {
	beta, err := orderings.Build("beta", 16, 4, orderings.Belady, 0)
	require.NoError(t, err)
	cases := []struct {
		name  string
		edit  func(*MultiGPUConfig)
		wants string
	}{
		{"too many GPUs", func(c *MultiGPUConfig) { c.GPUs = 5 }, "5 GPUs asked for"},
		{"negative host cap", func(c *MultiGPUConfig) { c.HostBW = -1 }, "host bandwidth"},
		{"not COVER", func(c *MultiGPUConfig) { c.Plan = beta }, "COVER"},
		{"no plan", func(c *MultiGPUConfig) { c.Plan = nil }, "needs a Plan"},
		{"bucket counts", func(c *MultiGPUConfig) { c.BucketEdges = []int64{1} }, "bucket counts"},
		{"no model", func(c *MultiGPUConfig) { c.System, _ = LookupSystem("marius") }, "no multi-GPU model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := multiCase(t, "ge2", "ge2-paper", "twitter", 100, 16, 2)
			tc.edit(&cfg)
			_, err := SimulateMultiGPU(cfg)
			require.ErrorIs(t, err, ErrConfig)
			assert.Contains(t, err.Error(), tc.wants)
		})
	}
}

func TestCoverDirection(t *testing.T) {
	cases := []struct {
		line []int
		dir  int
		bad  bool
	}{
		{line: []int{0, 1, 2, 3}, dir: 1},
		{line: []int{0, 4, 8, 12}, dir: 4},
		{line: []int{0, 5, 10, 15}, dir: 5}, // {t·(1,1)}
		{line: []int{1, 6, 8, 15}, dir: 7},  // (1,0) + t·(3,1)
		{line: []int{0, 1, 2, 4}, bad: true},
		{line: []int{0, 1, 2}, bad: true},
	}
	for _, tc := range cases {
		d, err := coverDirection(tc.line)
		if tc.bad {
			assert.Error(t, err, "%v", tc.line)
			continue
		}
		require.NoError(t, err, "%v", tc.line)
		assert.Equal(t, tc.dir, d, "%v", tc.line)
	}
	// The plan's 20 lines at p = 16 fall into 5 parallel classes of 4
	// disjoint lines each.
	pl, err := orderings.Build("cover", 16, 4, orderings.Belady, 0)
	require.NoError(t, err)
	classes := map[int][]int{}
	for _, st := range pl.States {
		d, err := coverDirection(st)
		require.NoError(t, err)
		classes[d] = append(classes[d], st...)
	}
	require.Len(t, classes, 5)
	for d, pts := range classes {
		assert.ElementsMatch(t, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}, pts, "direction %d", d)
	}
}
