package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/workload"
)

func build(t *testing.T, dir string) *Store {
	t.Helper()
	b, err := NewBuilder(dir, "test", 100, 2, 4, 7)
	require.NoError(t, err)
	for k := int64(0); k < 1000; k++ {
		sp := Train
		if k%20 == 0 {
			sp = Valid
		} else if k%20 == 1 {
			sp = Test
		}
		require.NoError(t, b.Add(k%100, k%2, (k*7+3)%100, sp))
	}
	s, err := b.Finish(10, "dot", 0.1)
	require.NoError(t, err)
	return s
}

func TestBuildAndRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	s := build(t, dir)
	assert.Equal(t, int64(25), s.M.Rows)
	assert.Equal(t, int64(25*10*8), s.M.DataBytes)
	assert.Equal(t, int64(Align), s.M.PartitionBytes)
	assert.Equal(t, int64(900), s.M.Train)
	assert.Equal(t, int64(50), s.M.Valid)
	assert.Equal(t, int64(50), s.M.Test)
	var total int64
	for i := 0; i < 4; i++ {
		for j := 0; j < 4; j++ {
			edges, err := s.ReadBucket(i, j)
			require.NoError(t, err)
			require.Len(t, edges, int(s.M.Buckets[i][j]))
			for _, e := range edges {
				assert.Equal(t, i, int(int64(e.Src)/s.M.Rows))
				assert.Equal(t, j, int(int64(e.Dst)/s.M.Rows))
			}
			total += int64(len(edges))
		}
	}
	assert.Equal(t, s.M.Train, total)
	test, err := s.ReadSplit(Test)
	require.NoError(t, err)
	assert.Len(t, test, 50)
	deg, err := s.Degrees()
	require.NoError(t, err)
	var sum int64
	for _, d := range deg {
		sum += int64(d)
	}
	assert.Equal(t, 2*s.M.Train, sum)
	var hist struct {
		P     int       `json:"p"`
		Edges [][]int64 `json:"edges"`
	}
	data, err := os.ReadFile(s.HistogramPath())
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &hist))
	assert.Equal(t, s.M.Buckets, hist.Edges)
	entries, err := os.ReadDir(filepath.Dir(dir))
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary directory left")
}

func TestPartitionRoundTrip(t *testing.T) {
	s := build(t, filepath.Join(t.TempDir(), "work"))
	buf, err := s.NewBuffer()
	require.NoError(t, err)
	defer buf.Free()
	n, err := s.ReadPartition(2, buf)
	require.NoError(t, err)
	assert.Equal(t, s.M.PartitionBytes, n)
	f := buf.Floats()
	emb := f[:int(s.M.Rows)*s.M.Dim]
	for _, x := range emb {
		assert.LessOrEqual(t, x, float32(0.1))
		assert.GreaterOrEqual(t, x, float32(-0.1))
	}
	assert.Zero(t, f[int(s.M.Rows)*s.M.Dim], "Adagrad state starts at zero")
	f[0] = 42
	_, err = s.WritePartition(2, buf)
	require.NoError(t, err)
	other, err := s.NewBuffer()
	require.NoError(t, err)
	defer other.Free()
	_, err = s.ReadPartition(2, other)
	require.NoError(t, err)
	assert.Equal(t, float32(42), other.Floats()[0])
}

func procIO(t *testing.T) map[string]int64 {
	data, err := os.ReadFile("/proc/self/io")
	if err != nil {
		t.Skipf("no /proc/self/io: %v", err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, ": ")
		out[k], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// TestPageCacheBypassed reads a partition right after writing it: through
// the page cache that read would be served from memory and not count as
// device bytes; with O_DIRECT /proc/self/io's read_bytes grows by the
// partition size every time.
func TestPageCacheBypassed(t *testing.T) {
	if runtime.GOOS != "linux" || !DirectIO {
		t.Skip("O_DIRECT is only used on Linux")
	}
	b, err := NewBuilder(filepath.Join(t.TempDir(), "work"), "test", 1000, 1, 2, 1)
	require.NoError(t, err)
	require.NoError(t, b.Add(0, 0, 1, Train))
	s, err := b.Finish(256, "dot", 0.1) // 500 rows × 256 × 8 B ≈ 1 MB per partition
	require.NoError(t, err)
	buf, err := s.NewBuffer()
	require.NoError(t, err)
	defer buf.Free()
	for round := 0; round < 3; round++ {
		_, err = s.WritePartition(0, buf)
		require.NoError(t, err)
		before := procIO(t)
		_, err = s.ReadPartition(0, buf)
		require.NoError(t, err)
		after := procIO(t)
		assert.GreaterOrEqual(t, after["read_bytes"]-before["read_bytes"], s.M.PartitionBytes,
			"round %d: a read right after a write must still come from the device", round)
	}
}

func TestOpenRejectsOtherVersion(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	s := build(t, dir)
	s.M.Version = 99
	data, _ := json.Marshal(s.M)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "manifest.json"), data, 0o644))
	_, err := Open(dir)
	assert.ErrorContains(t, err, "format version 99")
}

func TestBuilderErrorsLeaveNothing(t *testing.T) {
	parent := t.TempDir()
	b, err := NewBuilder(filepath.Join(parent, "work"), "test", 10, 1, 2, 1)
	require.NoError(t, err)
	assert.Error(t, b.Add(10, 0, 1, Train))
	assert.Error(t, b.Add(1, 3, 1, Train))
	b.Abort()
	entries, _ := os.ReadDir(parent)
	assert.Empty(t, entries)
	// A directory that is not a work directory is never replaced.
	other := filepath.Join(parent, "mine")
	require.NoError(t, os.Mkdir(other, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644))
	b, err = NewBuilder(other, "test", 10, 1, 2, 1)
	require.NoError(t, err)
	_, err = b.Finish(4, "dot", 0.1)
	assert.ErrorContains(t, err, "not a tierflow work directory")
	assert.FileExists(t, filepath.Join(other, "notes.txt"))
	mine, _ := os.ReadDir(other)
	assert.Len(t, mine, 1, "the build's directory is gone")
	// An empty directory (made for the run) becomes the work directory.
	empty := filepath.Join(parent, "empty")
	require.NoError(t, os.Mkdir(empty, 0o755))
	b, err = NewBuilder(empty, "test", 10, 1, 2, 1)
	require.NoError(t, err)
	_, err = b.Finish(4, "dot", 0.1)
	require.NoError(t, err)
	assert.True(t, IsWorkdir(empty))
}

// TestBuildInPlace: a build fills its work directory in place, never
// beside it: the lock file stays the same file, the old content and an
// earlier build's leftovers go, and a directory an interrupted build
// left (no manifest, a build directory) is free to build into.
func TestBuildInPlace(t *testing.T) {
	parent := t.TempDir()
	dir := filepath.Join(parent, "work")
	build(t, dir)
	require.NoError(t, os.WriteFile(filepath.Join(dir, LockFile), []byte("1\n"), 0o644))
	lock, err := os.Stat(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	require.NoError(t, os.Mkdir(filepath.Join(dir, buildPrefix+"stale"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "old.bin"), nil, 0o644))
	build(t, dir)
	again, err := os.Stat(filepath.Join(dir, LockFile))
	require.NoError(t, err)
	assert.True(t, os.SameFile(lock, again), "the lock file is kept")
	assert.NoFileExists(t, filepath.Join(dir, "old.bin"))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.False(t, strings.HasPrefix(e.Name(), buildPrefix), "%s left", e.Name())
	}
	beside, err := os.ReadDir(parent)
	require.NoError(t, err)
	assert.Len(t, beside, 1, "nothing beside the work directory")

	// An interrupted swap: the manifest gone, a build directory there.
	require.NoError(t, os.Remove(filepath.Join(dir, manifestFile)))
	require.NoError(t, os.Mkdir(filepath.Join(dir, buildPrefix+"crashed"), 0o755))
	assert.False(t, IsWorkdir(dir))
	assert.True(t, Unbuilt(dir))
	s := build(t, dir)
	assert.True(t, IsWorkdir(dir))
	assert.Equal(t, int64(100), s.M.Nodes)
	// Without a build directory, such a folder is nobody's to replace.
	require.NoError(t, os.Remove(filepath.Join(dir, manifestFile)))
	assert.False(t, Unbuilt(dir))
}

func TestPermutation(t *testing.T) {
	s := build(t, filepath.Join(t.TempDir(), "work"))
	perm, err := s.Permutation()
	require.NoError(t, err)
	seen := map[int32]bool{}
	for _, v := range perm {
		seen[v] = true
	}
	assert.Len(t, seen, 100)
}

// BenchmarkChecksum is the CRC-32C every partition load is checked with,
// over a 20 MB partition (twitter at its default scale).
func BenchmarkChecksum(b *testing.B) {
	buf := make([]byte, 20<<20)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		Checksum(buf)
	}
}

// A partition file that no checkpoint links is overwritten in place (the
// same file, the new bytes); one a checkpoint links is replaced, and the
// checkpoint keeps the old bytes; a file of another size is replaced.
func TestWritePartitionOverwrite(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("link counts are read on Linux only; elsewhere every write replaces")
	}
	st := &Store{M: Manifest{PartitionBytes: 2 * Align}}
	fill := func(v byte) *Buffer {
		b, err := st.NewBuffer()
		require.NoError(t, err)
		t.Cleanup(func() { b.Free() })
		for i := range b.Bytes() {
			b.Bytes()[i] = v
		}
		return b
	}
	dir, kept := t.TempDir(), t.TempDir()
	path := PartitionIn(dir, 0)
	stat := func(p string) os.FileInfo {
		fi, err := os.Stat(p)
		require.NoError(t, err)
		return fi
	}
	content := func(p string) byte {
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		require.Len(t, b, 2*Align)
		return b[len(b)-1]
	}

	n, err := WritePartitionIn(dir, 0, fill(1))
	require.NoError(t, err)
	assert.EqualValues(t, 2*Align, n)
	// An open handle on the file sees what is written over it; a file
	// replaced leaves the handle on the old bytes (and, open, its inode
	// number cannot be reused by the new file).
	held := func() (last func() byte) {
		f, err := os.Open(path)
		require.NoError(t, err)
		t.Cleanup(func() { f.Close() })
		return func() byte {
			b := make([]byte, 1)
			_, err := f.ReadAt(b, 2*Align-1)
			require.NoError(t, err)
			return b[0]
		}
	}
	old := held()
	first := stat(path)
	_, err = WritePartitionIn(dir, 0, fill(2))
	require.NoError(t, err)
	assert.EqualValues(t, 2, old(), "no other name: overwritten in place")
	assert.True(t, os.SameFile(first, stat(path)))
	assert.EqualValues(t, 2, content(path))

	require.NoError(t, Link(dir, kept, 0))
	old = held()
	_, err = WritePartitionIn(dir, 0, fill(3))
	require.NoError(t, err)
	assert.EqualValues(t, 2, old(), "linked by a checkpoint: replaced")
	assert.False(t, os.SameFile(first, stat(path)))
	assert.EqualValues(t, 3, content(path))
	assert.EqualValues(t, 2, content(PartitionIn(kept, 0)), "the checkpoint keeps its bytes")

	require.NoError(t, os.WriteFile(path, []byte("short"), 0o644))
	_, err = WritePartitionIn(dir, 0, fill(4))
	require.NoError(t, err)
	assert.EqualValues(t, 4, content(path), "a file of another size: replaced")
}

// The work directory's histogram.json is the bucket histogram in the one
// format the simulator reads (workload.Histogram): it reads back with
// the manifest's buckets and the graph's sizes.
func TestHistogramFile(t *testing.T) {
	s := build(t, filepath.Join(t.TempDir(), "work"))
	f, err := os.Open(s.HistogramPath())
	require.NoError(t, err)
	defer f.Close()
	h, err := workload.ReadHistogram(f)
	require.NoError(t, err)
	assert.Equal(t, workload.Histogram{P: s.M.P, Edges: s.M.Buckets, Nodes: s.M.Nodes, Relations: s.M.Relations, Source: s.M.Source}, h)
	var total int64
	for _, row := range h.Edges {
		for _, n := range row {
			total += n
		}
	}
	assert.Equal(t, s.M.Train, total)
}
