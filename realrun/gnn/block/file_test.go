package block

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sampleBatches returns a few batches of different shapes.
func sampleBatches() []*Batch {
	g := randomGraph(120, 8, 11)
	rng := rand.New(rand.NewPCG(2, 2))
	return []*Batch{
		NewSampler(g, []int{3, 4}).Sample([]int32{1, 2, 3}, rng),
		NewSampler(g, []int{Full}).Sample([]int32{0, 119}, rng),
		NewSampler(g, []int{0, 0, 0}).Sample([]int32{5}, rng),
		NewSampler(g, []int{2, 2}).Sample(nil, rng),
	}
}

func encode(t testing.TB, bs []*Batch) []byte {
	var buf bytes.Buffer
	require.NoError(t, WriteBatches(&buf, bs))
	return buf.Bytes()
}

// normal makes nil and empty slices compare equal.
func normal(bs []*Batch) []*Batch {
	for _, b := range bs {
		for l := range b.Blocks {
			blk := &b.Blocks[l]
			for _, s := range []*[]int32{&blk.Src, &blk.Ptr, &blk.Nbr} {
				if len(*s) == 0 {
					*s = nil
				}
			}
		}
	}
	return bs
}

func TestFileRoundTrip(t *testing.T) {
	bs := sampleBatches()
	data := encode(t, bs)
	got, err := ReadBatches(bytes.NewReader(data))
	require.NoError(t, err)
	assert.Equal(t, normal(bs), normal(got))

	// The header is exactly the spec's.
	assert.Equal(t, "TFGNNBLK", string(data[:8]))
	assert.Equal(t, uint32(1), binary.LittleEndian.Uint32(data[8:]))
	assert.Equal(t, uint32(len(bs)), binary.LittleEndian.Uint32(data[12:]))
	// First batch: block count, then block 0's numSrc, numDst, numEdges, Src[0].
	b0 := &bs[0].Blocks[0]
	assert.Equal(t, uint32(2), binary.LittleEndian.Uint32(data[16:]))
	assert.Equal(t, uint32(len(b0.Src)), binary.LittleEndian.Uint32(data[20:]))
	assert.Equal(t, uint32(b0.NumDst), binary.LittleEndian.Uint32(data[24:]))
	assert.Equal(t, uint32(len(b0.Nbr)), binary.LittleEndian.Uint32(data[28:]))
	assert.Equal(t, uint32(b0.Src[0]), binary.LittleEndian.Uint32(data[32:]))
	size := 16
	for _, b := range bs {
		size += 4
		for _, blk := range b.Blocks {
			size += 12 + 4*(len(blk.Src)+len(blk.Ptr)+len(blk.Nbr))
		}
	}
	assert.Len(t, data, size)

	// Empty file of zero batches.
	got, err = ReadBatches(bytes.NewReader(encode(t, nil)))
	require.NoError(t, err)
	assert.Empty(t, got)

	// Through a file.
	path := filepath.Join(t.TempDir(), EpochFile(1))
	assert.Equal(t, "epoch-0001.blocks", filepath.Base(path))
	require.NoError(t, WriteFile(path, bs))
	got, err = ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, normal(bs), normal(got))
}

func TestWriterRefuses(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, 1)
	require.NoError(t, err)
	assert.ErrorContains(t, w.Write(&Batch{Blocks: []Block{{Src: []int32{1}, NumDst: 2, Ptr: []int32{0, 0, 0}}}}), "malformed")
	w, _ = NewWriter(&buf, 1)
	assert.ErrorContains(t, w.Close(), "0 batches written, 1 announced")
	w, _ = NewWriter(&buf, 0)
	assert.ErrorContains(t, w.Write(sampleBatches()[0]), "beyond")
}

// put overwrites the uint32 at byte off.
func put(data []byte, off int, v uint32) []byte {
	d := append([]byte(nil), data...)
	binary.LittleEndian.PutUint32(d[off:], v)
	return d
}

func TestReadBatchesBad(t *testing.T) {
	// One batch of two blocks: block 0 has sources 10 20 30 (2
	// destinations), edges 0←2, 1←0; block 1 has sources 10 20 (1
	// destination), edge 0←1.
	good := encode(t, []*Batch{{Blocks: []Block{
		{Src: []int32{10, 20, 30}, NumDst: 2, Ptr: []int32{0, 1, 2}, Nbr: []int32{2, 0}},
		{Src: []int32{10, 20}, NumDst: 1, Ptr: []int32{0, 1}, Nbr: []int32{1}},
	}}})
	_, err := ReadBatches(bytes.NewReader(good))
	require.NoError(t, err)
	// Offsets: 16 block count; block 0 at 20: numSrc 20, numDst 24,
	// numEdges 28, Src 32..43, Ptr 44..55, Nbr 56..63; block 1 at 64:
	// numSrc 64, numDst 68, numEdges 72, Src 76..83, Ptr 84..91, Nbr 92.
	cases := []struct {
		name, want string
		data       []byte
	}{
		{"wrong magic", "magic", append([]byte("TFGNNBLX"), good[8:]...)},
		{"wrong version", "version 2", put(good, 8, 2)},
		{"more batches announced", "truncated", put(good, 12, 2)},
		{"huge batch count", "truncated", put(good, 12, 0xffffffff)},
		{"no blocks", "no blocks", put(good, 16, 0)},
		{"huge block count", "truncated", put(good, 16, 1<<30)},
		{"numDst > numSrc", "numDst 4 > numSrc 3", put(good, 24, 4)},
		{"numSrc over int32", "numSrc 2147483648", put(good, 20, 1<<31)},
		{"numEdges over int32", "numEdges 4294967295", put(good, 28, 0xffffffff)},
		{"lying numSrc", "truncated", put(good, 20, 1<<31-1)},
		{"negative source", "Src[1] = -1", put(good, 36, 0xffffffff)},
		{"Ptr[0] not 0", "Ptr[0] = 1", put(good, 44, 1)},
		{"Ptr decreases", "Ptr[2] = 0 < Ptr[1] = 1", put(good, 52, 0)},
		{"Ptr past numEdges", "numEdges is 2", put(put(good, 48, 2), 52, 3)},
		{"Nbr past numSrc", "Nbr[0] = 3, outside", put(good, 56, 3)},
		{"negative Nbr", "Nbr[1] = -5, outside", put(good, 60, uint32(0xfffffffb))},
		{"own neighbour", "destination 1 is its own neighbour", put(good, 60, 1)},
		{"chain: count", "numSrc 1, but block 0 has 2 destinations", append(put(good, 64, 1)[:80:80], good[84:]...)},
		{"chain: ids", "Src[1] = 21, but block 0's destination 1 is 20", put(good, 80, 21)},
		{"trailing data", "data after", append(append([]byte(nil), good...), 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadBatches(bytes.NewReader(c.data))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
	for n := 0; n < len(good); n++ {
		_, err := ReadBatches(bytes.NewReader(good[:n]))
		assert.Error(t, err, "prefix of %d bytes", n)
	}
}

// TestReadBatchesLyingHeaderMemory: a 32-byte file claiming 2³¹-1 sources
// allocates a bounded amount, not 8 GiB.
func TestReadBatchesLyingHeaderMemory(t *testing.T) {
	data := put(put(encode(t, sampleBatches()[:1]), 20, 1<<31-1), 24, 0)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadBatches(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "truncated")
	assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(2<<20))
}

func FuzzReadBatches(f *testing.F) {
	for _, bs := range [][]*Batch{nil, sampleBatches(), sampleBatches()[:1]} {
		f.Add(encode(f, bs))
	}
	f.Add([]byte("TFGNNBLK\x01\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		bs, err := ReadBatches(bytes.NewReader(data))
		if err != nil {
			return
		}
		// What reads back is consistent, and writes back to the same bytes.
		for _, b := range bs {
			for l, blk := range b.Blocks {
				require.Len(t, blk.Ptr, blk.NumDst+1)
				require.Equal(t, len(blk.Nbr), int(blk.Ptr[blk.NumDst]))
				for _, j := range blk.Nbr {
					require.True(t, j >= 0 && int(j) < len(blk.Src))
				}
				if l > 0 {
					require.Equal(t, b.Blocks[l-1].Src[:b.Blocks[l-1].NumDst], blk.Src)
				}
			}
		}
		assert.Equal(t, data, encode(t, bs))
	})
}
