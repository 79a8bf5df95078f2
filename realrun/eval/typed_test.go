package eval

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// typedStore is the typed fixture (users partitioned in p partitions,
// items resident) with a committed checkpoint of random embeddings in
// which, for the first test edge (u, bought, i), the true item i scores
// highest of all items for u, and a user w that is no partner of u scores
// higher still: were users candidates of (u, bought, ?), w would outrank
// i. It returns the store, its embeddings by store node, the relation
// parameters and that first test edge.
func typedStore(t *testing.T, p int, kind workload.Model) (*store.Store, []float32, []float32, store.Edge) {
	const d = 8
	st := fixture.Typed(t, filepath.Join(t.TempDir(), "w"), p, d, kind)
	rng := rand.New(rand.NewPCG(3, 4))
	emb := make([]float32, st.M.Nodes*d)
	for i := range emb {
		emb[i] = float32(rng.NormFloat64()) * 0.1
	}
	var rel []float32
	if kind.UsesRelations() {
		rel, _ = sample.InitRelations(kind, st.M.Relations, d, 9)
		for i := range rel {
			rel[i] = 1 // distmult: every diagonal 1, so scores are s·d
		}
	}
	test, err := st.ReadSplit(store.Test)
	require.NoError(t, err)
	var e store.Edge
	for _, x := range test {
		if x.Rel == 0 {
			e = x
			break
		}
	}
	require.Equal(t, int32(0), e.Rel, "a bought edge among the test edges")
	types, err := st.NodeTypes()
	require.NoError(t, err)
	require.Equal(t, uint16(0), types[e.Src])
	require.Equal(t, uint16(1), types[e.Dst])
	row := func(v int32) []float32 { return emb[int(v)*d : int(v+1)*d] }
	for k := range d {
		row(e.Src)[k] = 1
		row(e.Dst)[k] = 1
	}
	partners := map[int32]bool{e.Src: true}
	all := testEdges(t, st)
	for _, x := range all {
		if x.Src == e.Src {
			partners[x.Dst] = true
		}
		if x.Dst == e.Src {
			partners[x.Src] = true
		}
	}
	w := int32(-1)
	for v := range int32(st.M.Nodes) {
		if types[v] == 0 && !partners[v] {
			w = v
			break
		}
	}
	require.GreaterOrEqual(t, w, int32(0))
	for k := range d {
		row(w)[k] = 5
	}
	fixture.CommitEmbeddings(t, st, emb, rel)
	return st, emb, rel, e
}

// testEdges are every edge of the store: its training buckets and its
// validation and test splits.
func testEdges(t *testing.T, st *store.Store) []store.Edge {
	var all []store.Edge
	for i := 0; i < st.M.P; i++ {
		for j := 0; j < st.M.P; j++ {
			edges, err := st.ReadBucket(i, j)
			require.NoError(t, err)
			all = append(all, edges...)
		}
	}
	for _, sp := range []store.Split{store.Valid, store.Test} {
		edges, err := st.ReadSplit(sp)
		require.NoError(t, err)
		all = append(all, edges...)
	}
	return all
}

// referenceTyped ranks both sides of every test edge in memory against
// the candidates that pass keep (typed: the nodes of the side's type),
// the other known partners left out; it returns the ranks and the number
// of places.
func referenceTyped(kind workload.Model, d int, emb, rel []float32, test, all []store.Edge, keep func(e store.Edge, side int, v int32) bool) ([]float64, []int) {
	truth := map[[2]int64]map[int32]bool{}
	for _, e := range all {
		for side, v := range []int32{e.Dst, e.Src} {
			k := queryKey(e, side)
			if truth[k] == nil {
				truth[k] = map[int32]bool{}
			}
			truth[k][v] = true
		}
	}
	row := func(v int32) []float32 { return emb[int(v)*d : int(v+1)*d] }
	var ranks []float64
	var places []int
	for _, e := range test {
		rv := relVec(kind, rel, d, e.Rel)
		for side := 0; side < 2; side++ {
			self := e.Dst
			if side == 1 {
				self = e.Src
			}
			q := model.Query(kind, d, row(e.Src), rv, row(e.Dst), model.Side(side), make([]float32, d))
			var ts [1]float32
			model.Scores(kind.Comparator(), d, 1, 1, q, row(self), nil, ts[:])
			var higher, equal float64
			n := 1
			for v := range int32(len(emb) / d) {
				if !keep(e, side, v) || truth[queryKey(e, side)][v] {
					continue
				}
				n++
				var s [1]float32
				model.Scores(kind.Comparator(), d, 1, 1, q, row(v), nil, s[:])
				switch {
				case s[0] > ts[0]:
					higher++
				case s[0] == ts[0]:
					equal++
				}
			}
			ranks = append(ranks, 1+higher+equal/2)
			places = append(places, n)
		}
	}
	return ranks, places
}

// TestTypedFilteredRanksSameTypeOnly: in a typed work directory, filtered
// ranking counts only the candidates of the side's type (the relation's
// rhs type for destinations, lhs for sources) — a user that would outrank
// the true item of (u, bought, ?) is no candidate —, reads the resident
// items from resident.bin, and its places (the random baseline's) are the
// type's node count less the known partners.
func TestTypedFilteredRanksSameTypeOnly(t *testing.T) {
	for _, tc := range []struct {
		p    int
		kind workload.Model
	}{{1, workload.Dot}, {2, workload.Dot}, {3, workload.DistMult}, {2, workload.ComplEx}} {
		t.Run(string(tc.kind), func(t *testing.T) {
			st, emb, rel, first := typedStore(t, tc.p, tc.kind)
			d := st.M.Dim
			types, err := st.NodeTypes()
			require.NoError(t, err)
			test, err := st.ReadSplit(store.Test)
			require.NoError(t, err)
			all := testEdges(t, st)
			typed := func(e store.Edge, side int, v int32) bool { return int(types[v]) == st.M.RelationTypes[e.Rel][1-side] }
			want, wantPlaces := referenceTyped(tc.kind, d, emb, rel, test, all, typed)
			untyped, _ := referenceTyped(tc.kind, d, emb, rel, test, all, func(store.Edge, int, int32) bool { return true })
			i := slices.Index(test, first)
			if tc.kind != workload.ComplEx {
				assert.Equal(t, 1.0, want[2*i], "the true item ranks first among items")
				assert.Greater(t, untyped[2*i], 1.0, "a user would outrank it if users were candidates")
			}
			for _, workers := range []int{1, 3} {
				ty, err := loadTypes(st)
				require.NoError(t, err)
				r := &ranker{st: st, kind: tc.kind, rel: rel, d: d, workers: workers, memory: 1 << 30, progress: func(string, int, int) {}, types: ty}
				ranks, places, err := r.filtered(slices.Clone(test))
				require.NoError(t, err)
				assert.Equal(t, want, ranks)
				assert.Equal(t, wantPlaces, places)
			}
			q, err := Evaluate(st, tc.kind, rel, nil, Options{Protocol: Filtered, Workers: 2, Memory: 1 << 30})
			require.NoError(t, err)
			var mrr, base float64
			for k, rk := range want {
				mrr += 1 / rk
				base += RandomMRR(wantPlaces[k])
			}
			assert.InDelta(t, mrr/float64(len(want)), q.MRR, 1e-12)
			assert.InDelta(t, base/float64(len(want)), q.Baseline, 1e-12, "the random baseline counts the right type's candidates")
		})
	}
}

// TestTypedSampledDrawsSameType: the sampled protocol draws each side's
// candidates from the nodes of its type (users as sources, users or items
// as destinations by relation) and ranks every side against its type's.
func TestTypedSampledDrawsSameType(t *testing.T) {
	st, emb, rel, _ := typedStore(t, 2, workload.Dot)
	d := st.M.Dim
	deg, err := st.Degrees()
	require.NoError(t, err)
	test, err := st.ReadSplit(store.Test)
	require.NoError(t, err)
	ty, err := loadTypes(st)
	require.NoError(t, err)
	r := &ranker{st: st, kind: workload.Dot, d: d, workers: 2, memory: 1 << 30, progress: func(string, int, int) {}, types: ty}
	const uniform, byDegree = 30, 20
	ids, off := r.sampleTyped(test, deg, uniform, byDegree, rand.New(rand.NewPCG(1, 2)))
	require.Len(t, ids, 2*(uniform+byDegree), "two candidate types, users and items")
	for tt, o := range off {
		for _, v := range ids[o : o+uniform+byDegree] {
			assert.Equal(t, uint16(tt), ty.of[v], "candidate %d of type %d", v, tt)
		}
	}
	ranks, places, err := r.sampled(test, deg, uniform, byDegree, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	row := func(v int32) []float32 { return emb[int(v)*d : int(v+1)*d] }
	for i, e := range test {
		for side := 0; side < 2; side++ {
			o := off[ty.cand(e, side)]
			cand := make([]float32, 0, (uniform+byDegree)*d)
			for _, v := range ids[o : o+uniform+byDegree] {
				cand = append(cand, row(v)...)
			}
			higher, equal := model.RankCounts(workload.Dot, d, row(e.Src), relVec(workload.Dot, rel, d, e.Rel), row(e.Dst), model.Side(side), cand, uniform+byDegree, nil)
			assert.Equal(t, 1+float64(higher)+float64(equal)/2, ranks[2*i+side])
			assert.Equal(t, uniform+byDegree+1, places[2*i+side])
		}
	}
}

// TestTypedGatherAndExport: gathered rows of resident nodes come from
// resident.bin, and the npy and tsv exports of a typed directory hold
// every node's row in input id order, the tsv with a type column.
func TestTypedGatherAndExport(t *testing.T) {
	st, emb, _, _ := typedStore(t, 2, workload.Dot)
	d := st.M.Dim
	nodes := []int32{int32(st.M.Nodes - 1), 0, int32(st.M.PartitionedNodes()), 5}
	g, err := Gather(st, slices.Clone(nodes), 1, nil, nil)
	require.NoError(t, err)
	for _, v := range nodes {
		assert.Equal(t, emb[int(v)*d:int(v+1)*d], g.Row(v), "node %d", v)
	}
	dir := t.TempDir()
	require.NoError(t, ExportFile(filepath.Join(dir, "e.tsv"), "tsv", st))
	require.NoError(t, ExportFile(filepath.Join(dir, "e.csv"), "csv", st))
	lines := readLines(t, filepath.Join(dir, "e.tsv"))
	require.Len(t, lines, int(st.M.Nodes))
	assert.Regexp(t, `^user\talice\t`, lines[0])
	assert.Regexp(t, `^item\talice\t`, lines[fixture.TypedUsers])
	assert.Regexp(t, `^item\ti11\t`, lines[len(lines)-1])
	assert.Regexp(t, `^user,alice,`, readLines(t, filepath.Join(dir, "e.csv"))[0])
	perm, err := st.Permutation()
	require.NoError(t, err)
	require.NoError(t, ExportFile(filepath.Join(dir, "e.npy"), "npy", st))
	got := readNPY(t, filepath.Join(dir, "e.npy"), int(st.M.Nodes), d)
	for in, v := range perm {
		assert.Equal(t, emb[int(v)*d:int(v+1)*d], got[in*d:(in+1)*d], "input node %d", in)
	}
}

func readLines(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
}

// readNPY reads a rows × d float32 .npy array (header skipped by its
// length field).
func readNPY(t *testing.T, path string, rows, d int) []float32 {
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	h := 10 + int(binary.LittleEndian.Uint16(data[8:]))
	require.Len(t, data, h+rows*d*4)
	out := make([]float32, rows*d)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(data[h+4*i:]))
	}
	return out
}

// TestTypedChooseCountsTheResidentTable: the smallest budget filtered
// ranking of a typed store accepts, as auto reports it, holds the resident
// table beside one partition and the working set.
func TestTypedChooseCountsTheResidentTable(t *testing.T) {
	st, _, _, _ := typedStore(t, 2, workload.Dot)
	c, err := Choose(st, Options{FilteredMaxNodes: 1, MaxEdges: 10, Workers: 2, Memory: 1 << 30})
	require.NoError(t, err)
	assert.Equal(t, Sampled, c.Protocol)
	assert.Equal(t, filteredWorking(st, 20, 2)+st.M.PartitionBytes+st.M.ResidentBytes(), c.FilteredMemory)
	r := &ranker{st: st, workers: 2, memory: c.FilteredMemory}
	_, err = r.budget(filteredWorking(st, 20, 2), "")
	assert.NoError(t, err)
	r.memory--
	_, err = r.budget(filteredWorking(st, 20, 2), "")
	assert.ErrorContains(t, err, "and the resident table")
}
