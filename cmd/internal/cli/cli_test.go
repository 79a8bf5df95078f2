package cli

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExit(t *testing.T) {
	var buf bytes.Buffer
	assert.Equal(t, 0, Exit(&buf, "x", nil))
	assert.Equal(t, 2, Exit(&buf, "x", Usagef("bad %s", "flag")))
	assert.Equal(t, 1, Exit(&buf, "x", errors.New("disk\nfull")))
	assert.Equal(t, "x: bad flag\nx: disk full\n", buf.String())
}

func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	n := fs.Int("n", 1, "")
	require.NoError(t, Parse(fs, []string{"--n", "3"}, io.Discard))
	assert.Equal(t, 3, *n)
	err := Parse(flag.NewFlagSet("t", flag.ContinueOnError), []string{"pos"}, io.Discard)
	var ue *UsageError
	assert.ErrorAs(t, err, &ue)
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.txt")
	require.NoError(t, WriteFileAtomic(path, func(w io.Writer) error { _, err := w.Write([]byte("ok")); return err }))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, "ok", string(got))
	err = WriteFileAtomic(path, func(w io.Writer) error { _, _ = w.Write([]byte("half")); return errors.New("boom") })
	assert.ErrorContains(t, err, "boom")
	got, _ = os.ReadFile(path)
	assert.Equal(t, "ok", string(got), "a failed write keeps the old file")
	entries, _ := os.ReadDir(dir)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestSplitListAndFormat(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, SplitList(" a,,b ,"))
	f, err := PickFormat(true, false)
	require.NoError(t, err)
	assert.Equal(t, JSON, f)
	_, err = PickFormat(true, true)
	assert.Error(t, err)
}
