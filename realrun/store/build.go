package store

// The Builder, which makes a work directory from a stream of edges.

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/workload"
)

// Builder creates a work directory from a stream of edges: node ids are
// relabelled by a seeded permutation (so partitions are uniform random
// node sets, as PBG and Marius partition), training edges go to their
// bucket's file, the others to the split files. It builds in a temporary
// directory inside dir (made if need be), never beside it — dir's parent
// may be read-only, and dir holds its lock (LockFile), which must stay
// the same file: nothing of the new content is visible in dir until
// Finish moves it in, the manifest last.
type Builder struct {
	dir, tmp string
	created  bool // NewBuilder made dir
	m        Manifest
	perm     []int32
	degrees  []int32
	nodeType []uint16 // typed: the type of each relabelled node (nil: untyped)
	pending  [][]Edge // per bucket, flushed in blocks
	sums     []uint64 // per bucket, updated as blocks are flushed
	splits   [2]*bufio.Writer
	splitSum [2]hash.Hash32
	files    [2]*os.File
	edgeBuf  [edgeBytes]byte
}

const flushEdges = 4096

// NewBuilder starts building a work directory for a graph of the given
// size, partitioned into p.
func NewBuilder(dir, source string, nodes int64, relations, p int, seed int64) (*Builder, error) {
	if nodes < 1 || nodes > math.MaxInt32 {
		return nil, fmt.Errorf("%d nodes: want 1 to %d", nodes, int64(math.MaxInt32))
	}
	if p < 1 || int64(p) > nodes {
		return nil, fmt.Errorf("p = %d partitions for %d nodes", p, nodes)
	}
	if relations < 1 {
		relations = 1
	}
	m := Manifest{Version: Version, Source: source, Nodes: nodes, Relations: relations, P: p, Seed: seed, Rows: workload.PartitionRows(nodes, p)}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7065726d)) // "perm"
	perm := make([]int32, nodes)
	for i := range perm {
		perm[i] = int32(i)
	}
	rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
	return newBuilder(dir, m, perm)
}

// newBuilder makes the build directory inside dir for manifest m (its
// sizes set) and the relabelling perm.
func newBuilder(dir string, m Manifest, perm []int32) (*Builder, error) {
	dir = filepath.Clean(dir)
	_, statErr := os.Stat(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("work directory %s: %w", dir, err)
	}
	created := errors.Is(statErr, os.ErrNotExist)
	tmp, err := os.MkdirTemp(dir, buildPrefix+"*")
	if err != nil {
		if created {
			os.Remove(dir)
		}
		return nil, fmt.Errorf("work directory %s: %w", dir, err)
	}
	b := &Builder{dir: dir, tmp: tmp, created: created}
	for _, sub := range []string{"partitions", "buckets"} {
		if err := os.Mkdir(filepath.Join(tmp, sub), 0o755); err != nil {
			b.Abort()
			return nil, err
		}
	}
	p := m.P
	b.m = m
	b.m.Buckets = make([][]int64, p)
	for i := range b.m.Buckets {
		b.m.Buckets[i] = make([]int64, p)
	}
	b.perm = perm
	b.degrees = make([]int32, m.Nodes)
	b.pending = make([][]Edge, p*p)
	b.sums = make([]uint64, p*p)
	for k, name := range []string{"valid.bin", "test.bin"} {
		f, err := os.Create(filepath.Join(tmp, name))
		if err != nil {
			b.Abort()
			return nil, err
		}
		b.files[k] = f
		b.splitSum[k] = crc32.New(crcTable)
		b.splits[k] = bufio.NewWriterSize(io.MultiWriter(f, b.splitSum[k]), 1<<16)
	}
	return b, nil
}

// Add records one edge with original dense ids.
func (b *Builder) Add(src, rel, dst int64, sp Split) error {
	n := b.m.Nodes
	if src < 0 || src >= n || dst < 0 || dst >= n {
		return fmt.Errorf("edge (%d, %d): node id outside [0, %d)", src, dst, n)
	}
	if rel < 0 || rel >= int64(b.m.Relations) {
		return fmt.Errorf("edge (%d, %d): relation %d outside [0, %d)", src, dst, rel, b.m.Relations)
	}
	if b.nodeType != nil {
		if err := b.checkTypes(src, rel, dst); err != nil {
			return err
		}
	}
	e := Edge{b.perm[src], int32(rel), b.perm[dst]}
	switch sp {
	case Train:
		i, j := b.bucket(e)
		k := i*b.m.P + j
		b.pending[k] = append(b.pending[k], e)
		b.m.Buckets[i][j]++
		b.m.Train++
		b.degrees[e.Src]++
		b.degrees[e.Dst]++
		if len(b.pending[k]) >= flushEdges {
			return b.flushBucket(i, j)
		}
		return nil
	case Valid, Test:
		w := b.splits[sp-1]
		putEdge(b.edgeBuf[:], e)
		if _, err := w.Write(b.edgeBuf[:]); err != nil {
			return err
		}
		if sp == Valid {
			b.m.Valid++
		} else {
			b.m.Test++
		}
		return nil
	}
	return fmt.Errorf("unknown split %d", sp)
}

func putEdge(buf []byte, e Edge) {
	binary.LittleEndian.PutUint32(buf, uint32(e.Src))
	binary.LittleEndian.PutUint32(buf[4:], uint32(e.Rel))
	binary.LittleEndian.PutUint32(buf[8:], uint32(e.Dst))
}

func (b *Builder) flushBucket(i, j int) error {
	k := i*b.m.P + j
	if len(b.pending[k]) == 0 {
		return nil
	}
	f, err := os.OpenFile(filepath.Join(b.tmp, "buckets", bucketName(i, j)), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	data := make([]byte, len(b.pending[k])*edgeBytes)
	for n, e := range b.pending[k] {
		putEdge(data[n*edgeBytes:], e)
	}
	b.sums[k] = uint64(crc32.Update(uint32(b.sums[k]), crcTable, data))
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	b.pending[k] = b.pending[k][:0]
	return f.Close()
}

// Finish writes the partitions (initialised from the seed), degrees,
// histogram and manifest, and moves them into dir (moveIn). What dir
// held is replaced only if it is a previous tierflow work directory (it
// holds a manifest) or Unbuilt; anything else is an error.
func (b *Builder) Finish(dim int, model string, initScale float32) (*Store, error) {
	err := b.finish(dim, model, initScale)
	if err == nil && !IsWorkdir(b.dir) && !unbuilt(b.dir, filepath.Base(b.tmp)) {
		err = fmt.Errorf("work directory %s exists and is not a tierflow work directory; refusing to replace it", b.dir)
	}
	if err != nil {
		b.Abort()
		return nil, err
	}
	if err := b.moveIn(); err != nil {
		// The build directory stays: it marks dir as an unfinished
		// build, which the next build replaces.
		return nil, fmt.Errorf("work directory %s: %w", b.dir, err)
	}
	return Open(b.dir)
}

func (b *Builder) finish(dim int, model string, initScale float32) error {
	if dim < 1 {
		return fmt.Errorf("dimension %d: want at least 1", dim)
	}
	b.m.Dim, b.m.Model = dim, model
	b.m.DataBytes = b.m.Rows * int64(dim) * workload.BytesPerFloat * 2 // the rows and their Adagrad state, before padding
	b.m.PartitionBytes = (b.m.DataBytes + Align - 1) / Align * Align
	for i := 0; i < b.m.P; i++ {
		for j := 0; j < b.m.P; j++ {
			if err := b.flushBucket(i, j); err != nil {
				return err
			}
		}
	}
	b.m.Checksums = map[string]uint64{}
	for i := 0; i < b.m.P; i++ {
		for j := 0; j < b.m.P; j++ {
			if b.m.Buckets[i][j] > 0 {
				b.m.Checksums[filepath.Join("buckets", bucketName(i, j))] = b.sums[i*b.m.P+j]
			}
		}
	}
	for k, name := range []string{"valid.bin", "test.bin"} {
		if err := b.splits[k].Flush(); err != nil {
			return err
		}
		b.m.Checksums[name] = uint64(b.splitSum[k].Sum32())
		if err := b.files[k].Close(); err != nil {
			return err
		}
		b.files[k] = nil
	}
	perm := make([]byte, 4*len(b.perm))
	for i, v := range b.perm {
		binary.LittleEndian.PutUint32(perm[4*i:], uint32(v))
	}
	b.m.Checksums["perm.bin"] = Checksum(perm)
	if err := os.WriteFile(filepath.Join(b.tmp, "perm.bin"), perm, 0o644); err != nil {
		return err
	}
	if b.nodeType != nil {
		types := make([]byte, 2*len(b.nodeType))
		for i, t := range b.nodeType {
			binary.LittleEndian.PutUint16(types[2*i:], t)
		}
		b.m.Checksums[NodeTypesFile] = Checksum(types)
		if err := os.WriteFile(filepath.Join(b.tmp, NodeTypesFile), types, 0o644); err != nil {
			return err
		}
	}
	deg := make([]byte, 4*len(b.degrees))
	for i, d := range b.degrees {
		binary.LittleEndian.PutUint32(deg[4*i:], uint32(d))
	}
	b.m.Checksums["degrees.bin"] = Checksum(deg)
	if err := os.WriteFile(filepath.Join(b.tmp, "degrees.bin"), deg, 0o644); err != nil {
		return err
	}
	// The bucket histogram (workload.Histogram, the simulator's input):
	// the buckets and the graph's own sizes, so that simulate --edges
	// describes this graph.
	hist, err := json.Marshal(workload.Histogram{P: b.m.P, Edges: b.m.Buckets, Nodes: b.m.Nodes, Relations: b.m.Relations,
		Source: b.m.Source, ResidentNodes: b.m.Resident})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.tmp, "histogram.json"), hist, 0o644); err != nil {
		return err
	}
	s := &Store{Dir: b.tmp, M: b.m}
	if err := s.InitPartitions(b.m.Seed, initScale); err != nil {
		return err
	}
	man, err := json.MarshalIndent(b.m, "", " ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.tmp, "manifest.json"), man, 0o644); err != nil {
		return err
	}
	return nil
}

// moveIn replaces dir's content by the finished build's, keeping dir
// itself and its lock file: the old manifest goes first — from then on
// until the new one is in, dir is an unfinished build (Unbuilt: it holds
// the build directory), which the next build replaces —, then the rest
// of the old content, then the new entries, the manifest last.
func (b *Builder) moveIn() error {
	own := filepath.Base(b.tmp)
	if err := os.Remove(filepath.Join(b.dir, manifestFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	old, err := os.ReadDir(b.dir)
	if err != nil {
		return err
	}
	for _, e := range old { // earlier builds' leftovers too
		if e.Name() != LockFile && e.Name() != own {
			if err := os.RemoveAll(filepath.Join(b.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	built, err := os.ReadDir(b.tmp)
	if err != nil {
		return err
	}
	for _, e := range built {
		if e.Name() != manifestFile {
			if err := os.Rename(filepath.Join(b.tmp, e.Name()), filepath.Join(b.dir, e.Name())); err != nil {
				return err
			}
		}
	}
	if err := syncFile(b.dir); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(b.tmp, manifestFile), filepath.Join(b.dir, manifestFile)); err != nil {
		return err
	}
	if err := syncFile(b.dir); err != nil {
		return err
	}
	return os.Remove(b.tmp)
}

// SetInputs records the checksums of the input files (Manifest.Inputs).
func (b *Builder) SetInputs(sums map[string]uint64) { b.m.Inputs = sums }

// SetInputFormat records how the input files were read and what each
// held (Manifest.InputFormat, Manifest.InputFiles).
func (b *Builder) SetInputFormat(format map[string]string, files []InputFile) {
	b.m.InputFormat, b.m.InputFiles = format, files
}

// FileChecksum is the CRC-32C of a file's content, read in a stream.
func FileChecksum(path string) (uint64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	h := crc32.New(crcTable)
	if _, err := io.Copy(h, f); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return uint64(h.Sum32()), nil
}

// AddFile writes an extra file (such as the id table of an edge file)
// into the directory being built.
func (b *Builder) AddFile(name string, write func(io.Writer) error) error {
	f, err := os.Create(filepath.Join(b.tmp, filepath.Base(name)))
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(f)
	if err := write(bw); err != nil {
		f.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Abort removes the temporary directory; nothing is left behind.
func (b *Builder) Abort() {
	for _, f := range b.files {
		if f != nil {
			f.Close()
		}
	}
	os.RemoveAll(b.tmp)
	if b.created {
		os.Remove(b.dir) // only when empty: not when it holds a lock
	}
}
