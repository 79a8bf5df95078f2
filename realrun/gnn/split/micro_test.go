package split

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

// checkMicro asserts every invariant of mb = the micro-batch of b for
// the output positions outs (b's rows hold distinct nodes, as sampled
// batches' do).
func checkMicro(t *testing.T, b *block.Batch, outs []int32, mb *block.Batch) {
	t.Helper()
	L := len(b.Blocks)
	require.Len(t, mb.Blocks, L)
	want := make([]int32, len(outs))
	for i, p := range outs {
		want[i] = b.Output()[p]
	}
	require.Equal(t, want, mb.Output(), "output nodes")
	for l := range mb.Blocks {
		blk, whole := &mb.Blocks[l], &b.Blocks[l]
		require.Len(t, blk.Ptr, blk.NumDst+1, "block %d Ptr", l)
		require.Equal(t, int32(0), blk.Ptr[0])
		require.Len(t, blk.Nbr, int(blk.Ptr[blk.NumDst]))
		if l+1 < L {
			require.Equal(t, mb.Blocks[l+1].Src, blk.Src[:blk.NumDst], "block %d's destinations are block %d's sources", l, l+1)
		}
		row := map[int32]int32{} // node → row in b's block
		for r, v := range whole.Src {
			row[v] = int32(r)
		}
		seen := map[int32]bool{}
		for _, v := range blk.Src {
			require.False(t, seen[v], "block %d: source %d twice", l, v)
			seen[v] = true
		}
		read := make([]bool, blk.NumSrc())
		next := int32(blk.NumDst) // sources after the destinations: in first-read order
		for i := 0; i < blk.NumDst; i++ {
			read[i] = true
			r, ok := row[blk.Src[i]]
			require.True(t, ok && int(r) < whole.NumDst, "block %d: destination %d is one of b's", l, blk.Src[i])
			var got, exp []int32
			for _, u := range blk.Nbr[blk.Ptr[i]:blk.Ptr[i+1]] {
				require.NotEqual(t, int32(i), u, "block %d: destination %d is its own neighbour", l, i)
				require.LessOrEqual(t, u, next, "block %d: source %d before %d", l, u, next)
				if u == next {
					next++
				}
				read[u] = true
				got = append(got, blk.Src[u])
			}
			if len(whole.Ptr) == whole.NumDst+1 {
				for _, u := range whole.Nbr[whole.Ptr[r]:whole.Ptr[r+1]] {
					exp = append(exp, whole.Src[u])
				}
			}
			require.Equal(t, exp, got, "block %d: node %d keeps b's neighbours in b's order", l, blk.Src[i])
		}
		require.Equal(t, int32(blk.NumSrc()), next, "block %d: every source is read", l)
		require.NotContains(t, read, false)
	}
}

func TestMicroInvariants(t *testing.T) {
	g := smallGraph(t)
	for _, c := range []struct {
		name    string
		fanouts []int
		n       int
	}{
		{"1 layer", []int{6}, 80},
		{"2 layers", []int{5, 7}, 120},
		{"3 layers", []int{3, 4, 5}, 100},
		{"3 layers full", []int{block.Full, 2, block.Full}, 30},
		{"mlp", []int{0, 0, 0}, 50},
		{"mlp 1 layer", []int{0}, 50},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := sample(g, c.n, c.fanouts, 3)
			bd := NewBuilder()
			var into *block.Batch
			for _, m := range []Method{Range, Random} {
				for _, k := range []int{1, 2, 5, c.n} {
					parts, err := Split(b, k, m, 4)
					require.NoError(t, err)
					total := 0
					for _, p := range parts {
						into = bd.Micro(b, p, into)
						checkMicro(t, b, p, into)
						assert.Equal(t, len(into.Input()), bd.Inputs(b, p), "Inputs")
						total += len(into.Input())
					}
					s := Measure(b, parts)
					assert.Equal(t, total-len(b.Input()), s.Redundant)
					assert.GreaterOrEqual(t, s.Redundant, 0)
					if k == 1 {
						assert.Equal(t, b, into, "one micro-batch is the batch")
						assert.Zero(t, s.Redundant)
					}
				}
			}
			if slices.Max(c.fanouts) == 0 {
				assert.Zero(t, Measure(b, rangeParts(c.n, 4)).Redundant, "an mlp batch shares no rows")
			}
			// Any subset, in any order (not only Split's parts).
			outs := []int32{int32(c.n - 1), 0, int32(c.n / 2)}
			checkMicro(t, b, outs, bd.Micro(b, outs, nil))
		})
	}
}

func TestMicroReuse(t *testing.T) {
	g := smallGraph(t)
	b := sample(g, 200, []int{5, 10}, 1)
	bd := NewBuilder()
	parts, err := Split(b, 4, Random, 1)
	require.NoError(t, err)
	into := bd.Micro(b, parts[0], nil)
	into = bd.Micro(b, parts[1], into)
	assert.Equal(t, NewBuilder().Micro(b, parts[1], nil), into, "a reused batch holds the same micro-batch")
	assert.Zero(t, testing.AllocsPerRun(20, func() {
		for _, p := range parts {
			into = bd.Micro(b, p, into)
		}
	}), "no allocation once the batch and scratch have grown")
	// Another, larger batch grows the scratch.
	big := sample(g, 400, []int{10, 10, 10}, 2)
	mb := bd.Micro(big, []int32{0, 5, 399}, into)
	checkMicro(t, big, []int32{0, 5, 399}, mb)
	assert.Panics(t, func() { bd.Micro(b, []int32{200}, nil) }, "a position out of range is a caller's bug")
	assert.Equal(t, b, bd.Micro(b, rangeParts(200, 1)[0], b), "into == b is not overwritten")
}

// dropRng returns the dropout generator in the state every micro-batch
// starts from.
func dropRng() *rand.Rand { return rand.New(rand.NewPCG(77, 78)) }

// closeRel asserts |got−want| ≤ tol·scale for every value, scale the
// largest |want| (at least tiny), and returns the worst ratio found.
func closeRel(t *testing.T, want, got []float32, tol float64, what string) float64 {
	t.Helper()
	require.Len(t, got, len(want), what)
	scale := 1e-30
	for _, w := range want {
		scale = max(scale, math.Abs(float64(w)))
	}
	worst := 0.0
	for i := range want {
		d := math.Abs(float64(got[i])-float64(want[i])) / scale
		worst = max(worst, d)
		if d > tol {
			require.Failf(t, "values differ", "%s[%d]: %g, want %g (scale %g, relative %g > %g)", what, i, got[i], want[i], scale, d, tol)
		}
	}
	return worst
}

// TestMicroEquivalence is the guarantee micro-batches give: for every
// model, the micro-batches' logits are the batch's rows, and their
// gradients, weighted by their share of the outputs, add up to the
// batch's — with dropout too, when each starts from the same rng state.
func TestMicroEquivalence(t *testing.T) {
	g := smallGraph(t)
	worstLogit, worstGrad := 0.0, 0.0
	for _, model := range nn.Models {
		for layers := 1; layers <= 3; layers++ {
			for _, dropout := range []float64{0, 0.5} {
				name := fmt.Sprintf("%s/%d layers/dropout %v", model, layers, dropout)
				t.Run(name, func(t *testing.T) {
					spec := nn.Spec{Model: model, In: g.F, Hidden: 12, Classes: len(g.Classes), Layers: layers, Heads: 2, Dropout: dropout}
					require.NoError(t, spec.Check())
					b := sample(g, 90, spec.Fanouts([]int{4, 6, 5}[:layers]), uint64(layers))
					out := b.Output()
					n := len(out)
					m, err := nn.New(spec, 5)
					require.NoError(t, err)
					c := spec.Classes
					x := g.Gather(nil, b.Input(), 1)
					whole := slices.Clone(m.Forward(b, x, true, dropRng()))
					if dropout > 0 && layers > 1 {
						assert.NotEqual(t, whole, m.Forward(b, x, false, nil), "dropout drops something")
					}
					m.ZeroGrad()
					m.TrainStep(b, x, g.Labels(nil, out), 1, dropRng())
					var grads [][]float32
					for _, p := range m.Params() {
						grads = append(grads, slices.Clone(p.G))
					}
					m.ZeroGrad()

					method := []Method{Random, Range, Random}[layers-1]
					parts, err := Split(b, 3+layers, method, uint64(layers))
					require.NoError(t, err)
					bd := NewBuilder()
					var mb *block.Batch
					for i, p := range parts {
						mb = bd.Micro(b, p, mb)
						xi := g.Gather(nil, mb.Input(), 1)
						logits := m.Forward(mb, xi, true, dropRng())
						var want []float32
						for _, pos := range p {
							want = append(want, whole[int(pos)*c:int(pos+1)*c]...)
						}
						worstLogit = max(worstLogit, closeRel(t, want, logits, 1e-5, fmt.Sprintf("micro-batch %d logits", i)))
						m.TrainStep(mb, xi, g.Labels(nil, mb.Output()), float64(len(p))/float64(n), dropRng())
					}
					for j, p := range m.Params() {
						worstGrad = max(worstGrad, closeRel(t, grads[j], p.G, 1e-4, p.Name+" gradient"))
					}
				})
			}
		}
	}
	t.Logf("worst relative differences: logits %.2g, gradients %.2g", worstLogit, worstGrad)
}

// TestMicroTraining runs a few Adam steps of a batch and of its
// micro-batches side by side: the parameters stay together.
func TestMicroTraining(t *testing.T) {
	g := smallGraph(t)
	for _, model := range nn.Models {
		t.Run(model, func(t *testing.T) {
			spec := nn.Spec{Model: model, In: g.F, Hidden: 16, Classes: len(g.Classes), Layers: 2, Heads: 2, Dropout: 0.3}
			whole, err := nn.New(spec, 1)
			require.NoError(t, err)
			micro, err := nn.New(spec, 1)
			require.NoError(t, err)
			optW, optM := nn.NewAdam(whole.Params(), 0.01), nn.NewAdam(micro.Params(), 0.01)
			bd := NewBuilder()
			for step := range 3 {
				b := sample(g, 120, spec.Fanouts([]int{5, 8}), uint64(10+step))
				rng := func() *rand.Rand { return rand.New(rand.NewPCG(uint64(step), 9)) }
				lossW, _ := whole.TrainStep(b, g.Gather(nil, b.Input(), 1), g.Labels(nil, b.Output()), 1, rng())
				optW.Step(whole.Params())
				whole.ZeroGrad()
				parts, err := Split(b, 4, Random, uint64(step))
				require.NoError(t, err)
				lossM := 0.0
				for _, p := range parts {
					mb := bd.Micro(b, p, nil)
					w := float64(len(p)) / float64(len(b.Output()))
					l, _ := micro.TrainStep(mb, g.Gather(nil, mb.Input(), 1), g.Labels(nil, mb.Output()), w, rng())
					lossM += w * l
				}
				optM.Step(micro.Params())
				micro.ZeroGrad()
				assert.InDelta(t, lossW, lossM, 1e-5*max(1, lossW), "step %d loss", step)
			}
			// Adam moves each weight by about lr = 0.01 a step, whatever
			// its gradient's size, so a gradient at rounding level may
			// move differently: the runs stay within 2% of a step.
			worst := 0.0
			for j, p := range micro.Params() {
				for i := range p.W {
					d := math.Abs(float64(whole.Params()[j].W[i] - p.W[i]))
					worst = max(worst, d)
					require.LessOrEqual(t, d, 2e-4, "%s[%d]", p.Name, i)
				}
			}
			t.Logf("largest parameter difference %.2g", worst)
		})
	}
}
