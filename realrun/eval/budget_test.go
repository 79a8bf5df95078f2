package eval

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// The in-memory evaluation the out-of-core one replaced, kept here as the
// reference it must equal: every embedding in one matrix, every known
// edge in one map, and one matrix product of a query block against every
// node.

// loadAll reads every partition's embeddings into one nodes×d matrix.
func loadAll(t *testing.T, st *store.Store) []float32 {
	all := fixture.Embeddings(t, st)
	return all[:st.M.Nodes*int64(st.M.Dim)]
}

// trueEdges indexes every known edge: key (src, rel) → destinations, key
// (-1-dst, rel) → sources.
func trueEdges(t *testing.T, st *store.Store) map[[2]int64]map[int32]bool {
	out := map[[2]int64]map[int32]bool{}
	add := func(k [2]int64, v int32) {
		if out[k] == nil {
			out[k] = map[int32]bool{}
		}
		out[k][v] = true
	}
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
	for _, e := range all {
		add(queryKey(e, 0), e.Dst)
		add(queryKey(e, 1), e.Src)
	}
	return out
}

// referenceFiltered is the former rankFiltered.
func referenceFiltered(kind workload.Model, d int, emb, rel []float32, test []store.Edge, truth map[[2]int64]map[int32]bool) []float64 {
	m := len(emb) / d
	ranks := make([]float64, 2*len(test))
	Q := make([]float32, rankBlock*d)
	S := make([]float32, rankBlock*m)
	excluded := make([]bool, m)
	for lo := 0; lo < len(ranks); lo += rankBlock {
		hi := min(lo+rankBlock, len(ranks))
		for qi := lo; qi < hi; qi++ {
			e := test[qi/2]
			row := Q[(qi-lo)*d : (qi-lo+1)*d]
			copy(row, model.Query(kind, d, emb[int(e.Src)*d:int(e.Src+1)*d], relVec(kind, rel, d, e.Rel), emb[int(e.Dst)*d:int(e.Dst+1)*d], model.Side(qi%2), row))
		}
		n := hi - lo
		model.Scores(kind.Comparator(), d, n, m, Q[:n*d], emb, nil, S[:n*m])
		for qi := lo; qi < hi; qi++ {
			e := test[qi/2]
			partners, self := truth[queryKey(e, qi%2)], e.Dst
			if qi%2 == 1 {
				self = e.Src
			}
			excluded[self] = true
			for j := range partners {
				excluded[j] = true
			}
			scores := S[(qi-lo)*m : (qi-lo+1)*m]
			ts := scores[self]
			higher, equal := 0, 0
			for j, v := range scores {
				if v >= ts && !excluded[j] {
					if v > ts {
						higher++
					} else {
						equal++
					}
				}
			}
			excluded[self] = false
			for j := range partners {
				excluded[j] = false
			}
			ranks[qi] = 1 + float64(higher) + float64(equal)/2
		}
	}
	return ranks
}

// referenceSampled is the former sampled ranking: candidates drawn as
// Evaluate draws them, rows read from every embedding in memory.
func referenceSampled(kind workload.Model, d int, emb, rel []float32, test []store.Edge, degrees []int32, uniform, byDegree int, rng *rand.Rand) []float64 {
	ps := sample.NewPartSampler(degrees)
	m := uniform + byDegree
	cand := make([]float32, m*d)
	for k := 0; k < m; k++ {
		var v int32
		if k < uniform {
			v = ps.Uniform(rng)
		} else {
			v = ps.ByDegree(rng)
		}
		copy(cand[k*d:(k+1)*d], emb[int(v)*d:int(v+1)*d])
	}
	ranks := make([]float64, 2*len(test))
	for i, e := range test {
		for side := 0; side < 2; side++ {
			higher, equal := model.RankCounts(kind, d, emb[int(e.Src)*d:int(e.Src+1)*d], relVec(kind, rel, d, e.Rel), emb[int(e.Dst)*d:int(e.Dst+1)*d], model.Side(side), cand, m, nil)
			ranks[2*i+side] = 1 + float64(higher) + float64(equal)/2
		}
	}
	return ranks
}

// commitCheckpoint writes checkpoint 1 of st with embeddings drawn by
// value (Adagrad state zero) and relation embeddings rel (state zero), as
// training commits one.
func commitCheckpoint(t *testing.T, st *store.Store, value func(rng *rand.Rand) float32, rel []float32) {
	dir, err := st.Begin(1, 0)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(5, 5))
	sums := map[int]uint64{}
	for p := 0; p < st.M.P; p++ {
		buf, err := st.NewBuffer()
		require.NoError(t, err)
		f := buf.Floats()
		clear(f)
		for i := range f[:st.M.Rows*int64(st.M.Dim)] {
			f[i] = value(rng)
		}
		// A few rows repeat an earlier one: exact ties of the true node.
		for r := int64(3); r < st.M.Rows; r += 7 {
			copy(f[r*int64(st.M.Dim):(r+1)*int64(st.M.Dim)], f[:st.M.Dim])
		}
		_, err = store.WritePartitionIn(dir, p, buf)
		require.NoError(t, err)
		sums[p] = store.Checksum(buf.Bytes())
		require.NoError(t, buf.Free())
	}
	state := make([]byte, 4*len(rel))
	for i, x := range rel {
		binary.LittleEndian.PutUint32(state[4*i:], math.Float32bits(x))
	}
	require.NoError(t, st.Commit(1, 0, sums, map[string][]byte{realrun.StateFile: state}))
}

// TestOutOfCoreEqualsInMemory: ranking a partition at a time within a
// memory budget gives every query the rank the in-memory evaluation gave
// it, for each score function, with random and with tie-heavy embeddings,
// one partition buffer or two, filtered and sampled.
func TestOutOfCoreEqualsInMemory(t *testing.T) {
	const d = 16
	values := map[string]func(*rand.Rand) float32{
		"normal": func(r *rand.Rand) float32 { return float32(r.NormFloat64()) },
		"ties":   func(r *rand.Rand) float32 { return float32(r.IntN(3) - 1) },
	}
	for _, kind := range workload.Models {
		st := fixture.Prepare(t, "fb15k", 0.05, 5, d, kind)
		rel, _ := sample.InitRelations(kind, st.M.Relations, d, 9)
		realRel := append(append([]float32(nil), rel...), make([]float32, len(rel))...)
		deg, err := st.Degrees()
		require.NoError(t, err)
		for name, value := range values {
			if st.Current == 0 {
				commitCheckpoint(t, st, value, realRel)
			} else {
				// A second checkpoint over the first.
				st.Current = 0
				require.NoError(t, st.Reset())
				commitCheckpoint(t, st, value, realRel)
			}
			got, err := realrun.CheckpointRelations(st, kind, 0)
			require.NoError(t, err)
			if kind.UsesRelations() {
				require.Equal(t, rel, got, "relations read back from the checkpoint")
			}
			emb := loadAll(t, st)
			test, err := st.ReadSplit(store.Test)
			require.NoError(t, err)
			test = test[:min(len(test), 300)]
			want := referenceFiltered(kind, d, emb, rel, test, trueEdges(t, st))
			for _, budget := range []string{"one partition", "two partitions"} {
				r := &ranker{st: st, kind: kind, rel: rel, d: d, workers: 2, progress: func(string, int, int) {}}
				nq := int64(2 * len(test))
				// The working set (as filtered estimates it) plus the known
				// partners, plus one or two partitions.
				r.memory = nq*d*4*2 + nq*32 + 2*rankBlock*st.M.Rows*4 + maxBucket(st)*24 + 64<<10 + st.M.PartitionBytes
				if budget == "two partitions" {
					r.memory += st.M.PartitionBytes
				}
				ranks, _, err := r.filtered(append([]store.Edge(nil), test...))
				require.NoError(t, err, "%s %s %s", kind, name, budget)
				assert.Equal(t, want, ranks, "%s %s filtered, %s", kind, name, budget)

				r.memory = 1 << 30
				seed := func() *rand.Rand { return rand.New(rand.NewPCG(11, 11)) }
				wantS := referenceSampled(kind, d, emb, rel, test, deg, 40, 40, seed())
				ranks, _, err = r.sampled(test, deg, 40, 40, seed())
				require.NoError(t, err)
				assert.Equal(t, wantS, ranks, "%s %s sampled", kind, name)
			}
		}
	}
}

// TestPartitionProductScoresAsWholeProduct: every element of a query
// block's product with one partition's rows is bit-identical to the same
// element of the product with every row, and to the one-element product
// the true score is computed by, at whatever dimension.
func TestPartitionProductScoresAsWholeProduct(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range []int{3, 16, 33, 100} {
		const n, m, rows = 29, 301, 37
		Q, E := make([]float32, n*d), make([]float32, m*d)
		for i := range Q {
			Q[i] = float32(rng.NormFloat64())
		}
		for i := range E {
			E[i] = float32(rng.NormFloat64())
		}
		whole := make([]float32, n*m)
		model.SgemmNT(n, m, d, Q, E, whole)
		for lo := 0; lo < m; lo += rows {
			k := min(rows, m-lo)
			part := make([]float32, n*k)
			model.SgemmNT(n, k, d, Q, E[lo*d:(lo+k)*d], part)
			for i := 0; i < n; i++ {
				for j := 0; j < k; j++ {
					require.Equal(t, math.Float32bits(whole[i*m+lo+j]), math.Float32bits(part[i*k+j]), "d=%d q=%d node %d", d, i, lo+j)
					var one [1]float32
					model.SgemmNT(1, 1, d, Q[i*d:(i+1)*d], E[(lo+j)*d:(lo+j+1)*d], one[:])
					require.Equal(t, math.Float32bits(whole[i*m+lo+j]), math.Float32bits(one[0]), "d=%d q=%d node %d alone", d, i, lo+j)
				}
			}
		}
	}
}

// TestBudgetRefused: a budget that cannot hold one partition plus the
// working set is bad input, saying how much is needed.
func TestBudgetRefused(t *testing.T) {
	st := fixture.Prepare(t, "fb15k", 0.05, 4, 16, workload.DistMult)
	rel, _ := sample.InitRelations(workload.DistMult, st.M.Relations, 16, 1)
	deg, err := st.Degrees()
	require.NoError(t, err)
	for _, protocol := range []string{"filtered", "sampled"} {
		_, err = Evaluate(st, workload.DistMult, rel, deg, Options{Protocol: protocol, Uniform: 10, ByDegree: 10, MaxEdges: 100, Workers: 2, Memory: st.M.PartitionBytes})
		var bad *inputerr.Error
		require.ErrorAs(t, err, &bad, protocol)
		assert.Contains(t, err.Error(), "raise {EvalMemory} to at least")
	}
}

// TestProgressReportsEveryPartition: the ranking phase reports each
// partition once, ending at its total.
func TestProgressReportsEveryPartition(t *testing.T) {
	st := fixture.Prepare(t, "livejournal", 0.0005, 3, 8, workload.Dot)
	deg, err := st.Degrees()
	require.NoError(t, err)
	var mu sync.Mutex
	seen := map[string][]int{}
	_, err = Evaluate(st, workload.Dot, nil, deg, Options{Protocol: "filtered", MaxEdges: 50, Workers: 2, Split: store.Valid,
		Progress: func(phase string, done, total int) {
			mu.Lock()
			defer mu.Unlock()
			seen[phase] = append(seen[phase], done)
			assert.LessOrEqual(t, done, total)
		}})
	require.NoError(t, err)
	assert.Equal(t, []int{0, 1, 2, 3}, seen["ranking"])
	assert.Equal(t, []int{0, 1, 2, 3}, seen["reading rows"])
	assert.NotEmpty(t, seen["filtering"])
}
