// Package store is the real engine's on-disk layout: one file per node
// partition (float32 embeddings followed by their Adagrad state, padded to
// the I/O alignment and read and written with O_DIRECT), one binary file
// per edge bucket, the validation and test splits, node degrees, a bucket
// histogram the simulator reads, and a JSON manifest.
package store

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
	"strings"
	"unsafe"

	"github.com/tierflow/tierflow/workload"
)

// Version is the on-disk format version; Open refuses any other. Version
// 2 added checksums of every data file (Manifest.Checksums) and of every
// checkpoint file (checksums.json), and checkpoints inside an epoch;
// version 3 computes them as CRC-32C (Checksum) instead of CRC-64.
const Version = 3

// ErrVersion is wrapped by Open when the manifest has another version.
var ErrVersion = errors.New("format version mismatch")

// Align is the I/O alignment of partition files and buffers.
const Align = 4096

// Edge is one edge with dense (relabelled) node ids.
type Edge struct{ Src, Rel, Dst int32 }

const edgeBytes = 12

// Manifest describes a work directory.
type Manifest struct {
	Version   int    `json:"version"`
	Source    string `json:"source"`
	Nodes     int64  `json:"nodes"`
	Relations int    `json:"relations"`
	P         int    `json:"p"`
	Dim       int    `json:"dim"`
	Model     string `json:"model"`
	Seed      int64  `json:"seed"`
	// Rows is the number of node rows per partition, ceil(PartitionedNodes/P);
	// node n (after relabelling) below PartitionedNodes lives in partition
	// n / Rows.
	Rows int64 `json:"rows"`
	// Types are a typed graph's entity types (nil: one untyped set of
	// nodes, every one partitioned); node n's type is entry n of
	// node-types.bin (NodeTypes).
	Types []EntityType `json:"types,omitempty"`
	// Resident is the number of nodes of the unpartitioned types: the
	// relabelled ids [Nodes−Resident, Nodes), whose rows (resident row
	// n − (Nodes−Resident)) are resident.bin of every checkpoint, held in
	// memory for the whole run.
	Resident int64 `json:"resident,omitempty"`
	// RelationTypes are, for each relation id of a typed graph, the type
	// indexes of its source and destination (lhs, rhs).
	RelationTypes [][2]int `json:"relation_types,omitempty"`
	// DataBytes is Rows·Dim·4·2 (embeddings and Adagrad state);
	// PartitionBytes is the file size, DataBytes rounded up to Align.
	DataBytes      int64 `json:"data_bytes"`
	PartitionBytes int64 `json:"partition_bytes"`
	Train          int64 `json:"train_edges"`
	Valid          int64 `json:"valid_edges"`
	Test           int64 `json:"test_edges"`
	// Buckets are the training edges per bucket, Buckets[src][dst]; a
	// typed graph's edge with a resident end is in the diagonal bucket of
	// its other end's partition, one with two resident ends in (k, k), k
	// its index among the training edges mod P (NewTypedBuilder).
	Buckets [][]int64 `json:"buckets"`
	// Checksums are the CRC-32C of every bucket, split, degree and
	// permutation file, by path relative to the work directory; every
	// read checks them.
	Checksums map[string]uint64 `json:"checksums"`
	// Inputs are the CRC-32C of the edge files the directory was built
	// from, by path: a work directory is reused (and resumed) only for
	// the same input.
	Inputs map[string]uint64 `json:"inputs,omitempty"`
	// InputFormat is how the edge files were read, by flag (--delimiter,
	// --header, --columns, --unseen), and InputFiles what was found in
	// each: a directory is reused only for the same InputFormat.
	InputFormat map[string]string `json:"input_format,omitempty"`
	InputFiles  []InputFile       `json:"input_files,omitempty"`
}

// EntityType is one entity type of a typed work directory.
type EntityType struct {
	Name string `json:"name"`
	// Partitioned types are split into the P partitions; the others are
	// resident.
	Partitioned bool  `json:"partitioned"`
	Nodes       int64 `json:"nodes"`
}

// Typed reports whether the graph has entity types.
func (m Manifest) Typed() bool { return len(m.Types) > 0 }

// PartitionedNodes are the nodes in the partitions, ids [0,
// PartitionedNodes); the rest are resident.
func (m Manifest) PartitionedNodes() int64 { return m.Nodes - m.Resident }

// IsResident reports whether relabelled node n is a resident type's.
func (m Manifest) IsResident(n int64) bool { return n >= m.Nodes-m.Resident }

// MeanBucket is the mean training edges of one of the p² buckets (0 when
// the training edges are not known).
func (m Manifest) MeanBucket() int64 {
	if m.P <= 0 || m.Train <= 0 {
		return 0
	}
	b := int64(m.P) * int64(m.P)
	return (m.Train + b - 1) / b
}

// InputFile is what the build found in one edge file.
type InputFile struct {
	// Path is the file as given, Split "train", "valid" or "test" (or
	// "all" for a file split 90/5/5).
	Path  string `json:"path"`
	Split string `json:"split"`
	// Delimiter is how its fields were split (tab, comma or space),
	// Header its header line's fields (none: nil), Columns the columns
	// read, counted from 1 (src,rel,dst or src,dst).
	Delimiter string   `json:"delimiter"`
	Header    []string `json:"header,omitempty"`
	Columns   []int    `json:"columns"`
	// Edges are the edges kept; SkippedUnseenNode and
	// SkippedUnseenRelation the edges left out because a node, or else
	// their relation, is not in the training edges.
	Edges                 int64 `json:"edges"`
	SkippedUnseenNode     int64 `json:"skipped_unseen_node"`
	SkippedUnseenRelation int64 `json:"skipped_unseen_relation"`
}

// Split is the part of the data an edge belongs to.
type Split int

// The splits.
const (
	Train Split = iota
	Valid
	Test
)

// Store is an opened work directory.
type Store struct {
	Dir string
	M   Manifest
	// Current is the number of complete epochs in the current checkpoint
	// (0: the initial partitions) and Bucket the buckets of epoch
	// Current+1 it also holds (0: an epoch checkpoint); every read of
	// "the" partitions reads this checkpoint.
	Current, Bucket int
	// Keep is how many committed checkpoints are kept, the current one
	// included, as PyTorch-BigGraph keeps its last versions (0:
	// DefaultKeep); older ones are deleted only after a newer one is
	// durable.
	Keep int
	// view, when not "", is the directory of the checkpoint a read-only
	// View reads instead of CheckpointDir(Current, Bucket).
	view string
}

// partName is partition i's file name; ResidentPart names the resident
// table's, resident.bin.
func partName(i int) string {
	if i == ResidentPart {
		return ResidentFile
	}
	return fmt.Sprintf("part-%04d.bin", i)
}
func bucketName(i, j int) string { return fmt.Sprintf("bucket-%04d-%04d.bin", i, j) }

// PartitionPath is the file of partition i in the current checkpoint.
func (s *Store) PartitionPath(i int) string { return PartitionIn(s.CurrentDir(), i) }

// PartitionIn is the file of partition i in a checkpoint directory.
func PartitionIn(dir string, i int) string { return filepath.Join(dir, partName(i)) }

// CurrentDir is the current checkpoint's directory.
func (s *Store) CurrentDir() string {
	if s.view != "" {
		return s.view
	}
	return s.CheckpointDir(s.Current, s.Bucket)
}

// CheckpointDir is the directory of the checkpoint after epoch e and k
// buckets of epoch e+1: partitions/ for (0, 0), ckpt-EEEE after a whole
// epoch, ckpt-EEEE+KKKKKK inside one.
func (s *Store) CheckpointDir(e, k int) string {
	switch {
	case e == 0 && k == 0:
		return filepath.Join(s.Dir, "partitions")
	case k == 0:
		return filepath.Join(s.Dir, fmt.Sprintf("ckpt-%04d", e))
	}
	return filepath.Join(s.Dir, fmt.Sprintf("ckpt-%04d+%06d", e, k))
}

// Open reads and checks the manifest of a work directory.
func Open(dir string) (*Store, error) {
	data, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		return nil, fmt.Errorf("work directory %s: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("work directory %s: manifest: %w", dir, err)
	}
	if m.Version != Version {
		return nil, fmt.Errorf("work directory %s: manifest format version %d, this build reads version %d: %w", dir, m.Version, Version, ErrVersion)
	}
	if m.P < 1 || m.Dim < 1 || m.Rows < 1 || len(m.Buckets) != m.P {
		return nil, fmt.Errorf("work directory %s: manifest is inconsistent (p=%d, d=%d, rows=%d)", dir, m.P, m.Dim, m.Rows)
	}
	if err := m.checkTypes(); err != nil {
		return nil, fmt.Errorf("work directory %s: manifest is inconsistent: %w", dir, err)
	}
	st := &Store{Dir: dir, M: m}
	if data, err := os.ReadFile(filepath.Join(dir, "CURRENT")); err == nil {
		e, k, err := parseCurrent(strings.TrimSpace(string(data)))
		if err != nil {
			return nil, fmt.Errorf("work directory %s: CURRENT holds %q, not a checkpoint (EPOCH or EPOCH+BUCKETS)", dir, data)
		}
		st.Current, st.Bucket = e, k
	}
	return st, nil
}

// Buffer is page-aligned memory for one partition, as O_DIRECT needs.
type Buffer struct {
	b        []byte
	borrowed bool
}

// NewBuffer allocates an aligned buffer of the store's partition size.
func (s *Store) NewBuffer() (*Buffer, error) {
	b, err := alignedBuffer(int(s.M.PartitionBytes))
	if err != nil {
		return nil, fmt.Errorf("allocate %d-byte partition buffer: %w", s.M.PartitionBytes, err)
	}
	return &Buffer{b: b}, nil
}

// BufferOf wraps float32s already in memory as a Buffer (for in-memory
// benchmarks; it cannot be used for O_DIRECT I/O unless aligned).
func BufferOf(f []float32) *Buffer {
	return &Buffer{b: unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), 4*len(f)), borrowed: true}
}

// OpenDirect opens a file for O_DIRECT I/O where the platform has it.
func OpenDirect(path string, flag int) (*os.File, error) { return openDirect(path, flag) }

// Free releases the buffer's memory.
func (b *Buffer) Free() error {
	if b.b == nil || b.borrowed {
		b.b = nil
		return nil
	}
	err := freeBuffer(b.b)
	b.b = nil
	return err
}

// Floats views the buffer as float32: the first rows·d are the
// embeddings, the next rows·d the Adagrad state.
func (b *Buffer) Floats() []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b.b))), len(b.b)/4)
}

// Bytes is the raw buffer.
func (b *Buffer) Bytes() []byte { return b.b }

// ReadPartition reads partition i of the current checkpoint into buf with
// O_DIRECT and returns the bytes read from the device (unchecked: see
// ReadPartitionChecked).
func (s *Store) ReadPartition(i int, buf *Buffer) (int64, error) {
	return ReadPartitionIn(s.CurrentDir(), i, buf)
}

// ReadPartitionIn reads partition i of checkpoint directory dir.
func ReadPartitionIn(dir string, i int, buf *Buffer) (int64, error) {
	f, err := openDirect(PartitionIn(dir, i), os.O_RDONLY)
	if err != nil {
		return 0, fmt.Errorf("read %s: %w", partLabel(i), err)
	}
	defer f.Close()
	n, err := io.ReadFull(f, buf.b)
	if err != nil {
		return int64(n), fmt.Errorf("read %s: %w", partLabel(i), err)
	}
	return int64(n), nil
}

// WritePartition writes buf to partition i's file in the current
// checkpoint with O_DIRECT.
func (s *Store) WritePartition(i int, buf *Buffer) (int64, error) {
	return WritePartitionIn(s.CurrentDir(), i, buf)
}

// WritePartitionIn writes buf to partition i's file in directory dir. A
// file that a checkpoint links is replaced, never written in place, so
// the checkpoint keeps it; one that no other name links is overwritten
// (overwrite).
func WritePartitionIn(dir string, i int, buf *Buffer) (int64, error) {
	return writeDirect(PartitionIn(dir, i), buf.b)
}

// ReadBucket returns the training edges of bucket (i, j).
func (s *Store) ReadBucket(i, j int) ([]Edge, error) {
	return s.readEdges(filepath.Join("buckets", bucketName(i, j)), s.M.Buckets[i][j])
}

// ReadSplit returns the validation or test edges.
func (s *Store) ReadSplit(sp Split) ([]Edge, error) {
	switch sp {
	case Valid:
		return s.readEdges("valid.bin", s.M.Valid)
	case Test:
		return s.readEdges("test.bin", s.M.Test)
	}
	return nil, fmt.Errorf("split %d has no single file (training edges live in buckets)", sp)
}

func (s *Store) readEdges(name string, n int64) ([]Edge, error) {
	path := filepath.Join(s.Dir, name)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) && n == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return s.decodeEdges(name, data, n)
}

// BucketName is the name of bucket (i, j)'s edge file, relative to the
// work directory (as an object store holds it too).
func BucketName(i, j int) string { return filepath.Join("buckets", bucketName(i, j)) }

// DecodeBucket checks the bytes of bucket (i, j)'s edge file against the
// manifest's checksum and decodes them (for edges read from elsewhere
// than the work directory, such as an object store).
func (s *Store) DecodeBucket(i, j int, data []byte) ([]Edge, error) {
	if len(data) == 0 && s.M.Buckets[i][j] == 0 {
		return nil, nil
	}
	return s.decodeEdges(BucketName(i, j), data, s.M.Buckets[i][j])
}

func (s *Store) decodeEdges(name string, data []byte, n int64) ([]Edge, error) {
	path := filepath.Join(s.Dir, name)
	if err := s.verify(name, data); err != nil {
		return nil, err
	}
	if int64(len(data)) != n*edgeBytes {
		return nil, fmt.Errorf("%s: %d bytes, want %d edges of %d bytes", path, len(data), n, edgeBytes)
	}
	out := make([]Edge, n)
	for k := range out {
		b := data[k*edgeBytes:]
		out[k] = Edge{int32(binary.LittleEndian.Uint32(b)), int32(binary.LittleEndian.Uint32(b[4:])), int32(binary.LittleEndian.Uint32(b[8:]))}
	}
	return out, nil
}

// Degrees returns every node's degree in the training edges.
func (s *Store) Degrees() ([]int32, error) {
	data, err := s.readData("degrees.bin")
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != 4*s.M.Nodes {
		return nil, fmt.Errorf("degrees.bin: %d bytes for %d nodes", len(data), s.M.Nodes)
	}
	out := make([]int32, s.M.Nodes)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out, nil
}

// Permutation returns, for every original node id, its id in the store
// (the relabelling that spreads nodes uniformly over partitions).
func (s *Store) Permutation() ([]int32, error) {
	data, err := s.readData("perm.bin")
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != 4*s.M.Nodes {
		return nil, fmt.Errorf("perm.bin: %d bytes for %d nodes", len(data), s.M.Nodes)
	}
	out := make([]int32, s.M.Nodes)
	for i := range out {
		out[i] = int32(binary.LittleEndian.Uint32(data[4*i:]))
	}
	return out, nil
}

// HistogramPath is the bucket histogram in the simulator's format.
func (s *Store) HistogramPath() string { return filepath.Join(s.Dir, "histogram.json") }

// InitPartitions starts training afresh: it drops every checkpoint and
// rewrites the initial partitions (checkpoint 0): embeddings uniform in
// [-scale, scale] drawn from seed, Adagrad state zero.
func (s *Store) InitPartitions(seed int64, scale float32) error {
	return s.InitPartitionsWith(seed, scale, nil)
}

// InitPartitionsWith is InitPartitions with fill (nil: none) called on
// each partition's embeddings (Rows × Dim, row r is node i·Rows+r) after
// they are drawn and before they are written, so that it may set some
// rows (a warm start); the draws do not depend on fill. A typed
// directory's resident table (resident.bin) is drawn the same way from
// its own stream of seed (fill does not see it).
func (s *Store) InitPartitionsWith(seed int64, scale float32, fill func(part int, emb []float32) error) error {
	if err := s.Reset(); err != nil {
		return err
	}
	buf, err := s.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x696e6974)) // "init"
	f := buf.Floats()
	n := int(s.M.Rows) * s.M.Dim
	sums := map[int]uint64{}
	for i := 0; i < s.M.P; i++ {
		for k := range f {
			f[k] = 0
		}
		for k := 0; k < n; k++ {
			f[k] = (2*rng.Float32() - 1) * scale
		}
		if fill != nil {
			if err := fill(i, f[:n]); err != nil {
				return err
			}
		}
		if _, err := s.WritePartition(i, buf); err != nil {
			return err
		}
		sums[i] = Checksum(buf.Bytes())
	}
	if s.M.Resident > 0 {
		sum, err := s.initResident(seed, scale)
		if err != nil {
			return err
		}
		sums[ResidentPart] = sum
	}
	return writeSums(s.CheckpointDir(0, 0), sums, nil)
}

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
	// The simulator's histogram (sim.Histogram): the buckets and the
	// graph's own sizes, so that simulate --edges describes this graph.
	hist, err := json.Marshal(struct {
		P         int       `json:"p"`
		Edges     [][]int64 `json:"edges"`
		Nodes     int64     `json:"nodes"`
		Relations int       `json:"relations"`
		Source    string    `json:"source"`
		Resident  int64     `json:"resident_nodes,omitempty"`
	}{b.m.P, b.m.Buckets, b.m.Nodes, b.m.Relations, b.m.Source, b.m.Resident})
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

// manifestFile is a work directory's manifest: its presence makes the
// directory a work directory.
const manifestFile = "manifest.json"

// LockFile is the lock file of a work directory, inside it
// (workdir.LockWorkdir): a build keeps it.
const LockFile = ".lock"

// buildPrefix starts the name of the directory a build fills inside the
// work directory.
const buildPrefix = ".building-"

// IsWorkdir reports whether dir is a tierflow work directory (it holds a
// manifest).
func IsWorkdir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, manifestFile))
	return err == nil
}

// Unbuilt reports whether dir, a directory without a manifest, may be
// built into: it holds nothing but its lock file, or it is what a build
// that did not finish left (it holds a build directory).
func Unbuilt(dir string) bool { return unbuilt(dir, "") }

// unbuilt is Unbuilt, not counting the build directory own.
func unbuilt(dir, own string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), buildPrefix) && e.Name() != own {
			return true
		}
	}
	for _, e := range entries {
		if e.Name() != LockFile && e.Name() != own {
			return false
		}
	}
	return true
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
