package realrun_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// residentTable is the current checkpoint's resident.bin.
func residentTable(t *testing.T, st *store.Store) []byte {
	t.Helper()
	data, err := os.ReadFile(st.ResidentPath())
	require.NoError(t, err)
	return data
}

// TestTypedTrainsOnCPU: a two-type graph (users partitioned, items
// resident; user → item and user → user) trains on the CPU engine for a
// few epochs with both duplicate rules and several models: the loss per
// edge decreases, the resident table is trained and checkpointed with
// every epoch, and the epoch's bytes are the Plan's partitions plus the
// resident table read once and written once.
func TestTypedTrainsOnCPU(t *testing.T) {
	for _, tc := range []struct {
		model workload.Model
		dup   realrun.Duplicates
		obj   workload.Objective
	}{
		{workload.DistMult, realrun.DuplicatesEach, workload.Objective{}},
		{workload.DistMult, realrun.DuplicatesSum, workload.Objective{}},
		{workload.TransEL2, realrun.DuplicatesEach, workload.Objective{Loss: workload.Ranking, Margin: 1}},
		{workload.ComplEx, realrun.DuplicatesSum, workload.Objective{Loss: workload.Logistic}},
	} {
		t.Run(string(tc.model)+"/"+string(tc.dup), func(t *testing.T) {
			const d = 16
			st := fixture.PrepareTyped(t, 400, 100, 12000, 2, d, tc.model)
			require.True(t, st.M.Typed())
			require.Positive(t, st.M.Resident)
			deg, err := st.Degrees()
			require.NoError(t, err)
			h := fixture.Hyper(tc.model, d)
			h.Duplicates, h.Objective = tc.dup, tc.obj
			h.Batch, h.Negatives = 500, 20
			eng, err := cpu.Open(h, st, deg, 1)
			require.NoError(t, err)
			plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
			require.NoError(t, err)
			before := residentTable(t, st)
			var losses []float64
			for e := 1; e <= 5; e++ {
				ep, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e})
				require.NoError(t, err)
				losses = append(losses, ep.LossPerEdge)
				assert.Equal(t, st.M.ResidentBytes(), ep.ResidentBytes)
				assert.Equal(t, int64(ep.Loads)*st.M.PartitionBytes+st.M.ResidentBytes(), ep.ReadBytes, "partitions loaded and the resident table once")
				assert.Equal(t, int64(ep.Writes+ep.FinalWrites)*st.M.PartitionBytes+st.M.ResidentBytes(), ep.WriteBytes, "partitions written and the resident table once")
				st, err = store.Open(st.Dir)
				require.NoError(t, err)
				require.Equal(t, e, st.Current)
			}
			t.Logf("loss per edge by epoch: %.4f", losses)
			for _, l := range losses {
				require.False(t, l != l, "NaN loss")
			}
			assert.Less(t, losses[len(losses)-1], 0.9*losses[0], "the loss decreases")
			after := residentTable(t, st)
			assert.Len(t, after, len(before))
			assert.NotEqual(t, before, after, "the resident table was trained and written")
			kept, err := st.Checkpoints()
			require.NoError(t, err)
			for _, c := range kept {
				assert.NoError(t, st.VerifyCheckpoint(c))
			}
		})
	}
}

// typedFinalState is every partition, the resident table and the engine
// state of a typed work directory's current checkpoint.
func typedFinalState(t *testing.T, dir string) []byte {
	t.Helper()
	st, err := store.Open(dir)
	require.NoError(t, err)
	return append(finalState(t, dir), residentTable(t, st)...)
}

// TestTypedStopResumesIdentically: training a typed graph stopped at
// every bucket boundary of two epochs (a checkpoint inside the epoch
// each time, with the resident table) and resumed from the work
// directory alone with a fresh engine ends with the same partitions,
// resident table and relations as an uninterrupted run, byte for byte
// (one worker).
func TestTypedStopResumesIdentically(t *testing.T) {
	const epochs = 2
	h := fixture.Hyper(workload.DistMult, 8)
	h.Workers, h.Batch, h.Negatives = 1, 300, 10
	plan, err := orderings.Build("beta", 3, 2, orderings.Belady, 0)
	require.NoError(t, err)
	run := func(st *store.Store, stop <-chan struct{}) (stops int) {
		deg, err := st.Degrees()
		require.NoError(t, err)
		for {
			st, err = store.Open(st.Dir)
			require.NoError(t, err)
			eng, err := cpu.Open(h, st, deg, 1)
			require.NoError(t, err)
			pos, err := realrun.Resume(st, eng)
			require.NoError(t, err)
			for e := st.Current + 1; e <= epochs; e++ {
				_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e, Stop: stop, From: pos})
				pos = nil
				var se *realrun.StopError
				if errors.As(err, &se) {
					break
				}
				require.NoError(t, err)
			}
			if err == nil {
				return stops
			}
			stops++
		}
	}
	ref := fixture.PrepareTyped(t, 120, 30, 3000, 3, 8, workload.DistMult)
	run(ref, nil)
	got := fixture.PrepareTyped(t, 120, 30, 3000, 3, 8, workload.DistMult)
	closed := make(chan struct{})
	close(closed)
	stops := run(got, closed)
	assert.Equal(t, epochs*(len(plan.Buckets)-1), stops)
	assert.Equal(t, typedFinalState(t, ref.Dir), typedFinalState(t, got.Dir), "stopped and resumed typed training differs from uninterrupted")
}

// TestTypedResidentCorruptionIsDetected: a flipped byte in the resident
// table of the current checkpoint is refused (ErrCorrupt naming
// resident.bin) before training.
func TestTypedResidentCorruptionIsDetected(t *testing.T) {
	st := fixture.PrepareTyped(t, 120, 30, 3000, 2, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := fixture.Hyper(workload.DistMult, 8)
	plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
	require.NoError(t, err)
	_, err = realrun.RunEpoch(st, plan, cpu.New(h, st, deg, 1), realrun.EpochOptions{Seed: 1, Epoch: 1})
	require.NoError(t, err)
	st, err = store.Open(st.Dir)
	require.NoError(t, err)
	flipByte(t, st.ResidentPath(), 100)
	eng := cpu.New(h, st, deg, 1)
	_, err = realrun.Resume(st, eng)
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), store.ResidentFile)
	_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Seed: 1, Epoch: 2})
	require.ErrorIs(t, err, store.ErrCorrupt)
	assert.Contains(t, err.Error(), filepath.Base(st.ResidentPath()))
}
