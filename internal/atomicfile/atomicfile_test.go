package atomicfile

import (
	"errors"
	"io"
	"os"
	"path/filepath"
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
