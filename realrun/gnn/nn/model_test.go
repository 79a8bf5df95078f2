package nn

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

func TestSpecCheck(t *testing.T) {
	good := Spec{Model: "gat", In: 5, Hidden: 8, Classes: 3, Layers: 2, Heads: 4, Dropout: 0.5}
	require.NoError(t, good.Check())
	for _, m := range Models {
		s := good
		s.Model = m
		require.NoError(t, s.Check(), m)
	}
	tests := []struct {
		name string
		edit func(*Spec)
		err  string
	}{
		{"unknown model", func(s *Spec) { s.Model = "gcn" }, `Model "gcn" is not one of mlp, sage-mean`},
		{"no layers", func(s *Spec) { s.Layers = 0 }, "Layers is 0, want 1–5"},
		{"too many layers", func(s *Spec) { s.Layers = 6 }, "Layers is 6, want 1–5"},
		{"no input", func(s *Spec) { s.In = 0 }, "In (the feature width) is 0"},
		{"no hidden", func(s *Spec) { s.Hidden = 0 }, "Hidden is 0"},
		{"one class", func(s *Spec) { s.Classes = 1 }, "Classes is 1, want ≥ 2"},
		{"dropout 1", func(s *Spec) { s.Dropout = 1 }, "Dropout is 1"},
		{"negative dropout", func(s *Spec) { s.Dropout = -0.1 }, "Dropout is -0.1"},
		{"NaN dropout", func(s *Spec) { s.Dropout = math.NaN() }, "Dropout is NaN"},
		{"gat without heads", func(s *Spec) { s.Heads = 0 }, "Heads is 0, want ≥ 1 for gat"},
		{"gat heads not dividing hidden", func(s *Spec) { s.Heads = 3 }, "Hidden 8 is not a multiple of Heads 3"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := good
			tc.edit(&s)
			err := s.Check()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.True(t, strings.HasPrefix(err.Error(), "model spec: "), err.Error())
			assert.NotContains(t, err.Error(), "\n")
			assert.NotContains(t, err.Error(), "--")
			_, err = New(s, 1)
			assert.Error(t, err, "New checks the spec")
		})
	}
	// Heads matter for gat only, and divisibility only with hidden layers.
	s := good
	s.Model, s.Heads = "sage-mean", 0
	assert.NoError(t, s.Check())
	s = good
	s.Layers, s.Heads = 1, 3
	assert.NoError(t, s.Check())

	assert.Equal(t, []int{0, 0}, Spec{Model: "mlp", Layers: 2}.Fanouts([]int{10, 25}))
	assert.Equal(t, []int{10, block.Full}, Spec{Model: "gat", Layers: 2}.Fanouts([]int{10, block.Full}))
}

// testBatch is a batch of `layers` blocks with `out` output nodes; every
// block's sources are its destinations and `extra` more, with 0–3
// neighbours per destination (testBlock).
func testBatch(layers, out, extra int, rng *rand.Rand) *block.Batch {
	bs := make([]block.Block, layers)
	next := int32(0)
	var dst []int32
	for i := 0; i < out; i++ {
		dst = append(dst, next)
		next++
	}
	for l := layers - 1; l >= 0; l-- {
		b := testBlock(len(dst), len(dst)+extra, rng)
		copy(b.Src, dst)
		for i := len(dst); i < len(b.Src); i++ {
			b.Src[i] = next
			next++
		}
		bs[l] = *b
		dst = b.Src
	}
	return &block.Batch{Blocks: bs}
}

// smallSpec is a tiny model of kind m.
func smallSpec(m string, layers int, dropout float64) Spec {
	return Spec{Model: m, In: 3, Hidden: 4, Classes: 3, Layers: layers, Heads: 2, Dropout: dropout}
}

// TestModelGrad checks the whole stack's parameter gradients — every
// layer, the activations, dropout, the loss — against central finite
// differences of the mean cross-entropy, for every model kind at 1 and 3
// layers, without dropout and with (the same mask every evaluation).
func TestModelGrad(t *testing.T) {
	for _, kind := range Models {
		for _, layers := range []int{1, 3} {
			for _, drop := range []float64{0, 0.3} {
				if layers == 1 && drop > 0 {
					continue // nothing is dropped after the last layer
				}
				t.Run(fmt.Sprintf("%s/%d/%v", kind, layers, drop), func(t *testing.T) {
					checkModelGrad(t, smallSpec(kind, layers, drop), 9)
				})
			}
		}
	}
}

func checkModelGrad(t *testing.T, s Spec, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	m, err := New(s, seed)
	require.NoError(t, err)
	// Move every parameter off its initial value: zero biases put the
	// pre-activation of a row of zeros (a fully dropped input) exactly at
	// ReLU's kink, where the finite difference sees a one-sided slope.
	for _, p := range m.Params() {
		for i := range p.W {
			p.W[i] += float32(0.1 * rng.NormFloat64())
		}
	}
	b := testBatch(s.Layers, 6, 4, rng)
	x := normals(b.Blocks[0].NumSrc()*s.In, rng)
	labels := make([]int32, b.Blocks[s.Layers-1].NumDst)
	for i := range labels {
		labels[i] = int32(rng.IntN(s.Classes))
	}
	d := make([]float32, len(labels)*s.Classes)
	loss := func(grad bool) float64 {
		drng := rand.New(rand.NewPCG(seed, 4)) // the same dropout mask each time
		logits := m.Forward(b, x, true, drng)
		var dd []float32
		if grad {
			dd = d
		}
		l, _ := CrossEntropy(logits, labels, s.Classes, dd)
		return l
	}
	m.ZeroGrad()
	loss(true)
	m.Backward(d)
	scale := 0.0
	grads := map[string][]float32{}
	for _, p := range m.Params() {
		grads[p.Name] = append([]float32(nil), p.G...)
		for _, g := range p.G {
			scale = math.Max(scale, math.Abs(float64(g)))
		}
	}
	require.Greater(t, scale, 1e-3, "the gradients are not all ~0")
	// Two steps: a coordinate whose differences disagree has a kink
	// (ReLU, pool's max) within a step and is skipped, up to a tenth.
	o := gradOpts{steps: []float32{1e-3, 3e-4}, skip: 0.1, tol: func(num float64) float64 { return 2e-2*math.Abs(num) + 2e-3*scale }}
	for _, p := range m.Params() {
		o.compare(t, p.Name, p.W, grads[p.Name], func() float64 { return loss(false) })
	}
}

func TestModelParams(t *testing.T) {
	m, err := New(Spec{Model: "mlp", In: 5, Hidden: 7, Classes: 3, Layers: 3}, 1)
	require.NoError(t, err)
	var names []string
	for _, p := range m.Params() {
		names = append(names, fmt.Sprint(p.Name, p.Shape))
	}
	assert.Equal(t, []string{"layers.0.weight[7 5]", "layers.0.bias[7]", "layers.1.weight[7 7]", "layers.1.bias[7]", "layers.2.weight[3 7]", "layers.2.bias[3]"}, names)
	assert.Equal(t, 7*5+7+7*7+7+3*7+3, m.NumParams())
	assert.Equal(t, 7, m.ReprDim())
	m1, _ := New(Spec{Model: "mlp", In: 5, Hidden: 7, Classes: 3, Layers: 1}, 1)
	assert.Equal(t, 5, m1.ReprDim())

	// The seed decides the initial parameters.
	a, _ := New(m.Spec, 1)
	c, _ := New(m.Spec, 2)
	assert.Equal(t, m.Params()[2].W, a.Params()[2].W)
	assert.NotEqual(t, m.Params()[2].W, c.Params()[2].W)

	// FLOPs of a 3-layer mlp: 3 × Σ 2·d·in·out, less the first layer's
	// input gradient, which it skips.
	b := testBatch(3, 4, 2, rand.New(rand.NewPCG(1, 1)))
	d0, d1, d2 := b.Blocks[0].NumDst, b.Blocks[1].NumDst, b.Blocks[2].NumDst
	assert.Equal(t, float64(2*2*d0*5*7+3*2*(d1*7*7+d2*7*3)), m.FLOPs(b))
}

// TestFLOPs counts a two-layer batch's products by hand for every model.
func TestFLOPs(t *testing.T) {
	// Block 0: 3 destinations among 5 sources, edges 0←{1,2}, 1←{2},
	// 2←{} (e = 3, 2 distinct rows, 2 destinations with a neighbour);
	// block 1: 2 destinations among those 3, edges 0←{1}, 1←{0,2}.
	b := &block.Batch{Blocks: []block.Block{
		{Src: []int32{0, 1, 2, 3, 4}, NumDst: 3, Ptr: []int32{0, 2, 3, 3}, Nbr: []int32{1, 2, 2}},
		{Src: []int32{0, 1, 2}, NumDst: 2, Ptr: []int32{0, 1, 3}, Nbr: []int32{1, 0, 2}},
	}}
	const in, hid, cls, heads = 4, 6, 3, 2
	lin := func(m, k, n int) float64 { return float64(2 * m * k * n) }
	// Each product runs 3× (forward, dW, dX) but the first layer's
	// products that only its input gradient needs run once (forward).
	want := map[string]float64{
		"mlp": 2*lin(3, in, hid) + 3*lin(2, hid, cls),
		// sage-mean's layer 1 narrows (6 → 3) over 3 sources for 2
		// destinations: it projects its 3 source rows first.
		"sage-mean": 2*2*lin(3, in, hid) + 3*(lin(2, hid, cls)+lin(3, hid, cls)),
		// Layer 0 keeps fc_neigh's dX (dh, for fc_pool's gradients).
		"sage-pool": (2*lin(3, in, hid) + 3*lin(3, in, hid) + 2*lin(5, in, in)) + 3*(2*lin(2, hid, cls)+lin(3, hid, hid)),
		// Layer 0: 2 distinct rows, 3−2 later steps; it keeps fc_neigh's
		// and the hidden product's dX (the gradient through time), skips
		// fc_self's and the input product's. Layer 1: 3 distinct rows,
		// 3−2 later steps.
		"sage-lstm": (2*lin(3, in, hid) + 3*lin(3, in, hid) + 2*lin(2, in, 4*in) + 3*lin(1, in, 4*in)) + 3*(2*lin(2, hid, cls)+lin(3, hid, 4*hid)+lin(1, hid, 4*hid)),
		"gat":       2*lin(5, in, hid) + 3*lin(3, hid, heads*cls),
	}
	for _, kind := range Models {
		m, err := New(Spec{Model: kind, In: in, Hidden: hid, Classes: cls, Layers: 2, Heads: heads}, 1)
		require.NoError(t, err)
		if kind == "sage-mean" {
			require.False(t, projectFirst(in, hid, 3, 5, 3), "layer 0 widens")
			require.True(t, projectFirst(hid, cls, 2, 3, 3), "layer 1 narrows")
		}
		if _, ok := m.Layers()[0].(InputGradSetter); !ok {
			t.Fatalf("%s: the first layer no longer skips its input gradient: fix the counts", kind)
		}
		assert.Equal(t, want[kind], m.FLOPs(b), kind)
	}
}

// TestDropout checks inverted dropout's statistics in training and its
// absence in evaluation.
func TestDropout(t *testing.T) {
	s := Spec{Model: "mlp", In: 4, Hidden: 50, Classes: 2, Layers: 2, Dropout: 0.4}
	m, err := New(s, 1)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(2, 2))
	b := testBatch(2, 200, 0, rng)
	x := normals(b.Blocks[0].NumSrc()*s.In, rng)
	eval := append([]float32(nil), m.Forward(b, x, false, nil)...)
	act := append([]float32(nil), m.h[0]...) // layer 0's activations
	train := m.Forward(b, x, true, rng)
	assert.NotEqual(t, eval, train)
	zeros, pos := 0, 0
	for i, v := range m.h[0] {
		if act[i] <= 0 {
			assert.Zero(t, m.k[0][i], "ReLU's derivative")
			continue
		}
		pos++
		if v == 0 {
			zeros++
			assert.Zero(t, m.k[0][i])
		} else {
			assert.InDelta(t, act[i]/0.6, v, 1e-5)
			assert.InDelta(t, 1/0.6, m.k[0][i], 1e-6)
		}
	}
	require.Greater(t, pos, 2000)
	assert.InDelta(t, 0.4, float64(zeros)/float64(pos), 0.03, "dropped fraction")

	// Without dropout, training and evaluation agree.
	s.Dropout = 0
	m0, _ := New(s, 1)
	e0 := append([]float32(nil), m0.Forward(b, x, false, nil)...)
	assert.Equal(t, e0, m0.Forward(b, x, true, nil))
	assert.Equal(t, eval, e0, "the same seed, the same parameters")
}

func TestModelSaveLoad(t *testing.T) {
	for _, kind := range Models {
		t.Run(kind, func(t *testing.T) {
			s := smallSpec(kind, 3, 0)
			a, err := New(s, 1)
			require.NoError(t, err)
			var buf bytes.Buffer
			require.NoError(t, a.Save(&buf))
			buf.WriteString("tail")
			file := buf.Bytes()
			b, _ := New(s, 2)
			r := bytes.NewReader(file)
			require.NoError(t, b.Load(r))
			assert.Equal(t, 4, r.Len(), "Load reads no further than the model")
			for i, p := range a.Params() {
				assert.Equal(t, p.W, b.Params()[i].W, p.Name)
			}
		})
	}
	s := smallSpec("mlp", 2, 0)
	a, _ := New(s, 1)
	var buf bytes.Buffer
	require.NoError(t, a.Save(&buf))
	file := buf.Bytes()
	tests := []struct {
		name string
		spec Spec
		file []byte
		err  string
	}{
		{"other hidden", Spec{Model: "mlp", In: 3, Hidden: 5, Classes: 3, Layers: 2}, file, "model file: parameter 0 is layers.0.weight [4×3], the model's is layers.0.weight [5×3]"},
		{"other depth", smallSpec("mlp", 3, 0), file, "model file: 4 parameters, the model (mlp, 3 layers) has 6"},
		{"other model", smallSpec("sage-mean", 2, 0), file, "model file: "},
		{"truncated", s, file[:len(file)-3], "unexpected EOF"},
		{"empty", s, nil, "model file: empty"},
		{"not a model", s, []byte("TFGNNADM\x01\x00\x00\x00"), "model file: starts with"},
		{"newer version", s, append([]byte("TFGNNMOD\x07\x00\x00\x00"), file[12:]...), "model file: version 7"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(tc.spec, 3)
			require.NoError(t, err)
			before := append([]float32(nil), m.Params()[0].W...)
			err = m.Load(bytes.NewReader(tc.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.NotContains(t, err.Error(), "\n")
			assert.Equal(t, before, m.Params()[0].W, "a failed Load leaves the model")
		})
	}
}

// TestModelNoAllocs: a training step of a built model on a batch it has
// seen allocates no buffers (one worker, so no goroutines; the row
// helpers' closures, a few dozen bytes each, are all it allocates).
func TestModelNoAllocs(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	Workers = 1
	s := Spec{Model: "mlp", In: 32, Hidden: 64, Classes: 4, Layers: 3, Dropout: 0.5}
	m, err := New(s, 1)
	require.NoError(t, err)
	rng := rand.New(rand.NewPCG(1, 2))
	b := testBatch(3, 200, 50, rng)
	x := make([]float32, b.Blocks[0].NumSrc()*s.In)
	labels := make([]int32, 200)
	d := make([]float32, 200*s.Classes)
	opt := NewAdam(m.Params(), 0.01)
	step := func() {
		logits := m.Forward(b, x, true, rng)
		CrossEntropy(logits, labels, s.Classes, d)
		m.Backward(d)
		opt.Step(m.Params())
		m.ZeroGrad()
	}
	step()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	perStep := uint64(math.MaxUint64)
	for round := 0; round < 3; round++ { // the least of three: the runtime allocates now and then
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		const runs = 20
		for i := 0; i < runs; i++ {
			step()
		}
		runtime.ReadMemStats(&after)
		perStep = min(perStep, (after.TotalAlloc-before.TotalAlloc)/runs)
	}
	assert.Less(t, perStep, uint64(1024), "bytes allocated per step (the batch's buffers would take %d)", len(x)*4)
}

// benchBatch is a batch of `layers` blocks with `out` outputs and up to
// fanout neighbours per destination drawn from `pool` new sources each.
func benchBatch(layers, out, fanout, pool int, rng *rand.Rand) *block.Batch {
	bs := make([]block.Block, layers)
	n := out
	for l := layers - 1; l >= 0; l-- {
		b := block.Block{NumDst: n, Ptr: []int32{0}}
		for i := 0; i < n+pool; i++ {
			b.Src = append(b.Src, int32(i))
		}
		for i := 0; i < n; i++ {
			for k := 0; k < fanout; k++ {
				j := int32(n + rng.IntN(pool))
				b.Nbr = append(b.Nbr, j)
			}
			slices.Sort(b.Nbr[b.Ptr[i]:])
			b.Nbr = append(b.Nbr[:b.Ptr[i]], slices.Compact(b.Nbr[b.Ptr[i]:])...)
			b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
		}
		bs[l] = b
		n += pool
	}
	return &block.Batch{Blocks: bs}
}

// BenchmarkTrainStep times one training step (Forward, loss, Backward,
// Adam) of each model at a products-like shape (100 features, 256 hidden,
// 47 classes, 2 layers, fanouts 10/25, 1024 outputs) and reports the
// GEMM rate by FLOPs.
func BenchmarkTrainStep(bm *testing.B) {
	for _, kind := range Models {
		bm.Run(kind, func(bm *testing.B) {
			s := Spec{Model: kind, In: 100, Hidden: 256, Classes: 47, Layers: 2, Heads: 4, Dropout: 0.5}
			m, err := New(s, 1)
			require.NoError(bm, err)
			rng := rand.New(rand.NewPCG(1, 2))
			fan, pool := 25, 8000
			if kind == "mlp" {
				fan, pool = 0, 0
			}
			b := benchBatch(2, 1024, fan, pool, rng)
			x := normals(b.Blocks[0].NumSrc()*s.In, rng)
			labels := make([]int32, 1024)
			for i := range labels {
				labels[i] = int32(rng.IntN(s.Classes))
			}
			d := make([]float32, 1024*s.Classes)
			opt := NewAdam(m.Params(), 0.01)
			bm.ResetTimer()
			for i := 0; i < bm.N; i++ {
				logits := m.Forward(b, x, true, rng)
				CrossEntropy(logits, labels, s.Classes, d)
				m.Backward(d)
				opt.Step(m.Params())
				m.ZeroGrad()
			}
			bm.ReportMetric(m.FLOPs(b)*float64(bm.N)/bm.Elapsed().Seconds()/1e9, "GFLOP/s")
		})
	}
}

// TestDropoutStreams: dropout over many values, split over workers,
// drops the same values whatever Workers is, at rate p; a node's row
// gets the same mask wherever it sits among other rows; and ReLU's
// derivative is 0 at 0 and 1 above.
func TestDropoutStreams(t *testing.T) {
	defer func(w int) { Workers = w }(Workers)
	const width = 37
	rows := 2711
	n := rows * width
	ids := make([]int32, rows)
	for i := range ids {
		ids[i] = int32(3*i + 1)
	}
	var res [][]float32
	for _, w := range []int{1, 3} {
		Workers = w
		h, k := make([]float32, n), make([]float32, n)
		for i := range h {
			h[i], k[i] = 1, 2
		}
		dropout(h, k, width, ids, 0.25, 88)
		zeros := 0
		for i := range h {
			if h[i] == 0 {
				zeros++
				assert.Zero(t, k[i])
			} else {
				require.InDelta(t, 1/0.75, h[i], 1e-6)
				require.InDelta(t, 2/0.75, k[i], 1e-6)
			}
		}
		assert.InDelta(t, 0.25, float64(zeros)/float64(n), 0.01)
		res = append(res, h)
	}
	assert.Equal(t, res[0], res[1])
	// Rows 5 and 900 alone, in the other order: the same masks.
	h, k := make([]float32, 2*width), make([]float32, 2*width)
	for i := range h {
		h[i], k[i] = 1, 2
	}
	dropout(h, k, width, []int32{ids[900], ids[5]}, 0.25, 88)
	assert.Equal(t, res[0][900*width:901*width], h[:width])
	assert.Equal(t, res[0][5*width:6*width], h[width:])

	y := []float32{-1, 0, float32(math.Copysign(0, -1)), 1e-30, 2}
	a, k := make([]float32, 5), make([]float32, 5)
	activate(a, k, y, false)
	assert.Equal(t, []float32{0, 0, 0, 1e-30, 2}, a)
	assert.Equal(t, []float32{0, 0, 0, 1, 1}, k)
	activate(a, k, y, true)
	assert.InDelta(t, math.Expm1(-1), a[0], 1e-7)
	assert.InDelta(t, math.Exp(-1), k[0], 1e-7)
	assert.Equal(t, []float32{1, 1, 1, 1}, k[1:])
}
