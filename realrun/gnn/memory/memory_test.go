package memory

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// testGraph is a generated graph with its feature rows cut to f values
// (the step's arrays keep their shapes; the tests run faster).
func testGraph(t testing.TB, name string, scale float64, f int) *data.Graph {
	t.Helper()
	g, err := data.Generate(name, scale, 1)
	require.NoError(t, err)
	if f <= 0 || f >= g.F {
		return g
	}
	h := *g
	h.F = f
	h.X = make([]float32, g.N()*f)
	for v := 0; v < g.N(); v++ {
		copy(h.X[v*f:(v+1)*f], g.X[v*g.F:v*g.F+f])
	}
	return &h
}

var (
	graphsOnce sync.Once
	graphs     map[string]*data.Graph
)

// smallGraphs are the test graphs: Cora's shape with 48 features, and
// arXiv's (128 features, 40 classes) at 1%.
func smallGraphs(t testing.TB) map[string]*data.Graph {
	graphsOnce.Do(func() {
		graphs = map[string]*data.Graph{
			"cora":  testGraph(t, "cora", 1, 48),
			"arxiv": testGraph(t, "ogbn-arxiv", 0.01, 0),
		}
	})
	return graphs
}

func specFor(g *data.Graph, model string, layers, hidden int) nn.Spec {
	return nn.Spec{Model: model, In: g.F, Hidden: hidden, Classes: len(g.Classes), Layers: layers, Heads: 4, Dropout: 0.5}
}

// sample draws a batch of the first n training nodes of g.
func sample(g *data.Graph, spec nn.Spec, fanout, n int, seed uint64) *block.Batch {
	fans := make([]int, spec.Layers)
	for i := range fans {
		fans[i] = fanout
	}
	s := block.NewSampler(g, spec.Fanouts(fans))
	return s.Sample(g.Train[:min(n, len(g.Train))], rand.New(rand.NewPCG(seed, 2)))
}

// withWorkers runs f with nn.Workers set to w.
func withWorkers(w int, f func()) {
	old := nn.Workers
	nn.Workers = w
	defer func() { nn.Workers = old }()
	f()
}

// needExact skips a test comparing Batch with Measure under the race
// detector.
func needExact(t *testing.T) {
	t.Helper()
	if raceOn {
		t.Skip("the race detector's sync.Pool drops items at random: Measure is not exact")
	}
}

func relErr(est, meas int64) float64 { return math.Abs(float64(est-meas)) / float64(meas) }

// TestEstimateMatchesMeasure holds Batch to what the engine allocates,
// within 2%, for every model, 1–3 layers and batches from one output
// node to a few hundred, on one and two workers: a buffer added to a
// layer without the estimate following fails it.
func TestEstimateMatchesMeasure(t *testing.T) {
	needExact(t)
	gs := smallGraphs(t)
	type shape struct {
		graph          string
		hidden, fanout int
		outs           []int
	}
	shapes := []shape{
		{"cora", 16, 5, []int{1, 40, 140}},
		{"arxiv", 64, 10, []int{7, 300}},
	}
	worst, at := 0.0, ""
	for _, w := range []int{1, 2} {
		for _, model := range nn.Models {
			for layers := 1; layers <= 3; layers++ {
				for _, sh := range shapes {
					g := gs[sh.graph]
					spec := specFor(g, model, layers, sh.hidden)
					for _, n := range sh.outs {
						name := fmt.Sprintf("W%d/%s/L%d/%s/%d", w, model, layers, sh.graph, n)
						b := sample(g, spec, sh.fanout, n, uint64(n))
						withWorkers(w, func() {
							est := Batch(spec, b)
							meas, err := Measure(spec, g, b, 1)
							require.NoError(t, err, name)
							if e := relErr(est.Total(), meas); e > worst {
								worst, at = e, name
							}
							assert.LessOrEqual(t, relErr(est.Total(), meas), 0.02,
								"%s: estimated %d, measured %d (%s)", name, est.Total(), meas, est)
						})
					}
				}
			}
		}
	}
	t.Logf("largest error %.3f%% (%s)", 100*worst, at)
}

// TestEstimateShapes checks the estimate's sanity on every model:
// categories are never negative, and a batch's estimate grows with its
// output nodes (Full fanouts: a batch of a prefix of the seeds is a part
// of the batch of all of them).
func TestEstimateShapes(t *testing.T) {
	g := smallGraphs(t)["cora"]
	for _, model := range nn.Models {
		for layers := 1; layers <= 3; layers++ {
			spec := specFor(g, model, layers, 32)
			prev := int64(-1)
			for _, n := range []int{1, 2, 5, 20, 60, 140} {
				fans := make([]int, layers)
				for i := range fans {
					fans[i] = block.Full
				}
				b := block.NewSampler(g, spec.Fanouts(fans)).Sample(g.Train[:n], rand.New(rand.NewPCG(1, 1)))
				e := Batch(spec, b)
				for _, v := range []int64{e.Params, e.Features, e.Labels, e.Blocks, e.Hidden, e.Aggregator, e.Gradients, e.Optimizer, e.Scratch, e.Pool} {
					assert.GreaterOrEqual(t, v, int64(0), "%s L%d n=%d: %s", model, layers, n, e)
				}
				assert.Greater(t, e.Params, int64(0))
				assert.GreaterOrEqual(t, e.Total(), prev, "%s L%d: %d outputs estimated below fewer", model, layers, n)
				assert.GreaterOrEqual(t, BettyPublished(spec, b), int64(0))
				prev = e.Total()
			}
		}
	}
}

// TestParamValues checks the parameter counts Betty's estimator uses
// against the model's.
func TestParamValues(t *testing.T) {
	for _, model := range nn.Models {
		for layers := 1; layers <= 3; layers++ {
			spec := nn.Spec{Model: model, In: 37, Hidden: 24, Classes: 5, Layers: layers, Heads: 3}
			m, err := nn.New(spec, 1)
			require.NoError(t, err)
			n := 0
			for l := 0; l < layers; l++ {
				in, out := spec.Dims(l)
				n += paramValues(spec, l, in, out)
			}
			assert.Equal(t, m.NumParams(), n, "%s L%d", model, layers)
		}
	}
}

// TestSizeClasses checks the allocator's table against the runtime's
// and roundup against what allocations count.
func TestSizeClasses(t *testing.T) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	for i, c := range ms.BySize[1:] {
		if c.Size == 0 {
			break
		}
		assert.Equal(t, int64(c.Size), sizeClasses[i], "class %d", i+1)
	}
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var sink [][]float32
	for _, n := range []int{17, 100, 1000, 5000, 8191, 8193, 30000, 40000, 100000} {
		runtime.ReadMemStats(&ms)
		before := ms.TotalAlloc
		sink = append(sink[:0], make([]float32, n))
		runtime.ReadMemStats(&ms)
		got := int64(ms.TotalAlloc - before)
		// the append of sink may allocate too: at most a small class
		assert.InDelta(t, f32(n), got, 48, "%d floats", n)
	}
	runtime.KeepAlive(sink)
	assert.Equal(t, int64(0), roundup(0, false))
	assert.Equal(t, int64(40960), roundup(32769, false))
}

// TestAppended checks the growth of appended slices against append's.
func TestAppended(t *testing.T) {
	for _, n := range []int{1, 5, 17, 300, 1000, 5000} {
		var s []int32
		want := int64(0)
		for i := 0; i < n; i++ {
			if len(s) == cap(s) {
				c := int64(cap(append(s, 0)))
				want += classSize(4*c, false)
			}
			s = append(s, int32(i))
		}
		got := appended(int64(n), 4, false)
		if n*4 >= tinySize {
			assert.InDelta(t, want, got, 16, "%d int32s", n)
		}
	}
}

func TestMeasureRefuses(t *testing.T) {
	g := smallGraphs(t)["cora"]
	spec := specFor(g, "sage-mean", 2, 16)
	b := sample(g, spec, 5, 10, 1)
	_, err := Measure(nn.Spec{Model: "nope"}, g, b, 1)
	assert.Error(t, err)
	bad := spec
	bad.Layers = 3
	_, err = Measure(bad, g, b, 1)
	assert.ErrorContains(t, err, "2 blocks for a model of 3 layers")
	wide := spec
	wide.In = g.F + 1
	_, err = Measure(wide, g, b, 1)
	assert.ErrorContains(t, err, "features")
}

// rangeSplit is a stand-in for split.Split: k runs of consecutive
// positions.
func rangeSplit(b *block.Batch, k int, _ split.Method, _ uint64) ([][]int32, error) {
	n := len(b.Output())
	if k < 1 || k > n {
		return nil, fmt.Errorf("k %d for %d outputs", k, n)
	}
	parts := make([][]int32, k)
	for i := range parts {
		for p := n * i / k; p < n*(i+1)/k; p++ {
			parts[i] = append(parts[i], int32(p))
		}
	}
	return parts, nil
}

// microOf is a stand-in for split.Builder.Micro: the sub-stack of b
// computing the outputs at positions outs.
func microOf(_ *split.Builder, b *block.Batch, outs []int32, _ *block.Batch) *block.Batch {
	L := len(b.Blocks)
	mb := &block.Batch{Blocks: make([]block.Block, L)}
	dst := make([]int32, len(outs)) // local rows of b's block L-1
	for i, p := range outs {
		dst[i] = p
	}
	for l := L - 1; l >= 0; l-- {
		src := &b.Blocks[l]
		blk := &mb.Blocks[l]
		local := map[int32]int32{}
		for _, r := range dst {
			local[r] = int32(len(blk.Src))
			blk.Src = append(blk.Src, src.Src[r])
		}
		blk.NumDst = len(dst)
		blk.Ptr = []int32{0}
		rows := append([]int32(nil), dst...)
		for _, r := range dst {
			for _, j := range src.Nbr[src.Ptr[r]:src.Ptr[r+1]] {
				if _, ok := local[j]; !ok {
					local[j] = int32(len(blk.Src))
					blk.Src = append(blk.Src, src.Src[j])
					rows = append(rows, j)
				}
				blk.Nbr = append(blk.Nbr, local[j])
			}
			blk.Ptr = append(blk.Ptr, int32(len(blk.Nbr)))
		}
		dst = rows
	}
	return mb
}

func fakeSplit(t *testing.T) {
	oldS, oldM := splitter, micro
	splitter, micro = rangeSplit, microOf
	t.Cleanup(func() { splitter, micro = oldS, oldM })
}

func TestFit(t *testing.T) {
	fakeSplit(t)
	g := smallGraphs(t)["arxiv"]
	for _, model := range []string{"sage-mean", "sage-lstm", "gat"} {
		spec := specFor(g, model, 2, 64)
		b := sample(g, spec, 10, 400, 3)
		whole := Batch(spec, b)

		p, err := Fit(spec, b, whole.Need(), split.Range, 1)
		require.NoError(t, err)
		assert.Equal(t, 1, p.K, model)

		for _, frac := range []float64{0.8, 0.5, 0.3} {
			budget := int64(frac * float64(whole.Need()))
			p, err := Fit(spec, b, budget, split.Range, 1)
			t.Logf("%s at %.0f%%: K %d, err %v", model, 100*frac, p.K, err)
			if err != nil {
				var be *BudgetError
				require.ErrorAs(t, err, &be, "%s at %.0f%%", model, 100*frac)
				continue
			}
			assert.Equal(t, p.K, len(p.Parts))
			assert.LessOrEqual(t, p.Peak.Need(), budget, "%s at %.0f%%", model, 100*frac)
			assert.Equal(t, whole, p.Whole)
			if p.K > 2 { // the fewest: one fewer does not fit
				parts, _ := rangeSplit(b, p.K-1, split.Range, 1)
				worst := int64(0)
				for _, part := range parts {
					worst = max(worst, Batch(spec, microOf(nil, b, part, nil)).Need())
				}
				assert.Greater(t, worst, budget, "%s at %.0f%%: K %d, %d fits too", model, 100*frac, p.K, p.K-1)
			}
			n := 0
			for _, part := range p.Parts {
				n += len(part)
			}
			assert.Equal(t, len(b.Output()), n)
		}

		_, err = Fit(spec, b, whole.Params, split.Range, 1)
		var be *BudgetError
		require.ErrorAs(t, err, &be, model)
		assert.Greater(t, be.Need, be.Budget)
		assert.Equal(t, whole.Params, be.Budget)
		assert.Contains(t, be.Error(), "too small")
	}
}

// TestMicroMatchesMeasure holds the estimate to the measurement on
// micro-batches (split.Split's parts, split.Builder's micro-batches) of
// every model, K = 2, 4, 8, and on the stand-in builder's.
func TestMicroMatchesMeasure(t *testing.T) {
	needExact(t)
	g := smallGraphs(t)["arxiv"]
	methods := []split.Method{split.Range, split.Random}
	if split.METISAvailable() == nil {
		methods = append(methods, split.REG)
	}
	bd := split.NewBuilder()
	for _, model := range nn.Models {
		for layers := 1; layers <= 3; layers++ {
			spec := specFor(g, model, layers, 32)
			b := sample(g, spec, 10, 200, 5)
			for i, k := range []int{2, 4, 8} {
				m := methods[i%len(methods)]
				parts, err := split.Split(b, k, m, 1)
				require.NoError(t, err)
				for _, mb := range []*block.Batch{bd.Micro(b, parts[0], nil), microOf(nil, b, parts[len(parts)-1], nil)} {
					est := Batch(spec, mb)
					meas, err := Measure(spec, g, mb, 1)
					require.NoError(t, err)
					assert.LessOrEqual(t, relErr(est.Total(), meas), 0.02, "%s L%d %s K=%d: estimated %d, measured %d", model, layers, m, k, est.Total(), meas)
				}
			}
		}
	}
}

// TestFitSplit runs Fit with split's own methods.
func TestFitSplit(t *testing.T) {
	g := smallGraphs(t)["arxiv"]
	spec := specFor(g, "sage-mean", 2, 64)
	b := sample(g, spec, 10, 400, 3)
	whole := Batch(spec, b)
	for _, m := range []split.Method{split.Range, split.Random, split.REG} {
		if m.UsesMETIS() && split.METISAvailable() != nil {
			continue
		}
		budget := whole.Need() / 2
		p, err := Fit(spec, b, budget, m, 1)
		require.NoError(t, err, m)
		assert.Greater(t, p.K, 1)
		assert.Len(t, p.Parts, p.K)
		assert.LessOrEqual(t, p.Peak.Need(), budget, m)
	}
}

func TestBudgetErrorIs(t *testing.T) {
	var err error = &BudgetError{Budget: 1, Need: 2}
	var be *BudgetError
	assert.True(t, errors.As(fmt.Errorf("wrapped: %w", err), &be))
}
