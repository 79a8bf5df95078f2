// Package store is the real engine's on-disk layout: one file per node
// partition (float32 embeddings followed by their Adagrad state, padded to
// the I/O alignment and read and written with O_DIRECT), one binary file
// per edge bucket, the validation and test splits, node degrees, a bucket
// histogram the simulator reads, and a JSON manifest.
package store

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
