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

// oneTypeStores builds the same random graph twice: untyped, and typed
// with a single partitioned entity type joined to itself by every
// relation (nodes a multiple of p, so that each partition has Rows rows).
func oneTypeStores(t *testing.T, nodes, edges, rels, p, d int, m workload.Model) (*store.Store, *store.Store) {
	t.Helper()
	nt := make([]uint16, nodes)
	rt := make([][2]int, rels)
	build := func(b *store.Builder) *store.Store {
		x := uint64(99)
		next := func(n int) int64 {
			x = x*6364136223846793005 + 1442695040888963407
			return int64((x >> 33) % uint64(n))
		}
		for k := 0; k < edges; k++ {
			sp := store.Train
			if k%10 == 0 {
				sp = store.Test
			}
			require.NoError(t, b.Add(next(nodes), next(rels), next(nodes), sp))
		}
		st, err := b.Finish(d, string(m), 0.1)
		require.NoError(t, err)
		return st
	}
	ub, err := store.NewBuilder(filepath.Join(t.TempDir(), "untyped"), "g", int64(nodes), rels, p, 5)
	require.NoError(t, err)
	tb, err := store.NewTypedBuilder(filepath.Join(t.TempDir(), "typed"), "g", []store.EntityType{{Name: "node", Partitioned: true, Nodes: int64(nodes)}}, nt, rels, rt, p, 5)
	require.NoError(t, err)
	return build(ub), build(tb)
}

// TestTypedOneTypeIsUntyped: a typed store of one partitioned type trains
// exactly as the untyped store of the same graph (the typed chunk path —
// its gather, shared negatives, ChunkGradSides and both duplicate rules —
// is the untyped one when every node is of one type), byte for byte, one
// worker.
func TestTypedOneTypeIsUntyped(t *testing.T) {
	for _, dup := range []realrun.Duplicates{realrun.DuplicatesEach, realrun.DuplicatesSum} {
		t.Run(string(dup), func(t *testing.T) {
			const p, d = 3, 8
			untyped, typed := oneTypeStores(t, 300, 6000, 3, p, d, workload.ComplEx)
			require.True(t, typed.M.Typed())
			require.Zero(t, typed.M.Resident)
			h := fixture.Hyper(workload.ComplEx, d)
			h.Workers, h.Batch, h.Negatives, h.Duplicates = 1, 400, 16, dup
			plan, err := orderings.Build("beta", p, 2, orderings.Belady, 0)
			require.NoError(t, err)
			train := func(st *store.Store) []byte {
				deg, err := st.Degrees()
				require.NoError(t, err)
				eng, err := cpu.Open(h, st, deg, 1)
				require.NoError(t, err)
				for e := 1; e <= 2; e++ {
					_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e})
					require.NoError(t, err)
					st, err = store.Open(st.Dir)
					require.NoError(t, err)
				}
				return finalState(t, st.Dir)
			}
			assert.Equal(t, train(untyped), train(typed))
		})
	}
}
