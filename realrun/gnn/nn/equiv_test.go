package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// handGraph is a 30-node graph: a ring of 0–15 with chords, a star
// around 16, a triangle 23–25 with a tail to 26, and 27–29 isolated; 4
// random features; 3 classes, a few nodes unlabelled.
func handGraph() *data.Graph {
	const n = 30
	edges := [][2]int32{{0, 8}, {3, 11}, {5, 13}, {2, 9}, {16, 17}, {16, 18}, {16, 19}, {16, 20}, {16, 21}, {16, 22}, {17, 18}, {23, 24}, {24, 25}, {25, 23}, {25, 26}, {15, 16}}
	for i := int32(0); i < 16; i++ {
		edges = append(edges, [2]int32{i, (i + 1) % 16})
	}
	adj := make([][]int32, n)
	for _, e := range edges {
		adj[e[0]] = append(adj[e[0]], e[1])
		adj[e[1]] = append(adj[e[1]], e[0])
	}
	g := &data.Graph{F: 4, Classes: []string{"a", "b", "c"}, Ptr: []int64{0}}
	rng := rand.New(rand.NewPCG(30, 1))
	for v := 0; v < n; v++ {
		g.Names = append(g.Names, fmt.Sprint("n", v))
		slices.Sort(adj[v])
		g.Nbr = append(g.Nbr, slices.Compact(adj[v])...)
		g.Ptr = append(g.Ptr, int64(len(g.Nbr)))
		for f := 0; f < g.F; f++ {
			g.X = append(g.X, float32(rng.NormFloat64()))
		}
		y := int32(v % 3)
		if v%7 == 4 {
			y = -1
		}
		g.Y = append(g.Y, y)
		if y >= 0 {
			g.Train = append(g.Train, int32(v))
		}
	}
	return g
}

// gatherRows returns the rows ids of x (width f).
func gatherRows(x []float32, f int, ids []int32) []float32 {
	out := make([]float32, 0, len(ids)*f)
	for _, v := range ids {
		out = append(out, x[int(v)*f:int(v+1)*f]...)
	}
	return out
}

// trainStep runs one training step of m on batch b (dropout off) with
// the loss over every labelled output node, taken in node-id order so
// that batches ordering nodes differently sum the same terms in the same
// order. It returns the loss, the gradients (before the step) and the
// logits by node id.
func trainStep(t *testing.T, m *Model, opt *Adam, g *data.Graph, b *block.Batch) (float64, [][]float32, map[int32][]float32) {
	t.Helper()
	c := m.Spec.Classes
	logits := m.Forward(b, gatherRows(g.X, g.F, b.Input()), true, nil)
	out := b.Output()
	require.Len(t, logits, len(out)*c)
	row := map[int32]int{}
	byID := map[int32][]float32{}
	for i, v := range out {
		row[v] = i
		byID[v] = append([]float32(nil), logits[i*c:(i+1)*c]...)
	}
	var ids, labels []int32
	var sel []float32
	for v := int32(0); v < int32(g.N()); v++ {
		if i, ok := row[v]; ok && g.Y[v] >= 0 {
			ids = append(ids, v)
			labels = append(labels, g.Y[v])
			sel = append(sel, logits[i*c:(i+1)*c]...)
		}
	}
	dSel := make([]float32, len(sel))
	loss, _ := CrossEntropy(sel, labels, c, dSel)
	d := make([]float32, len(logits))
	for k, v := range ids {
		copy(d[row[v]*c:(row[v]+1)*c], dSel[k*c:(k+1)*c])
	}
	m.ZeroGrad()
	m.Backward(d)
	var grads [][]float32
	for _, p := range m.Params() {
		grads = append(grads, append([]float32(nil), p.G...))
	}
	opt.Step(m.Params())
	return loss, grads, byID
}

// TestFullFanoutEquivalence: for every model kind, a training step on the
// sampled batch of every node with full fanouts equals the step on the
// full graph (block.FullGraph): the same logits per node, loss,
// gradients and parameters after Adam, within float tolerance.
func TestFullFanoutEquivalence(t *testing.T) {
	g := handGraph()
	all := make([]int32, g.N())
	for i := range all {
		all[i] = int32(i)
	}
	rand.New(rand.NewPCG(5, 5)).Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	for _, kind := range Models {
		for _, layers := range []int{1, 2, 3} {
			t.Run(fmt.Sprintf("%s/%d", kind, layers), func(t *testing.T) {
				s := Spec{Model: kind, In: g.F, Hidden: 6, Classes: len(g.Classes), Layers: layers, Heads: 2}
				ma, err := New(s, 11)
				require.NoError(t, err)
				mb, _ := New(s, 11)
				oa, ob := NewAdam(ma.Params(), 0.01), NewAdam(mb.Params(), 0.01)

				fanouts := make([]int, layers)
				for i := range fanouts {
					fanouts[i] = block.Full
				}
				sampled := block.NewSampler(g, fanouts).Sample(all, rand.New(rand.NewPCG(6, 6)))
				require.ElementsMatch(t, all, sampled.Output())
				full := block.FullGraph(g, layers)
				require.NotEqual(t, full.Output(), sampled.Output(), "the batches order the nodes differently")

				la, ga, xa := trainStep(t, ma, oa, g, sampled)
				lb, gb, xb := trainStep(t, mb, ob, g, full)
				assert.InDelta(t, lb, la, 1e-6*math.Max(1, math.Abs(lb)), "loss")
				for v, want := range xb {
					assert.InDeltaSlice(t, want, xa[v], 1e-5, "logits of node %d", v)
				}
				scale := 0.0
				for _, gs := range gb {
					for _, v := range gs {
						scale = math.Max(scale, math.Abs(float64(v)))
					}
				}
				require.Greater(t, scale, 1e-4)
				for i, p := range mb.Params() {
					for j := range p.W {
						if d := math.Abs(float64(ga[i][j] - gb[i][j])); !(d <= 1e-5*scale) {
							t.Errorf("%s[%d]: gradient %.7g sampled, %.7g full graph", p.Name, j, ga[i][j], gb[i][j])
						}
						// Adam's first step moves each weight by ≈ lr·sign(g): the
						// parameters agree unless a gradient is at rounding level.
						if d := math.Abs(float64(ma.Params()[i].W[j] - p.W[j])); !(d <= 1e-6) {
							t.Errorf("%s[%d]: %.7g after the sampled step, %.7g after the full-graph step", p.Name, j, ma.Params()[i].W[j], p.W[j])
						}
					}
				}
			})
		}
	}
}

// TestInfer: layer-wise inference (batches of a few destinations with
// their whole neighbourhoods, on several workers) gives the logits of
// Forward on the full graph in evaluation mode, and the representation
// is the last layer's input.
func TestInfer(t *testing.T) {
	g := handGraph()
	defer func(w int) { Workers = w }(Workers)
	for _, kind := range Models {
		for _, layers := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", kind, layers), func(t *testing.T) {
				s := Spec{Model: kind, In: g.F, Hidden: 6, Classes: len(g.Classes), Layers: layers, Heads: 3, Dropout: 0.5}
				m, err := New(s, 12)
				require.NoError(t, err)
				full := block.FullGraph(g, layers)
				require.Equal(t, g.N(), len(full.Output()))
				want := append([]float32(nil), m.Forward(full, gatherRows(g.X, g.F, full.Input()), false, nil)...)
				// The last layer's input on the full graph, from the layers
				// themselves.
				wantRepr := gatherRows(g.X, g.F, full.Input())
				for l := 0; l < layers-1; l++ {
					y := m.Layers()[l].Forward(&full.Blocks[l], wantRepr, false, nil)
					wantRepr = make([]float32, len(y))
					activate(wantRepr, nil, y, kind == "gat")
				}
				for _, w := range []int{1, 3} {
					Workers = w
					for _, batch := range []int{1, 7, 100} {
						repr, logits := m.Infer(g, batch)
						require.Len(t, logits, g.N()*s.Classes)
						require.Len(t, repr, g.N()*m.ReprDim())
						c := s.Classes
						for i, v := range full.Output() {
							assert.InDeltaSlice(t, want[i*c:(i+1)*c], logits[int(v)*c:int(v+1)*c], 1e-5, "node %d, batch %d, %d workers", v, batch, w)
						}
						r := m.ReprDim()
						for i, v := range full.Blocks[layers-1].Src {
							assert.InDeltaSlice(t, wantRepr[i*r:(i+1)*r], repr[int(v)*r:int(v+1)*r], 1e-5, "repr of node %d", v)
						}
					}
				}
				// Infer reads the current parameters.
				m.Params()[0].W[0] += 1
				_, l2 := m.Infer(g, 7)
				assert.NotEqual(t, want, l2)
			})
		}
	}
}

// TestReuse: a model's Forward and Backward on a batch give the same
// logits and gradients whether or not the model has run other batches
// before (no state leaks between batches through reused buffers), for
// batches of every shape Infer and training make: whole neighbourhoods
// of a few nodes (isolated ones included, where no neighbour repeats,
// where some do) and sampled multi-layer batches.
func TestReuse(t *testing.T) {
	g := handGraph()
	var one []*block.Batch
	for _, ids := range [][]int32{{28, 29}, {0, 1, 2, 3, 4, 5, 6}, {14, 15, 16}, {16, 17, 18, 19}, {23, 24, 25, 26, 27}, {0, 8, 9}} {
		one = append(one, &block.Batch{Blocks: []block.Block{*block.Neighborhood(g, ids)}})
	}
	rng := rand.New(rand.NewPCG(13, 1))
	var three []*block.Batch
	for _, n := range []int{5, 1, 8, 3} {
		three = append(three, testBatch(3, n, n%4+3, rng)) // testBlock needs 3 candidates besides a row itself
	}
	x := normals(1000*g.F, rng)
	for _, kind := range Models {
		for _, bs := range [][]*block.Batch{one, three} {
			layers := len(bs[0].Blocks)
			t.Run(fmt.Sprintf("%s/%d", kind, layers), func(t *testing.T) {
				s := Spec{Model: kind, In: g.F, Hidden: 6, Classes: 3, Layers: layers, Heads: 2}
				used, err := New(s, 14)
				require.NoError(t, err)
				for round := 0; round < 2; round++ {
					for i, b := range bs {
						fresh, _ := New(s, 14)
						xb := x[:b.Blocks[0].NumSrc()*s.In]
						want := fresh.Forward(b, xb, false, nil)
						d := make([]float32, len(want))
						for j := range d {
							d[j] = float32(j%5) - 2
						}
						fresh.Backward(d)
						got := used.Forward(b, xb, false, nil)
						require.InDeltaSlice(t, want, got, 1e-6, "round %d, batch %d: logits", round, i)
						used.ZeroGrad()
						used.Backward(d)
						for j, p := range fresh.Params() {
							require.InDeltaSlice(t, p.G, used.Params()[j].G, 1e-5, "round %d, batch %d: %s", round, i, p.Name)
						}
					}
				}
			})
		}
	}
}
