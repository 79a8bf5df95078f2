package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBestCheckpoint: the copy of the best epoch's checkpoint shares its
// files, outlives pruning to one checkpoint, is found through best.json
// only once named there, replaces the copy before it, and a View reads
// it; Tidy removes copies best.json does not name (a stale one, a
// partial one a crash left), and Reset drops it with the checkpoints.
func TestBestCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name string
		keep int
	}{{"keep one checkpoint", 1}, {"keep two", 2}} {
		t.Run(tc.name, func(t *testing.T) {
			s := build(t, filepath.Join(t.TempDir(), "w"))
			s.Keep = tc.keep
			_, _, err := s.BestCheckpoint()
			require.ErrorIs(t, err, ErrNoBest, "none kept yet")

			commitEpoch(t, s, 1, 0)
			name, err := s.CopyBest()
			require.NoError(t, err)
			assert.Equal(t, "best-0001", name)
			_, _, err = s.BestCheckpoint()
			require.ErrorIs(t, err, ErrNoBest, "a copy is the best only once best.json names it")
			require.NoError(t, s.WriteBest(Best{Metric: "valid_mrr", Epoch: 1, Value: 0.5, Dir: name, History: []Validated{{1, 0.5}}}))

			commitEpoch(t, s, 2, 0)
			commitEpoch(t, s, 3, 0)
			c, b, err := s.BestCheckpoint()
			require.NoError(t, err)
			assert.Equal(t, 1, c.Epoch)
			assert.Equal(t, 0.5, b.Value)
			assert.NoDirExists(t, s.CheckpointDir(1, 0), "ckpt-0001 pruned")
			v := s.View(c)
			assert.Equal(t, c.Dir, v.CurrentDir())
			assert.Equal(t, 3, s.Current, "the store itself is unchanged")
			state, err := v.ReadExtra("state.bin")
			require.NoError(t, err)
			assert.Equal(t, []byte{1, 0}, state, "the view reads epoch 1's files")
			require.NoError(t, s.VerifyCheckpoint(c))

			// Epoch 3 becomes the best: its copy, then the record, then
			// the old copy goes.
			name, err = s.CopyBest()
			require.NoError(t, err)
			require.NoError(t, os.Mkdir(filepath.Join(s.Dir, "best-0002.tmp"), 0o755)) // a crash's leftover
			require.NoError(t, s.Tidy())
			assert.DirExists(t, filepath.Join(s.Dir, "best-0001"), "still named by best.json")
			assert.NoDirExists(t, filepath.Join(s.Dir, "best-0003"), "not named: a crash before the record was written")
			assert.NoDirExists(t, filepath.Join(s.Dir, "best-0002.tmp"))
			name, err = s.CopyBest()
			require.NoError(t, err)
			require.NoError(t, s.WriteBest(Best{Metric: "valid_mrr", Epoch: 3, Value: 0.7, Dir: name}))
			require.NoError(t, s.TidyBest())
			assert.NoDirExists(t, filepath.Join(s.Dir, "best-0001"))
			c, _, err = s.BestCheckpoint()
			require.NoError(t, err)
			assert.Equal(t, 3, c.Epoch)
			_, err = s.CopyBest()
			assert.ErrorContains(t, err, "already named", "a named copy is never written over")

			require.NoError(t, s.Reset())
			_, ok, err := s.ReadBest()
			require.NoError(t, err)
			assert.False(t, ok)
			assert.NoDirExists(t, filepath.Join(s.Dir, "best-0003"))
		})
	}
}

// TestCopyBestRefusesInsideEpoch: only an epoch's checkpoint is a best.
func TestCopyBestRefusesInsideEpoch(t *testing.T) {
	s := build(t, filepath.Join(t.TempDir(), "w"))
	_, err := s.CopyBest()
	assert.ErrorContains(t, err, "not an epoch's")
	commitEpoch(t, s, 0, 4)
	_, err = s.CopyBest()
	assert.ErrorContains(t, err, "not an epoch's")
}
