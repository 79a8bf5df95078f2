package validate

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// TestOneExecutor runs the same Plan through the real engine, with real
// files, and through the simulator's model of that engine, and finds the
// same sequence of buffer actions (reads, write-backs, installs, the
// final flush) on both: the schedule is the executor's, shared, so what
// differs between a prediction and a measurement is how long each action
// took. Checkpoints inside the real epoch (which pause the loader) and
// prefetch on or off change nothing in the sequence.
func TestOneExecutor(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 1e9, 1e9, 1e9
	deg, err := st.Degrees()
	require.NoError(t, err)
	epoch := 0
	for _, tc := range []struct {
		ordering   string
		c          int
		prefetch   bool
		checkpoint int // every so many buckets (0: none)
	}{
		{"beta", 2, true, 0},
		{"hilbert", 3, true, 5},
		{"inside-out", 2, false, 0},
		{"tierflow", 3, false, 3},
	} {
		t.Run(fmt.Sprintf("%s c=%d prefetch=%v", tc.ordering, tc.c, tc.prefetch), func(t *testing.T) {
			plan, err := orderings.Build(tc.ordering, st.M.P, tc.c, orderings.Belady, 1)
			require.NoError(t, err)

			var real []executor.Action
			eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: deg, Seed: 1, C: plan.C})
			require.NoError(t, err)
			epoch++
			ep, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Seed: 1, Epoch: epoch, Prefetch: tc.prefetch,
				Checkpoint: workload.CheckpointInterval{Buckets: tc.checkpoint},
				OnAction:   func(a executor.Action) { real = append(real, a) }})
			require.NoError(t, err)
			if tc.checkpoint > 0 {
				require.Positive(t, ep.InsideCheckpoints, "the loader paused for checkpoints")
			}

			cfg, err := predictConfig(st, plan, h, Engine{}, tc.prefetch, prof, false)
			require.NoError(t, err)
			assert.Equal(t, executor.Engine(tc.prefetch), cfg.System.Policy(false), "the model's policy is the engine's")
			var predicted []executor.Action
			cfg.OnAction = func(a executor.Action) { predicted = append(predicted, a) }
			_, err = sim.Run(cfg)
			require.NoError(t, err)

			require.NotEmpty(t, real)
			assert.Equal(t, real, predicted)
			// Every load is read and installed, every eviction written, every
			// resident partition flushed: the sequence is the whole epoch.
			kinds := map[executor.Kind]int{}
			for _, a := range real {
				kinds[a.Kind]++
			}
			flush := 0
			for _, p := range plan.FinalResident {
				if p != orderings.None {
					flush++
				}
			}
			assert.Equal(t, len(plan.Loads), kinds[executor.Read])
			assert.Equal(t, len(plan.Loads), kinds[executor.Install])
			assert.Equal(t, plan.Counts.Writes, kinds[executor.Write])
			assert.Equal(t, flush, kinds[executor.Flush])
		})
	}
}

// Interleaved runs every Plan once per round, in order, round after
// round, asking round for each round's profile first.
func TestInterleaved(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 1e9, 1e9, 1e9
	var plans []*orderings.Plan
	for _, o := range []string{"beta", "hilbert"} {
		pl, err := orderings.Build(o, st.M.P, 2, orderings.Belady, 1)
		require.NoError(t, err)
		plans = append(plans, pl)
	}
	var got []string
	err := Interleaved(st, plans, h, prof, CompareOptions{Epochs: 1, Repeats: 1, Prefetch: true, Seed: 1}, 2,
		func(rep int) (devices.Profile, error) {
			got = append(got, fmt.Sprintf("round %d", rep))
			p := prof
			p.Disk.Read = devices.Bandwidth(float64(rep+1) * 1e9)
			return p, nil
		},
		func(rep, i int, cmp Comparison, ep realrun.Epoch) error {
			got = append(got, fmt.Sprintf("%d %s", rep, cmp.Ordering))
			assert.Equal(t, plans[i].Ordering, cmp.Ordering)
			assert.NotEmpty(t, ep.Buckets)
			return nil
		})
	require.NoError(t, err)
	assert.Equal(t, []string{"round 0", "0 beta", "0 hilbert", "round 1", "1 beta", "1 hilbert"}, got)
}
