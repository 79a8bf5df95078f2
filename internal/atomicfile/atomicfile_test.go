package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, WriteBytes(path, []byte("ok")))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(got))
	err = Write(path, func(w io.Writer) error { _, _ = w.Write([]byte("half")); return errors.New("boom") })
	assert.ErrorContains(t, err, "boom")
	got, _ = os.ReadFile(path)
	assert.Equal(t, "ok", string(got), "a failed write keeps the old file")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left behind")
	assert.ErrorContains(t, WriteBytes(filepath.Join(dir, "missing", "x"), nil), "missing")
}

func TestCheckWritableAndAnnounce(t *testing.T) {
	dir := t.TempDir()
	assert.NoError(t, CheckWritable(filepath.Join(dir, "a.npy")))
	assert.ErrorContains(t, CheckWritable(filepath.Join(dir, "missing", "a.npy")), "missing")
	assert.ErrorContains(t, CheckWritable(dir), "is a directory")
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "the check leaves nothing behind")
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		require.NoError(t, os.Mkdir(ro, 0o500))
		assert.ErrorContains(t, CheckWritable(filepath.Join(ro, "x")), "cannot write")
	}
	require.NoError(t, WriteBytes(filepath.Join(dir, "emb.npy"), make([]byte, 41_200_000)))
	var b strings.Builder
	Announce(&b, filepath.Join(dir, "emb.npy"))
	assert.Equal(t, "wrote "+filepath.Join(dir, "emb.npy")+" (41.2 MB)\n", b.String())
}
