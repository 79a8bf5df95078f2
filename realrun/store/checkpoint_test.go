package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// commitEpoch commits checkpoint (e, k) holding every partition of the
// current one (linked) and a state file.
func commitEpoch(t *testing.T, s *Store, e, k int) {
	t.Helper()
	from := s.CurrentDir()
	sums, err := s.PartitionSums(from)
	require.NoError(t, err)
	dir, err := s.Begin(e, k)
	require.NoError(t, err)
	for p := 0; p < s.M.P; p++ {
		require.NoError(t, Link(from, dir, p))
	}
	if s.M.Resident > 0 {
		require.NoError(t, Link(from, dir, ResidentPart))
	}
	require.NoError(t, s.Commit(e, k, sums, map[string][]byte{"state.bin": {byte(e), byte(k)}}))
}

func names(t *testing.T, cs []Checkpoint) []string {
	t.Helper()
	var out []string
	for _, c := range cs {
		out = append(out, filepath.Base(c.Dir))
	}
	return out
}

// TestKeepCheckpoints: the Keep newest committed checkpoints stay, each
// complete and verifiable, the initial partitions counting as the first;
// older ones go only after a newer one is current; Tidy removes a partial
// checkpoint begun after the current one and what a crash left half
// deleted, and VerifyCheckpoint finds a flipped byte in a kept one.
func TestKeepCheckpoints(t *testing.T) {
	for _, keep := range []int{0, 1, 3} {
		s := build(t, filepath.Join(t.TempDir(), "w"))
		s.Keep = keep
		commitEpoch(t, s, 1, 0)
		commitEpoch(t, s, 1, 5)
		commitEpoch(t, s, 2, 0)
		commitEpoch(t, s, 3, 0)
		kept, err := s.Checkpoints()
		require.NoError(t, err)
		want := map[int][]string{0: {"ckpt-0002", "ckpt-0003"}, 1: {"ckpt-0003"}, 3: {"ckpt-0001+000005", "ckpt-0002", "ckpt-0003"}}[keep]
		assert.Equal(t, want, names(t, kept), "keep %d", keep)
		for _, c := range kept {
			assert.NoError(t, s.VerifyCheckpoint(c))
		}
		again, err := Open(s.Dir)
		require.NoError(t, err)
		assert.Equal(t, 3, again.Current, "CURRENT names the newest")
	}

	s := build(t, filepath.Join(t.TempDir(), "w"))
	commitEpoch(t, s, 1, 0)
	partial, err := s.Begin(2, 0) // a crash before its commit
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(s.Dir, ".deleting-ckpt-0000+000001"), 0o755))
	require.NoError(t, s.Tidy())
	assert.NoDirExists(t, partial)
	assert.NoDirExists(t, filepath.Join(s.Dir, ".deleting-ckpt-0000+000001"))
	kept, err := s.Checkpoints()
	require.NoError(t, err)
	assert.Equal(t, []string{"partitions", "ckpt-0001"}, names(t, kept))
	// Partitions are hard links: flip a byte in the state file instead.
	path := filepath.Join(s.CurrentDir(), "state.bin")
	require.NoError(t, os.Chmod(path, 0o644))
	require.NoError(t, os.WriteFile(path, []byte{9, 9}, 0o644))
	assert.ErrorIs(t, s.VerifyCheckpoint(kept[1]), ErrCorrupt)
	assert.NoError(t, s.VerifyCheckpoint(kept[0]))
	// Reset goes back to fresh initial partitions' directory.
	require.NoError(t, s.Reset())
	assert.Zero(t, s.Current)
	assert.DirExists(t, s.CheckpointDir(0, 0))
	assert.NoDirExists(t, filepath.Join(s.Dir, "ckpt-0001"))
}
