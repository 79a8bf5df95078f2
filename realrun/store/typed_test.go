package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// typedGraph is a user–item graph: users 0..59 (partitioned), items
// 60..99 (resident, type "item"), tags 100..109 (resident); relations
// bought (user→item), follows (user→user), tagged (item→tag).
func typedGraph() ([]EntityType, []uint16, [][2]int) {
	types := []EntityType{{Name: "user", Partitioned: true, Nodes: 60}, {Name: "item", Nodes: 40}, {Name: "tag", Nodes: 10}}
	nt := make([]uint16, 110)
	for n := range nt {
		switch {
		case n >= 100:
			nt[n] = 2
		case n >= 60:
			nt[n] = 1
		}
	}
	return types, nt, [][2]int{{0, 1}, {0, 0}, {1, 2}}
}

func buildTyped(t *testing.T, dir string) *Store {
	t.Helper()
	types, nt, rt := typedGraph()
	b, err := NewTypedBuilder(dir, "typed", types, nt, 3, rt, 4, 7)
	require.NoError(t, err)
	for k := int64(0); k < 600; k++ {
		sp := Train
		if k%20 == 0 {
			sp = Valid
		} else if k%20 == 1 {
			sp = Test
		}
		var err error
		switch k % 3 {
		case 0:
			err = b.Add(k%60, 0, 60+k%40, sp)
		case 1:
			err = b.Add(k%60, 1, (k*7+3)%60, sp)
		default:
			err = b.Add(60+k%40, 2, 100+k%10, sp)
		}
		require.NoError(t, err)
	}
	s, err := b.Finish(8, "dot", 0.1)
	require.NoError(t, err)
	return s
}

func TestTypedBuild(t *testing.T) {
	s := buildTyped(t, filepath.Join(t.TempDir(), "w"))
	m := s.M
	assert.True(t, m.Typed())
	assert.Equal(t, int64(110), m.Nodes)
	assert.Equal(t, int64(50), m.Resident)
	assert.Equal(t, int64(60), m.PartitionedNodes())
	assert.Equal(t, int64(15), m.Rows, "ceil(60/4) rows over the partitioned nodes")
	assert.Equal(t, int64(15*8*8), m.DataBytes)
	assert.Equal(t, int64(50*8*8), m.ResidentDataBytes())
	assert.Equal(t, int64(Align), m.ResidentBytes())
	assert.Equal(t, [][2]int{{0, 1}, {0, 0}, {1, 2}}, m.RelationTypes)

	types, err := s.NodeTypes()
	require.NoError(t, err)
	require.Len(t, types, 110)
	for n, ty := range types {
		switch {
		case n < 60:
			assert.Equal(t, uint16(0), ty, "node %d: partitioned ids hold the users", n)
		case n < 100:
			assert.Equal(t, uint16(1), ty, "node %d: items first among the resident", n)
		default:
			assert.Equal(t, uint16(2), ty, "node %d", n)
		}
	}
	perm, err := s.Permutation()
	require.NoError(t, err)
	seen := map[int32]bool{}
	for orig, id := range perm {
		seen[id] = true
		want := uint16(0)
		if orig >= 100 {
			want = 2
		} else if orig >= 60 {
			want = 1
		}
		assert.Equal(t, want, types[id], "original node %d keeps its type", orig)
	}
	assert.Len(t, seen, 110, "a permutation")
	assert.Equal(t, int32(60), perm[60], "resident nodes in original order")

	var total, bothResident int64
	for i := range m.P {
		for j := range m.P {
			edges, err := s.ReadBucket(i, j)
			require.NoError(t, err)
			for _, e := range edges {
				sr, dr := m.IsResident(int64(e.Src)), m.IsResident(int64(e.Dst))
				assert.Equal(t, m.RelationTypes[e.Rel], [2]int{int(types[e.Src]), int(types[e.Dst])})
				switch {
				case sr && dr:
					assert.Equal(t, i, j, "both resident: a diagonal bucket")
					bothResident++
				case dr:
					assert.Equal(t, [2]int{i, i}, [2]int{int(int64(e.Src) / m.Rows), j})
				case sr:
					assert.Equal(t, [2]int{j, j}, [2]int{int(int64(e.Dst) / m.Rows), i})
				default:
					assert.Equal(t, [2]int{i, j}, [2]int{int(int64(e.Src) / m.Rows), int(int64(e.Dst) / m.Rows)})
				}
			}
			total += int64(len(edges))
		}
	}
	assert.Equal(t, m.Train, total)
	// the 180 training edges item→tag spread by their index mod p.
	for i := range m.P {
		assert.Positive(t, m.Buckets[i][i])
	}
	assert.Positive(t, bothResident)

	// resident.bin: initialised, checksummed, read back.
	buf, err := s.NewResidentBuffer()
	require.NoError(t, err)
	defer buf.Free()
	sums, err := s.PartitionSums(s.CurrentDir())
	require.NoError(t, err)
	require.Contains(t, sums, ResidentPart)
	_, err = ReadPartitionChecked(s.CurrentDir(), ResidentPart, buf, sums[ResidentPart])
	require.NoError(t, err)
	f := buf.Floats()
	var nonzero int
	for _, v := range f[:50*8] {
		assert.LessOrEqual(t, v, float32(0.1))
		assert.GreaterOrEqual(t, v, float32(-0.1))
		if v != 0 {
			nonzero++
		}
	}
	assert.Greater(t, nonzero, 390)
	for _, v := range f[50*8:] {
		assert.Zero(t, v, "Adagrad state and padding zero")
	}
	assert.Equal(t, filepath.Join(s.Dir, "partitions", ResidentFile), s.ResidentPath())

	// Checkpoints carry it: a changed table is written into a new
	// checkpoint, committed with its sum, verified; a linked one too.
	f[0] = 42
	dir, err := s.Begin(1, 0)
	require.NoError(t, err)
	for p := range m.P {
		require.NoError(t, Link(s.CurrentDir(), dir, p))
	}
	_, err = WriteResidentIn(dir, buf)
	require.NoError(t, err)
	sums[ResidentPart] = Checksum(buf.Bytes())
	require.NoError(t, s.Commit(1, 0, sums, nil))
	require.NoError(t, s.VerifyCheckpoint(Checkpoint{Epoch: 1, Dir: dir}))
	commitEpoch(t, s, 2, 0) // links every partition and the resident table
	again, err := Open(s.Dir)
	require.NoError(t, err)
	assert.Equal(t, 2, again.Current)
	other, err := again.NewResidentBuffer()
	require.NoError(t, err)
	defer other.Free()
	_, err = again.ReadResident(other)
	require.NoError(t, err)
	assert.Equal(t, float32(42), other.Floats()[0])
	kept, err := again.Checkpoints()
	require.NoError(t, err)
	for _, c := range kept {
		require.NoError(t, again.VerifyCheckpoint(c))
	}

	// A checkpoint without the table's sum is refused.
	require.NoError(t, os.WriteFile(filepath.Join(again.CurrentDir(), sumsFile), []byte(`{"part-0000.bin":"0","part-0001.bin":"0","part-0002.bin":"0","part-0003.bin":"0"}`), 0o644))
	_, err = again.PartitionSums(again.CurrentDir())
	assert.ErrorIs(t, err, ErrCorrupt)
}

// TestTypedOnePartitionedType: one partitioned type gives the untyped
// relabelling and buckets.
func TestTypedOnePartitionedType(t *testing.T) {
	nt := make([]uint16, 100)
	b, err := NewTypedBuilder(filepath.Join(t.TempDir(), "w"), "test", []EntityType{{Name: "n", Partitioned: true, Nodes: 100}}, nt, 2, [][2]int{{0, 0}, {0, 0}}, 4, 7)
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
	typed, err := b.Finish(10, "dot", 0.1)
	require.NoError(t, err)
	plain := build(t, filepath.Join(t.TempDir(), "w"))
	assert.Equal(t, plain.M.Buckets, typed.M.Buckets)
	assert.Equal(t, plain.M.Rows, typed.M.Rows)
	for _, name := range []string{"perm.bin", "degrees.bin", "valid.bin", "partitions/part-0002.bin"} {
		a, err := os.ReadFile(filepath.Join(plain.Dir, name))
		require.NoError(t, err)
		b, err := os.ReadFile(filepath.Join(typed.Dir, name))
		require.NoError(t, err)
		assert.Equal(t, a, b, name)
	}
}

func TestTypedBuilderRefuses(t *testing.T) {
	types, nt, rt := typedGraph()
	dir := filepath.Join(t.TempDir(), "w")
	for _, tc := range []struct {
		name  string
		types []EntityType
		rt    [][2]int
		p     int
		want  string
	}{
		{"node counts", []EntityType{{Name: "user", Partitioned: true, Nodes: 61}, types[1], types[2]}, rt, 4, "61 nodes"},
		{"relation types", types, rt[:2], 4, "2 relation types for 3 relations"},
		{"relation type index", types, [][2]int{{0, 1}, {0, 3}, {1, 2}}, 4, "type 3 outside"},
		{"p above partitioned nodes", types, rt, 61, "61 partitions for 60 nodes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewTypedBuilder(dir, "t", tc.types, nt, 3, tc.rt, tc.p, 1)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	b, err := NewTypedBuilder(dir, "t", types, nt, 3, rt, 4, 1)
	require.NoError(t, err)
	defer b.Abort()
	err = b.Add(60, 0, 61, Train)
	require.Error(t, err, "an item as a bought's source")
	assert.Contains(t, err.Error(), "node types (item, item), relation 0 joins (user, item)")
}

// TestTypedAllResident: a graph of resident types only has one
// partition of one unused row.
func TestTypedAllResident(t *testing.T) {
	b, err := NewTypedBuilder(filepath.Join(t.TempDir(), "w"), "t", []EntityType{{Name: "a", Nodes: 3}}, []uint16{0, 0, 0}, 1, [][2]int{{0, 0}}, 1, 1)
	require.NoError(t, err)
	require.NoError(t, b.Add(0, 0, 1, Train))
	require.NoError(t, b.Add(1, 0, 2, Train))
	s, err := b.Finish(4, "dot", 0.1)
	require.NoError(t, err)
	assert.Equal(t, int64(1), s.M.Rows)
	assert.Equal(t, int64(3), s.M.Resident)
	assert.Equal(t, [][]int64{{2}}, s.M.Buckets)
}

// TestTypedBucketCounts: a typed directory's own p is known; another p is
// refused when resident types place edges by their order.
func TestTypedBucketCounts(t *testing.T) {
	s := buildTyped(t, filepath.Join(t.TempDir(), "w"))
	counts, err := s.BucketCounts([]int{4})
	require.NoError(t, err)
	assert.Equal(t, s.M.Buckets, counts[0])
	_, err = s.BucketCounts([]int{2})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "resident entity types")
}
