package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/micro"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// microFixture is a power-law batch over the nodes of a scaled
// Freebase86m and parameter tables for all its nodes and relations, with
// Adagrad state already warm (as after some training).
type microFixture struct {
	h        realrun.Hyper
	b        micro.Batch
	emb, st  []float32
	rel      *relations
	nodes, d int
	rels     int
}

func newMicroFixture(t testing.TB, kind workload.Model, d, edges, chunk, negs int) *microFixture {
	t.Helper()
	p, err := graph.LookupPreset("freebase86m")
	require.NoError(t, err)
	p, err = p.Scaled(1.0 / 1024)
	require.NoError(t, err)
	b, err := micro.SampleBatch(p, 5, edges, chunk, negs, 0.5)
	require.NoError(t, err)
	f := &microFixture{b: b, nodes: int(p.Nodes), d: d, rel: &relations{}}
	f.h = realrun.Hyper{Training: workload.Training{Model: kind, Dim: d, Batch: edges, Negatives: negs, ChunkSize: chunk}, LR: 0.1, Workers: 1}
	rng := rand.New(rand.NewPCG(1, 2))
	f.emb, f.st = make([]float32, f.nodes*d), make([]float32, f.nodes*d)
	for i := range f.emb {
		f.emb[i] = 0.1 * (2*rng.Float32() - 1)
		f.st[i] = 0.05 + 0.1*rng.Float32()
	}
	f.rels = int(p.Relations)
	f.rel.emb, f.rel.state = make([]float32, f.rels*kind.RelWidth(d)), make([]float32, f.rels*kind.RelWidth(d))
	for i := range f.rel.emb {
		f.rel.emb[i] = 1 + 0.1*(2*rng.Float32()-1)
		f.rel.state[i] = 0.05 + 0.1*rng.Float32()
	}
	return f
}

func (f *microFixture) clone() *microFixture {
	g := *f
	g.emb, g.st = append([]float32(nil), f.emb...), append([]float32(nil), f.st...)
	g.rel = &relations{emb: append([]float32(nil), f.rel.emb...), state: append([]float32(nil), f.rel.state...)}
	return &g
}

func (f *microFixture) tables() rowTables {
	d := f.d
	return rowTables{rel: f.rel, relation: f.h.Model.UsesRelations(), row: func(key int64) ([]float32, []float32) {
		return f.emb[int(key)*d : int(key+1)*d], f.st[int(key)*d : int(key+1)*d]
	}}
}

func (f *microFixture) train(t testing.TB, mb realrun.MicroBatching, probe microProbe) (float64, int) {
	t.Helper()
	h := f.h
	h.Micro = mb
	loss, k, err := trainSplit(h, f.b, f.tables(), probe)
	require.NoError(t, err)
	return loss, k
}

// maxRelDiff is max |a−b| ÷ max(1, |a|): absolute for embeddings,
// relative for Adagrad state, which grows well above 1.
func maxRelDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i]-b[i]))/max(1, math.Abs(float64(a[i]))))
	}
	return m
}

func maxAbsDiff(a, b []float32) float64 {
	var m float64
	for i := range a {
		m = max(m, math.Abs(float64(a[i]-b[i])))
	}
	return m
}

// TestMicroBatchingEqualsWholeBatch: with one worker, a batch split into
// 2, 4, 8 or 16 micro-batches by any method leaves the embeddings, their
// Adagrad state and the relations (rows of every width: d, d/2 for
// RotatE, two d×d matrices for linear+cos) equal to the unsplit batch's
// up to float32 rounding of the reordered gradient sums: |Δ| ≤ 1e-6 for
// Dot and ComplEx (the step is lr = 0.1 times a ratio of order 1, so this
// is ~1e-5 of a step), 1e-5 for the distance and cos models, whose
// gradients are of order 1 a row (the Adagrad state relative above 1).
func TestMicroBatchingEqualsWholeBatch(t *testing.T) {
	for _, kind := range []workload.Model{workload.Dot, workload.ComplEx, workload.TransEL2, workload.RotatE, "linear+cos"} {
		base := newMicroFixture(t, kind, 16, 2000, 250, 100)
		tol := 1e-6
		if kind != workload.Dot && kind != workload.ComplEx {
			tol = 1e-5
		}
		whole := base.clone()
		lossWhole, k := whole.train(t, realrun.MicroBatching{Count: 1}, nil)
		require.Equal(t, 1, k)
		changed := maxAbsDiff(base.emb, whole.emb)
		require.Greater(t, changed, 1e-3, "the batch must move the embeddings")
		for _, m := range micro.Methods {
			for _, k := range []int{2, 4, 8, 16} {
				t.Run(fmt.Sprintf("%s/%s/%d", kind, m, k), func(t *testing.T) {
					g := base.clone()
					loss, got := g.train(t, realrun.MicroBatching{Count: k, Split: m, Seed: 3}, nil)
					assert.Equal(t, k, got)
					assert.InEpsilon(t, lossWhole, loss, 1e-5)
					assert.LessOrEqual(t, maxAbsDiff(whole.emb, g.emb), tol)
					assert.LessOrEqual(t, maxRelDiff(whole.st, g.st), tol)
					assert.LessOrEqual(t, maxAbsDiff(whole.rel.emb, g.rel.emb), tol)
				})
			}
		}
	}
}

// TestBatchMemoryEstimate: the estimator is within 8% (Betty Table 7's
// bar) of the bytes the CPU engine allocates for each micro-batch's device
// buffers, measured with runtime/metrics.
func TestBatchMemoryEstimate(t *testing.T) {
	// TransE-L1 and RotatE are left out: their pairwise kernels keep no
	// transposes, and the estimate is 9–18% above what they allocate (on
	// the safe side; the chunk term is the simulator's).
	for _, kind := range []workload.Model{workload.Dot, workload.DistMult, workload.ComplEx, workload.TransEL2, "linear+cos", "diagonal+l2"} {
		f := newMicroFixture(t, kind, 64, 4000, 500, 200)
		for _, k := range []int{1, 2, 4} {
			h := f.h
			h.Micro = realrun.MicroBatching{Count: k, Split: micro.REG}
			m, err := MeasureMicroBatches(h, f.b, f.rels, 1)
			require.NoError(t, err)
			require.Equal(t, k, m.K)
			require.Len(t, m.Allocated, k)
			for i, got := range m.Allocated {
				rel := float64(m.Estimated[i]-got) / float64(got)
				assert.Less(t, math.Abs(rel), 0.08, "%s k=%d: estimated %d, allocated %d", kind, k, m.Estimated[i], got)
			}
		}
	}
	_, err := MeasureMicroBatches(realrun.Hyper{Training: workload.Training{Model: workload.ComplEx, Dim: 3}}, micro.Batch{}, 1, 0)
	assert.Error(t, err)
}

func TestMicroBatchingChoosesFewestThatFit(t *testing.T) {
	f := newMicroFixture(t, workload.ComplEx, 32, 2000, 250, 100)
	ix := micro.NewIndex(f.b, true)
	all := make([]int32, f.b.Edges())
	for i := range all {
		all[i] = int32(i)
	}
	whole := workload.EstimateBatch(ix.Shape(f.b, all, workload.ComplEx, 32, 1)).Total
	for _, budget := range []int64{whole, whole / 2, whole / 5} {
		mb := realrun.MicroBatching{Budget: budget, Split: micro.Range}
		require.NoError(t, mb.Check(f.h))
		parts, err := chooseSplit(mb, f.b, ix, workload.ComplEx, 32)
		require.NoError(t, err)
		peak := func(parts [][]int32) int64 {
			var p int64
			for _, es := range parts {
				p = max(p, workload.EstimateBatch(ix.Shape(f.b, es, workload.ComplEx, 32, 1)).Total)
			}
			return p
		}
		assert.LessOrEqual(t, peak(parts), budget)
		if k := len(parts); k > 1 {
			fewer, err := micro.Split(f.b, ix, k-1, micro.Range, 0)
			require.NoError(t, err)
			assert.Greater(t, peak(fewer), budget, "k-1 = %d would have fitted", k-1)
		}
	}
	assert.Error(t, realrun.MicroBatching{Budget: 1000}.Check(f.h))
	assert.Error(t, realrun.MicroBatching{Count: -1}.Check(f.h))
	assert.Error(t, realrun.MicroBatching{Split: "metis"}.Check(f.h))
}

// TestMicroBatchingInTheEngine: a whole epoch of the CPU engine with one
// worker, batches split into 4 REG micro-batches, ends within float32
// rounding of the same epoch with unsplit batches (both with the batch
// step): every embedding within 1e-5, every Adagrad state within 1e-5 of
// its value; and it differs from the default per-chunk step.
func TestMicroBatchingInTheEngine(t *testing.T) {
	run := func(mb realrun.MicroBatching) []float32 {
		st := fixture.Prepare(t, "fb15k", 0.2, 2, 16, workload.ComplEx)
		plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
		require.NoError(t, err)
		deg, err := st.Degrees()
		require.NoError(t, err)
		h := fixture.Hyper(workload.ComplEx, 16)
		h.Workers, h.Micro = 1, mb
		_, err = realrun.RunEpoch(st, plan, New(h, st, deg, 1), realrun.EpochOptions{Seed: 1, Epoch: 1})
		require.NoError(t, err)
		return fixture.Flat(t, st)
	}
	whole := run(realrun.MicroBatching{Count: 1})
	split := run(realrun.MicroBatching{Count: 4, Split: micro.REG})
	chunked := run(realrun.MicroBatching{})
	assert.LessOrEqual(t, maxRelDiff(whole, split), 1e-5)
	assert.Greater(t, maxRelDiff(whole, chunked), 1e-3)
}

// BenchmarkTrainBatch trains one 2,000-edge ComplEx batch (d = 64,
// chunks of 250 sharing 100 negatives) per op: the default per-chunk path
// (each rule), the per-chunk path under the sum rule, and the
// micro-batched path unsplit and in 4 REG micro-batches.
func BenchmarkTrainBatch(b *testing.B) {
	f := newMicroFixture(b, workload.ComplEx, 64, 2000, 250, 100)
	rows := int64(f.nodes)
	table := make([]float32, 2*f.nodes*f.d)
	copy(table, f.emb)
	copy(table[f.nodes*f.d:], f.st)
	buf := store.BufferOf(table)
	deg := make([]int32, f.nodes)
	edges := make([]store.Edge, f.b.Edges())
	for i := range edges {
		edges[i] = store.Edge{Src: int32(f.b.Src[i]), Rel: f.b.Rel[i], Dst: int32(f.b.Dst[i])}
		deg[f.b.Src[i]]++
		deg[f.b.Dst[i]]++
	}
	for _, tc := range []struct {
		name string
		mb   realrun.MicroBatching
		rule realrun.Duplicates
	}{{"default", realrun.MicroBatching{}, ""}, {"sum", realrun.MicroBatching{}, realrun.DuplicatesSum}, {"micro1", realrun.MicroBatching{Count: 1}, ""}, {"micro4", realrun.MicroBatching{Count: 4, Split: micro.REG}, ""}} {
		b.Run(tc.name, func(b *testing.B) {
			h := f.h
			h.Micro, h.DegreeFrac, h.Duplicates = tc.mb, 0.5, tc.rule
			c := &Engine{h: h, rows: rows, rel: f.clone().rel, neg: sample.NewNegativeSampler(&store.Store{M: store.Manifest{P: 1, Rows: rows, Nodes: rows}}, deg, h.DegreeFrac)}
			ws := newWorkerScratch(h, 1)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.trainBatch(ws, 0, edges, 0, buf, 0, buf)
			}
		})
	}
}

// TestMicroBatchingBudgetTooSmall: a budget that cannot hold one edge
// with its chunk's negatives is an error of TrainBucket, not a NaN loss.
func TestMicroBatchingBudgetTooSmall(t *testing.T) {
	st := fixture.Prepare(t, "fb15k", 0.05, 2, 16, workload.ComplEx)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := fixture.Hyper(workload.ComplEx, 16)
	h.Micro = realrun.MicroBatching{Budget: 1000}
	require.Error(t, h.Micro.Check(h))
	plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
	require.NoError(t, err)
	_, err = realrun.RunEpoch(st, plan, New(h, st, deg, 1), realrun.EpochOptions{Seed: 1, Epoch: 1})
	assert.ErrorContains(t, err, "micro-batching")
}
