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
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// finalState is every partition file and the engine state of a work
// directory's current checkpoint.
func finalState(t *testing.T, dir string) []byte {
	t.Helper()
	st, err := store.Open(dir)
	require.NoError(t, err)
	require.Positive(t, st.Current)
	var all []byte
	for i := 0; i < st.M.P; i++ {
		data, err := os.ReadFile(st.PartitionPath(i))
		require.NoError(t, err)
		all = append(all, data...)
	}
	state, err := st.ReadExtra(realrun.StateFile)
	require.NoError(t, err)
	return append(all, state...)
}

// TestStopAtEveryBucketResumesIdentically stops training at every bucket
// boundary of two epochs (a checkpoint inside the epoch each time), and
// resumes each time from the work directory alone, with a fresh engine:
// with one worker the final partitions and relation embeddings equal an
// uninterrupted run's byte for byte.
func TestStopAtEveryBucketResumesIdentically(t *testing.T) {
	const epochs = 2
	h := fixture.Hyper(workload.DistMult, 8)
	h.Workers = 1
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	run := func(st *store.Store, stop <-chan struct{}) (stops int) {
		deg, err := st.Degrees()
		require.NoError(t, err)
		for {
			st, err = store.Open(st.Dir)
			require.NoError(t, err)
			eng := cpu.New(h, st, deg, 1)
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
	ref := fixture.Prepare(t, "livejournal", 0.0005, 4, 8, workload.DistMult)
	run(ref, nil)
	got := fixture.Prepare(t, "livejournal", 0.0005, 4, 8, workload.DistMult)
	closed := make(chan struct{})
	close(closed)
	stops := run(got, closed)
	assert.Equal(t, epochs*(len(plan.Buckets)-1), stops, "one stop at every boundary inside an epoch")
	assert.Equal(t, finalState(t, ref.Dir), finalState(t, got.Dir), "stopped and resumed training differs from uninterrupted")
}

// TestCheckpointCost: checkpoints every 3 buckets are reported with the
// bytes they wrote (dirty resident partitions plus engine state), and the
// Plan's own bytes are unchanged by them.
func TestCheckpointCost(t *testing.T) {
	st := fixture.Prepare(t, "twitter", 0.0001, 6, 8, workload.DistMult)
	deg, err := st.Degrees()
	require.NoError(t, err)
	plan, err := orderings.Build("beta", 6, 3, orderings.Belady, 0)
	require.NoError(t, err)
	ep, err := realrun.RunEpoch(st, plan, cpu.New(fixture.Hyper(workload.DistMult, 8), st, deg, 1), realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1, Checkpoint: workload.CheckpointInterval{Buckets: 3}})
	require.NoError(t, err)
	require.Len(t, ep.Checkpoints, (len(plan.Buckets)-1)/3)
	state := int64(4 * 2 * st.M.Relations * 8)
	for _, c := range ep.Checkpoints {
		assert.Zero(t, c.Bucket%3)
		assert.GreaterOrEqual(t, c.Partitions, 1)
		assert.LessOrEqual(t, c.Partitions, plan.C)
		assert.Greater(t, c.Bytes, int64(c.Partitions)*st.M.PartitionBytes+state, "partitions, state and position")
		assert.Positive(t, c.Seconds)
	}
	assert.Equal(t, len(ep.Checkpoints), ep.InsideCheckpoints)
	assert.Equal(t, int64(ep.Loads)*st.M.PartitionBytes, ep.ReadBytes)
	assert.Equal(t, int64(ep.Writes+ep.FinalWrites)*st.M.PartitionBytes, ep.WriteBytes)
	entries, err := filepath.Glob(filepath.Join(st.Dir, "ckpt-*"))
	require.NoError(t, err)
	last := ep.Checkpoints[len(ep.Checkpoints)-1].Bucket
	assert.Equal(t, []string{st.CheckpointDir(0, last), st.CurrentDir()}, entries, "the two newest checkpoints are kept (store.DefaultKeep), older ones deleted")
	kept, err := st.Checkpoints()
	require.NoError(t, err)
	require.Len(t, kept, 2)
	for _, c := range kept {
		assert.NoError(t, st.VerifyCheckpoint(c), "each kept checkpoint is complete and verifies")
	}
}

func flipByte(t *testing.T, path string, at int64) {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[at%int64(len(data))] ^= 0x40
	require.NoError(t, os.WriteFile(path, data, 0o644))
}

// TestCorruptionIsDetected flips one byte in a bucket, a partition of the
// current checkpoint, the engine state and the position of a checkpoint
// inside an epoch: training and resuming refuse with ErrCorrupt naming
// the file, before training on the data.
func TestCorruptionIsDetected(t *testing.T) {
	h := fixture.Hyper(workload.DistMult, 8)
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	closed := make(chan struct{})
	close(closed)
	for _, tc := range []struct {
		name string
		file func(st *store.Store) string
	}{
		{"bucket", func(st *store.Store) string { return filepath.Join(st.Dir, "buckets", "bucket-0001-0002.bin") }},
		{"partition", func(st *store.Store) string { return st.PartitionPath(3) }},
		{"state", func(st *store.Store) string { return filepath.Join(st.CurrentDir(), realrun.StateFile) }},
		{"position", func(st *store.Store) string { return filepath.Join(st.CurrentDir(), realrun.PositionFile) }},
		{"test split", func(st *store.Store) string { return filepath.Join(st.Dir, "test.bin") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := fixture.Prepare(t, "livejournal", 0.0005, 4, 8, workload.DistMult)
			deg, err := st.Degrees()
			require.NoError(t, err)
			// A checkpoint inside epoch 1, after its first bucket.
			_, err = realrun.RunEpoch(st, plan, cpu.New(h, st, deg, 1), realrun.EpochOptions{Seed: 1, Epoch: 1, Stop: closed})
			var se *realrun.StopError
			require.ErrorAs(t, err, &se)
			path := tc.file(st)
			flipByte(t, path, 1000)
			eng := cpu.New(h, st, deg, 1)
			pos, err := realrun.Resume(st, eng)
			if err == nil {
				_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Seed: 1, Epoch: 1, From: pos})
				if err == nil {
					_, err = eval.Evaluate(st, workload.DistMult, eng.Relations(), deg, eval.DefaultEval)
				}
			}
			require.ErrorIs(t, err, store.ErrCorrupt)
			assert.Contains(t, err.Error(), filepath.Base(path))
		})
	}
}
