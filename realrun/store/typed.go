package store

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"

	"github.com/tierflow/tierflow/workload"
)

// The typed layout (entity types, issue 44): a typed work directory's
// nodes each have a type (Manifest.Types, node-types.bin); the nodes of
// partitioned types are relabelled to [0, PartitionedNodes) and split
// into the P partitions as an untyped graph's are, those of unpartitioned
// ("resident") types to [PartitionedNodes, Nodes): their rows are the
// resident table, resident.bin, beside the partition files of every
// checkpoint directory and in the same format (Resident·Dim embeddings,
// then their Adagrad state, padded to Align).

// NodeTypesFile holds one little-endian uint16 per relabelled node id:
// the index of its type in Manifest.Types.
const NodeTypesFile = "node-types.bin"

// ResidentFile is the resident table's file in a checkpoint directory.
const ResidentFile = "resident.bin"

// ResidentPart stands for the resident table wherever a partition index
// is taken (PartitionIn, Link, ReadPartitionIn, WritePartitionIn,
// ReadPartitionChecked, the sums of Commit and PartitionSums), so that a
// checkpoint carries resident.bin exactly as it carries its partitions.
const ResidentPart = -1

func partLabel(i int) string {
	if i == ResidentPart {
		return "the resident table"
	}
	return fmt.Sprintf("partition %d", i)
}

// ResidentDataBytes is the resident table's rows and their Adagrad
// state, Resident·Dim·4·2 bytes; ResidentBytes is its file size, padded
// to Align (0 for an untyped directory).
func (m Manifest) ResidentDataBytes() int64 {
	return m.Resident * int64(m.Dim) * workload.BytesPerFloat * 2
}

// ResidentBytes is ResidentDataBytes rounded up to Align.
func (m Manifest) ResidentBytes() int64 { return (m.ResidentDataBytes() + Align - 1) / Align * Align }

// ResidentRow is resident node n's row in the resident table.
func (m Manifest) ResidentRow(n int64) int64 { return n - m.PartitionedNodes() }

// PartitionedTypes reports whether any type is partitioned (always, for
// an untyped directory).
func (m Manifest) PartitionedTypes() bool { return m.PartitionedNodes() > 0 }

// checkTypes checks a typed manifest's fields against each other (an
// untyped one has none of them).
func (m Manifest) checkTypes() error {
	if !m.Typed() {
		if m.Resident != 0 || len(m.RelationTypes) != 0 {
			return fmt.Errorf("resident nodes or relation types without entity types")
		}
		return nil
	}
	if len(m.Types) > math.MaxUint16 {
		return fmt.Errorf("%d entity types: at most %d", len(m.Types), math.MaxUint16)
	}
	var all, resident int64
	for _, t := range m.Types {
		if t.Nodes < 0 {
			return fmt.Errorf("entity type %s has %d nodes", t.Name, t.Nodes)
		}
		all += t.Nodes
		if !t.Partitioned {
			resident += t.Nodes
		}
	}
	if all != m.Nodes || resident != m.Resident {
		return fmt.Errorf("entity types of %d nodes (%d resident), manifest %d nodes (%d resident)", all, resident, m.Nodes, m.Resident)
	}
	if want := typedRows(m.PartitionedNodes(), m.P); m.Rows != want {
		return fmt.Errorf("rows %d, want %d for %d partitioned nodes in %d partitions", m.Rows, want, m.PartitionedNodes(), m.P)
	}
	if len(m.RelationTypes) != m.Relations {
		return fmt.Errorf("%d relation types for %d relations", len(m.RelationTypes), m.Relations)
	}
	for r, lr := range m.RelationTypes {
		for _, t := range lr {
			if t < 0 || t >= len(m.Types) {
				return fmt.Errorf("relation %d: type %d outside [0, %d)", r, t, len(m.Types))
			}
		}
	}
	return nil
}

// typedRows is the rows of a partition of a typed directory: those of
// the partitioned nodes, at least 1 (a graph of resident types only has
// one partition of one unused row, so that the p×p plan stays).
func typedRows(partitioned int64, p int) int64 {
	return max(workload.PartitionRows(partitioned, p), 1)
}

// NewTypedBuilder starts building a typed work directory: types are the
// entity types with their node counts, nodeType the type (an index into
// types) of every original dense node id, relTypes the lhs and rhs type
// of each of the relations. Nodes of partitioned types are relabelled by
// a seeded shuffle into [0, partitioned) — the untyped permutation when
// every node is of one partitioned type; it depends on the seed and the
// node types alone, never on p —; nodes of resident types follow in
// [partitioned, Nodes), grouped by type in their original order (so each
// resident type's rows are one contiguous range of the table). Training edges go to buckets as NewBuilder's do, but
// an edge with one resident end goes to the diagonal bucket (i, i) of
// its partitioned end's partition i, and one with both ends resident to
// (k, k), k its index among the training edges mod p.
func NewTypedBuilder(dir, source string, types []EntityType, nodeType []uint16, relations int, relTypes [][2]int, p int, seed int64) (*Builder, error) {
	nodes := int64(len(nodeType))
	if nodes < 1 || nodes > math.MaxInt32 {
		return nil, fmt.Errorf("%d nodes: want 1 to %d", nodes, int64(math.MaxInt32))
	}
	if len(types) == 0 || len(types) > math.MaxUint16 {
		return nil, fmt.Errorf("%d entity types: want 1 to %d", len(types), math.MaxUint16)
	}
	if relations < 1 || len(relTypes) != relations {
		return nil, fmt.Errorf("%d relation types for %d relations", len(relTypes), relations)
	}
	for r, lr := range relTypes {
		for _, t := range lr {
			if t < 0 || t >= len(types) {
				return nil, fmt.Errorf("relation %d: entity type %d outside [0, %d)", r, t, len(types))
			}
		}
	}
	count := make([]int64, len(types))
	for n, t := range nodeType {
		if int(t) >= len(types) {
			return nil, fmt.Errorf("node %d: entity type %d outside [0, %d)", n, t, len(types))
		}
		count[t]++
	}
	var resident int64
	ts := make([]EntityType, len(types))
	for i, t := range types {
		if t.Nodes != count[i] {
			return nil, fmt.Errorf("entity type %s: %d nodes, but %d nodes have it", t.Name, t.Nodes, count[i])
		}
		ts[i] = t
		if !t.Partitioned {
			resident += t.Nodes
		}
	}
	partitioned := nodes - resident
	if p < 1 || partitioned > 0 && int64(p) > partitioned {
		return nil, fmt.Errorf("p = %d partitions for %d nodes of partitioned types", p, partitioned)
	}
	m := Manifest{Version: Version, Source: source, Nodes: nodes, Relations: relations, P: p, Seed: seed,
		Rows: typedRows(partitioned, p), Types: ts, Resident: resident, RelationTypes: slices.Clone(relTypes)}

	// The k-th partitioned node (in original order) gets id ids[k], ids
	// shuffled as NewBuilder shuffles its permutation; the resident nodes
	// follow, grouped by type.
	ids := make([]int32, partitioned)
	for i := range ids {
		ids[i] = int32(i)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7065726d)) // "perm"
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	perm := make([]int32, nodes)
	relabelled := make([]uint16, nodes)
	res := make([]int32, 0, resident)
	k := 0
	for n, t := range nodeType {
		if types[t].Partitioned {
			perm[n] = ids[k]
			relabelled[ids[k]] = t
			k++
		} else {
			res = append(res, int32(n))
		}
	}
	slices.SortStableFunc(res, func(a, b int32) int { return int(nodeType[a]) - int(nodeType[b]) })
	for i, n := range res {
		id := partitioned + int64(i)
		perm[n] = int32(id)
		relabelled[id] = nodeType[n]
	}
	b, err := newBuilder(dir, m, perm)
	if err != nil {
		return nil, err
	}
	b.nodeType = relabelled
	return b, nil
}

// checkTypes refuses an edge (original ids) whose ends are not of its
// relation's lhs and rhs types.
func (b *Builder) checkTypes(src, rel, dst int64) error {
	lr := b.m.RelationTypes[rel]
	if s, d := b.nodeType[b.perm[src]], b.nodeType[b.perm[dst]]; int(s) != lr[0] || int(d) != lr[1] {
		return fmt.Errorf("edge (%d, %d, %d): node types (%s, %s), relation %d joins (%s, %s)", src, rel, dst,
			b.m.Types[s].Name, b.m.Types[d].Name, rel, b.m.Types[lr[0]].Name, b.m.Types[lr[1]].Name)
	}
	return nil
}

// bucket is the bucket of training edge e (relabelled ids), the next
// training edge.
func (b *Builder) bucket(e Edge) (int, int) {
	if b.m.Resident == 0 {
		return int(int64(e.Src) / b.m.Rows), int(int64(e.Dst) / b.m.Rows)
	}
	sr, dr := b.m.IsResident(int64(e.Src)), b.m.IsResident(int64(e.Dst))
	switch {
	case sr && dr:
		k := int(b.m.Train % int64(b.m.P))
		return k, k
	case sr:
		i := int(int64(e.Dst) / b.m.Rows)
		return i, i
	case dr:
		i := int(int64(e.Src) / b.m.Rows)
		return i, i
	}
	return int(int64(e.Src) / b.m.Rows), int(int64(e.Dst) / b.m.Rows)
}

// NodeTypes returns every relabelled node's type, an index into
// Manifest.Types (nil for an untyped directory).
func (s *Store) NodeTypes() ([]uint16, error) {
	if !s.M.Typed() {
		return nil, nil
	}
	data, err := s.readData(NodeTypesFile)
	if err != nil {
		return nil, err
	}
	if int64(len(data)) != 2*s.M.Nodes {
		return nil, fmt.Errorf("%s: %d bytes for %d nodes", filepath.Join(s.Dir, NodeTypesFile), len(data), s.M.Nodes)
	}
	out := make([]uint16, s.M.Nodes)
	for i := range out {
		out[i] = binary.LittleEndian.Uint16(data[2*i:])
		if int(out[i]) >= len(s.M.Types) {
			return nil, fmt.Errorf("%s: node %d has type %d of %d", filepath.Join(s.Dir, NodeTypesFile), i, out[i], len(s.M.Types))
		}
	}
	return out, nil
}

// ResidentPath is the resident table's file in the current checkpoint.
func (s *Store) ResidentPath() string { return ResidentIn(s.CurrentDir()) }

// ResidentIn is the resident table's file in a checkpoint directory.
func ResidentIn(dir string) string { return PartitionIn(dir, ResidentPart) }

// NewResidentBuffer allocates an aligned buffer of the resident table's
// size (ResidentBytes; an error for a directory without resident nodes).
func (s *Store) NewResidentBuffer() (*Buffer, error) {
	if s.M.Resident == 0 {
		return nil, fmt.Errorf("work directory %s has no resident entity types", s.Dir)
	}
	b, m, err := alignedBuffer(int(s.M.ResidentBytes()))
	if err != nil {
		return nil, fmt.Errorf("allocate %d-byte resident buffer: %w", s.M.ResidentBytes(), err)
	}
	return &Buffer{b: b, mapping: m}, nil
}

// ReadResident reads the current checkpoint's resident table into buf
// with O_DIRECT (unchecked: see ReadPartitionChecked with ResidentPart).
func (s *Store) ReadResident(buf *Buffer) (int64, error) {
	return ReadPartitionIn(s.CurrentDir(), ResidentPart, buf)
}

// ReadResidentIn reads the resident table of checkpoint directory dir.
func ReadResidentIn(dir string, buf *Buffer) (int64, error) {
	return ReadPartitionIn(dir, ResidentPart, buf)
}

// WriteResident writes buf as the current checkpoint's resident table.
func (s *Store) WriteResident(buf *Buffer) (int64, error) {
	return WritePartitionIn(s.CurrentDir(), ResidentPart, buf)
}

// WriteResidentIn writes buf as the resident table of directory dir
// (replaced, never written in place, as partitions are).
func WriteResidentIn(dir string, buf *Buffer) (int64, error) {
	return WritePartitionIn(dir, ResidentPart, buf)
}

// initResident writes the initial resident table: embeddings uniform in
// [-scale, scale] from its own stream of seed, Adagrad state zero; it
// returns the file's checksum.
func (s *Store) initResident(seed int64, scale float32) (uint64, error) {
	buf, err := s.NewResidentBuffer()
	if err != nil {
		return 0, err
	}
	defer buf.Free()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x7265736964)) // "resid"
	f := buf.Floats()
	clear(f)
	n := int(s.M.Resident) * s.M.Dim
	for k := 0; k < n; k++ {
		f[k] = (2*rng.Float32() - 1) * scale
	}
	if _, err := s.WriteResident(buf); err != nil {
		return 0, err
	}
	return Checksum(buf.Bytes()), nil
}

// residentSum adds the resident table to a checkpoint's partition sums
// (PartitionSums) when the directory has one.
func (s *Store) residentSum(dir string, all map[string]uint64, out map[int]uint64) error {
	if s.M.Resident == 0 {
		return nil
	}
	v, ok := all[ResidentFile]
	if !ok {
		return fmt.Errorf("%s: no checksum recorded for %s: %w", filepath.Join(dir, sumsFile), ResidentFile, ErrCorrupt)
	}
	out[ResidentPart] = v
	return nil
}
