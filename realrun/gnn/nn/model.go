package nn

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// Models are the model names a Spec accepts, in the order the
// documentation lists them.
var Models = []string{"mlp", "sage-mean", "sage-pool", "sage-lstm", "gat"}

// MaxLayers is the deepest model a Spec accepts.
const MaxLayers = 5

// Spec is a model's shape.
type Spec struct {
	// Model is mlp, sage-mean, sage-pool, sage-lstm or gat (Models).
	Model string
	// In is the input feature width, Hidden the width of every hidden
	// layer's output, Classes the number of classes, Layers the number
	// of layers (1–MaxLayers), Heads the number of GAT attention heads
	// (gat only; Hidden must be a multiple of it when Layers > 1).
	In, Hidden, Classes, Layers, Heads int
	// Dropout is the probability of zeroing a hidden activation in
	// training (inverted dropout), in [0, 1).
	Dropout float64
}

// Check reports the first bad field of s, in one line naming the field.
func (s Spec) Check() error {
	known := false
	for _, m := range Models {
		known = known || s.Model == m
	}
	switch {
	case !known:
		return fmt.Errorf("model spec: Model %q is not one of %s", s.Model, strings.Join(Models, ", "))
	case s.Layers < 1 || s.Layers > MaxLayers:
		return fmt.Errorf("model spec: Layers is %d, want 1–%d", s.Layers, MaxLayers)
	case s.In < 1:
		return fmt.Errorf("model spec: In (the feature width) is %d, want ≥ 1", s.In)
	case s.Hidden < 1:
		return fmt.Errorf("model spec: Hidden is %d, want ≥ 1", s.Hidden)
	case s.Classes < 2:
		return fmt.Errorf("model spec: Classes is %d, want ≥ 2", s.Classes)
	case !(s.Dropout >= 0 && s.Dropout < 1): // NaN fails too
		return fmt.Errorf("model spec: Dropout is %v, want 0 ≤ Dropout < 1", s.Dropout)
	case s.Model == "gat" && s.Heads < 1:
		return fmt.Errorf("model spec: Heads is %d, want ≥ 1 for gat", s.Heads)
	case s.Model == "gat" && s.Layers > 1 && s.Hidden%s.Heads != 0:
		return fmt.Errorf("model spec: Hidden %d is not a multiple of Heads %d (gat's hidden layers concatenate Heads heads of Hidden/Heads features)", s.Hidden, s.Heads)
	}
	return nil
}

// UsesEdges reports whether the model reads neighbours (all but mlp).
func (s Spec) UsesEdges() bool { return s.Model != "mlp" }

// Fanouts returns the fanouts to sample s's batches with, given the
// requested ones (len Layers, block.NewSampler's order): the requested
// ones, or all 0 for mlp, which reads no neighbours.
func (s Spec) Fanouts(requested []int) []int {
	out := append([]int(nil), requested...)
	if !s.UsesEdges() {
		clear(out)
	}
	return out
}

// Dims returns the input and output width of layer l.
func (s Spec) Dims(l int) (in, out int) {
	in, out = s.Hidden, s.Hidden
	if l == 0 {
		in = s.In
	}
	if l == s.Layers-1 {
		out = s.Classes
	}
	return in, out
}

// InputGradSetter is an optional interface of a Layer whose Backward can
// leave out the gradient with respect to its input (SetInputGrad(false);
// Backward then returns nil); New sets it off for the first layer, whose
// input — the features — needs none.
type InputGradSetter interface{ SetInputGrad(need bool) }

// Model is a stack of Spec.Layers layers: layer l maps batch block l's
// source rows to its destination rows; between layers, an activation
// (ReLU; ELU for gat) and, in training, inverted dropout. The last layer's
// output are the logits. A Model is not safe for concurrent use.
type Model struct {
	Spec   Spec
	layers []Layer
	params []*Param

	// Per hidden layer l (< Layers-1), from the last Forward: h[l] is
	// the next layer's input (activated, then dropped out), k[l] the
	// derivative of h[l] by the layer's output, elementwise (the
	// activation's derivative times the dropout scale, 0 or 1/(1-p)),
	// dh[l] scratch for Backward.
	h, k, dh [][]float32
	mark     []bool // FLOPs' scratch
	dLogits  []float32

	replicas []*Model // Infer's per-worker copies
}

// New returns a model with initial parameters drawn from one generator
// seeded with seed, layer by layer in order.
func New(s Spec, seed uint64) (*Model, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(seed, 0x6e6e2e4e6577)) // "nn.New"
	m := &Model{Spec: s}
	for l := 0; l < s.Layers; l++ {
		in, out := s.Dims(l)
		name := fmt.Sprintf("layers.%d", l)
		var layer Layer
		switch s.Model {
		case "mlp":
			layer = NewLinear(name, in, out, rng)
		case "sage-mean":
			layer = NewSAGE(name, Mean, in, out, rng)
		case "sage-pool":
			layer = NewSAGE(name, Pool, in, out, rng)
		case "sage-lstm":
			layer = NewSAGELSTM(name, in, out, rng)
		case "gat":
			if l < s.Layers-1 {
				layer = NewGAT(name, in, s.Hidden/s.Heads, s.Heads, true, rng)
			} else {
				layer = NewGAT(name, in, s.Classes, s.Heads, false, rng)
			}
		}
		if layer.InDim() != in || layer.OutDim() != out {
			return nil, fmt.Errorf("nn.New: %s layer %d maps %d→%d features, want %d→%d", s.Model, l, layer.InDim(), layer.OutDim(), in, out)
		}
		if ig, ok := layer.(InputGradSetter); ok && l == 0 {
			ig.SetInputGrad(false)
		}
		m.layers = append(m.layers, layer)
		m.params = append(m.params, layer.Params()...)
	}
	h := s.Layers - 1
	m.h, m.k, m.dh = make([][]float32, h), make([][]float32, h), make([][]float32, h)
	return m, nil
}

// Layers returns the model's layers (do not modify their shapes).
func (m *Model) Layers() []Layer { return m.layers }

// Params returns the parameters, layer by layer, named
// "layers.<l>.<name>".
func (m *Model) Params() []*Param { return m.params }

// NumParams returns the number of learnable scalars.
func (m *Model) NumParams() int {
	n := 0
	for _, p := range m.params {
		n += len(p.W)
	}
	return n
}

// ZeroGrad clears every gradient.
func (m *Model) ZeroGrad() {
	for _, p := range m.params {
		clear(p.G)
	}
}

// ReprDim is the width of the representation Infer returns: the last
// layer's input width (Hidden, or In for one layer).
func (m *Model) ReprDim() int {
	in, _ := m.Spec.Dims(m.Spec.Layers - 1)
	return in
}

// elu reports whether the activation is ELU (gat) rather than ReLU.
func (m *Model) elu() bool { return m.Spec.Model == "gat" }

// valueUnit is how many values one unit of the elementwise work between
// layers covers (the parallel split and the dropout streams).
const valueUnit = 256

// parallelValues calls fn over [0, n) split into runs of whole units
// (parallelRows over units); small n should not come here (the closure
// allocates).
func parallelValues(n int, fn func(lo, hi int)) {
	parallelRows((n+valueUnit-1)/valueUnit, func(_, lo, hi int) { fn(lo*valueUnit, min(hi*valueUnit, n)) })
}

// fewValues reports whether n values are worth one goroutine only.
func fewValues(n int) bool { return n < 2*minRows*valueUnit || Workers < 2 }

// activate writes the activation of y into a, and its derivative into k
// when k is not nil (ReLU's derivative is 0 at 0, as PyTorch's).
func activate(a, k, y []float32, elu bool) {
	if fewValues(len(y)) {
		activateRange(a, k, y, elu)
		return
	}
	parallelValues(len(y), func(lo, hi int) {
		var kr []float32
		if k != nil {
			kr = k[lo:hi]
		}
		activateRange(a[lo:hi], kr, y[lo:hi], elu)
	})
}

func activateRange(a, k, y []float32, elu bool) {
	switch {
	case elu:
		for i, v := range y {
			e, d := v, float32(1)
			if v <= 0 {
				e = float32(math.Expm1(float64(v)))
				d = e + 1 // ELU'(z) = e^z = ELU(z)+1 for z ≤ 0
			}
			a[i] = e
			if k != nil {
				k[i] = d
			}
		}
	case k == nil:
		for i, v := range y {
			a[i] = max(v, 0)
		}
	default:
		k = k[:len(y)]
		a = a[:len(y)]
		for i, v := range y {
			r := max(v, 0) // +0 for v ≤ 0 (and -0)
			a[i] = r
			k[i] = float32(min(math.Float32bits(r), 1)) // 1 iff r > 0, without a branch
		}
	}
}

// dropout zeroes each value of h (rows of width values, row i the
// output of node ids[i]) with probability p and scales the rest, and their
// derivatives k, by 1/(1-p). Row i draws from a stream of its own, seeded
// by base and its node's id, so a node's mask does not depend on Workers
// nor on which other nodes share the batch: a micro-batch that computes a
// node drops what the whole batch would (split.Micro's equivalence).
func dropout(h, k []float32, width int, ids []int32, p float64, base uint64) {
	rows := len(h) / width
	th := uint64(min(math.Round(p*(1<<32)), math.MaxUint32))
	scale := float32(1 / (1 - p))
	if fewValues(len(h)) {
		dropRows(h, k, width, ids, 0, rows, th, scale, base)
		return
	}
	parallelRows(rows, func(_, lo, hi int) { dropRows(h, k, width, ids, lo, hi, th, scale, base) })
}

// dropRows is dropout over rows [lo, hi).
func dropRows(h, k []float32, width int, ids []int32, lo, hi int, th uint64, scale float32, base uint64) {
	var pcg rand.PCG
	for row := lo; row < hi; row++ {
		pcg.Seed(base, uint64(uint32(ids[row])))
		hu, ku := h[row*width:(row+1)*width], k[row*width:(row+1)*width]
		var r uint64
		for i := range hu {
			if i%2 == 0 {
				r = pcg.Uint64()
			} else {
				r >>= 32
			}
			keep := 1 - (r&0xffffffff-th)>>63 // 0 when the draw is below th
			s := scale * float32(keep)
			hu[i] *= s
			ku[i] *= s
		}
	}
}

// Forward returns the logits (the output nodes' rows, Classes wide) of
// batch b from the features x of b.Input() (NumSrc×In, row-major),
// keeping what Backward needs. In training (train true) hidden
// activations are dropped: layer l's mask is drawn from one value of rng
// and each destination node's id (dropout); rng may be nil when train is
// false or Dropout is 0. The result is valid until the next Forward.
func (m *Model) Forward(b *block.Batch, x []float32, train bool, rng *rand.Rand) []float32 {
	if len(b.Blocks) != len(m.layers) {
		panic(fmt.Sprintf("nn.Model.Forward: a batch of %d blocks for %d layers", len(b.Blocks), len(m.layers)))
	}
	if len(x) != b.Blocks[0].NumSrc()*m.Spec.In {
		panic(fmt.Sprintf("nn.Model.Forward: %d input values for %d rows of %d features", len(x), b.Blocks[0].NumSrc(), m.Spec.In))
	}
	in := x
	last := len(m.layers) - 1
	p := m.Spec.Dropout
	for l, layer := range m.layers {
		out := layer.Forward(&b.Blocks[l], in, train, rng)
		if l == last {
			return out
		}
		n := b.Blocks[l].NumDst * layer.OutDim()
		m.h[l], m.k[l] = scratch(m.h[l], n), scratch(m.k[l], n)
		activate(m.h[l], m.k[l], out[:n], m.elu())
		if train && p > 0 {
			blk := &b.Blocks[l]
			dropout(m.h[l], m.k[l], layer.OutDim(), blk.Src[:blk.NumDst], p, rng.Uint64())
		}
		in = m.h[l]
	}
	panic("unreachable")
}

// Backward adds the parameters' gradients of a loss whose gradient with
// respect to the last Forward's logits is dLogits.
func (m *Model) Backward(dLogits []float32) {
	d := dLogits
	for l := len(m.layers) - 1; l >= 0; l-- {
		dIn := m.layers[l].Backward(d)
		if l == 0 {
			return
		}
		k := m.k[l-1]
		if len(dIn) != len(k) {
			panic(fmt.Sprintf("nn.Model.Backward: layer %d returned %d input gradients for %d inputs", l, len(dIn), len(k)))
		}
		m.dh[l-1] = scratch(m.dh[l-1], len(k))
		dh := m.dh[l-1]
		if fewValues(len(k)) {
			mulRange(dh, dIn, k)
		} else {
			parallelValues(len(k), func(lo, hi int) { mulRange(dh[lo:hi], dIn[lo:hi], k[lo:hi]) })
		}
		d = dh
	}
}

// TrainStep trains on one batch or micro-batch b: Forward in training
// mode from the features x of b.Input(), the mean cross-entropy of the
// logits against the output nodes' labels y, and Backward of that loss
// times weight, adding to the parameters' gradients (clearing them and
// the optimiser's step are the caller's). A batch split into micro-batches
// trains exactly as the whole batch when each micro-batch's weight is its
// share of the batch's output nodes and rng is in the same state at the
// start of each micro-batch (dropout masks are drawn per node). It
// returns the mean loss over b's output nodes and how many were right.
func (m *Model) TrainStep(b *block.Batch, x []float32, y []int32, weight float64, rng *rand.Rand) (loss float64, correct int) {
	logits := m.Forward(b, x, true, rng)
	c := m.Spec.Classes
	m.dLogits = scratch(m.dLogits, len(y)*c)
	loss, correct = CrossEntropy(logits, y, c, m.dLogits)
	if weight != 1 {
		w := float32(weight)
		for i := range m.dLogits {
			m.dLogits[i] *= w
		}
	}
	m.Backward(m.dLogits)
	return loss, correct
}

// mulRange sets d = a·b elementwise.
func mulRange(d, a, b []float32) {
	a, b = a[:len(d)], b[:len(d)]
	for i := range d {
		d[i] = a[i] * b[i]
	}
}

// scratch returns buf with length n, reusing its array when it can; the
// contents are not cleared.
func scratch(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// FLOPs returns the floating-point operations (2 per multiply-add) of the
// dense matrix products one training step (Forward and Backward) on b
// runs: a product of m×k by k×n costs 2mkn forward and twice that
// backward (the input's and the weight's gradients), except that the
// first layer skips the input-gradient products nothing but its own
// input gradient needs (InputGradSetter; New turns that off). Per layer,
// with d destinations, s sources, e edges, in and out features, the
// forward products and [in brackets] those whose input gradient the
// first layer skips:
// mlp 2d·in·out [all]; sage-mean 2·2d·in·out (fc_self, fc_neigh over the
// destinations), or 2d·in·out + 2s·in·out where the layer applies
// fc_neigh to every source row before the mean (projectFirst: narrowing
// layers where that saves work) [all]; sage-pool adds 2s·in·in (fc_pool over the
// sources) [fc_self's and fc_pool's, 2d·in·out + 2s·in·in: fc_neigh's
// input gradient feeds fc_pool's]; sage-lstm adds the LSTM's input
// product over the distinct neighbour rows u, 2u·4in·in, and its hidden
// product at every step after the first, 2(e−d₊)·4in·in (d₊ destinations
// with a neighbour) [fc_self's and the input product's, 2d·in·out +
// 2u·4in·in: fc_neigh's and the hidden product's input gradients carry
// the gradient through time]; gat 2s·in·heads·out (fc) [all].
// Aggregations, activations, attention and the loss are not counted.
func (m *Model) FLOPs(b *block.Batch) float64 {
	f := 0.0
	for l, layer := range m.layers {
		blk := &b.Blocks[l]
		d, s, e := float64(blk.NumDst), float64(blk.NumSrc()), float64(len(blk.Nbr))
		in, out := m.Spec.Dims(l)
		fi, fo := float64(in), float64(out)
		var fwd, dxOnly float64 // the forward products; the input-gradient ones only dx needs
		switch m.Spec.Model {
		case "mlp":
			fwd = 2 * d * fi * fo
			dxOnly = fwd
		case "sage-mean":
			fwd = 2 * 2 * d * fi * fo
			if projectFirst(in, out, blk.NumDst, blk.NumSrc(), len(blk.Nbr)) {
				fwd = 2*d*fi*fo + 2*s*fi*fo
			}
			dxOnly = fwd
		case "sage-pool":
			fwd = 2*2*d*fi*fo + 2*s*fi*fi
			dxOnly = 2*d*fi*fo + 2*s*fi*fi
		case "sage-lstm":
			u, dPlus := m.distinctNeighbours(blk)
			fwd = 2*2*d*fi*fo + 2*float64(u)*4*fi*fi + 2*(e-float64(dPlus))*4*fi*fi
			dxOnly = 2*d*fi*fo + 2*float64(u)*4*fi*fi
		case "gat":
			w := float64(layer.OutDim())
			if l == len(m.layers)-1 {
				w *= float64(m.Spec.Heads)
			}
			fwd = 2 * s * fi * w
			dxOnly = fwd
		}
		f += 3 * fwd
		if _, ok := layer.(InputGradSetter); ok && l == 0 {
			f -= dxOnly
		}
	}
	return f
}

// AggregationBytes is the aggregation work of one training step of m on
// b, forward and backward, as bytes of the rows the edges carry: for
// each layer, edges × width × 4 × 2, where the width is the layer's
// input for sage-mean (its output where the engine projects before the
// mean, nn.ProjectFirst) and sage-pool (the pooled rows), four times
// the input for sage-lstm (the gates of every step) and the attention's
// output over the heads for gat; 0 for mlp.
func (m *Model) AggregationBytes(b *block.Batch) float64 {
	layers := m.Layers()
	total := 0.0
	for l := range b.Blocks {
		if l >= len(layers) {
			break
		}
		blk := &b.Blocks[l]
		e := float64(len(blk.Nbr))
		in, out := layers[l].InDim(), layers[l].OutDim()
		var width int
		switch m.Spec.Model {
		case "sage-mean":
			width = in
			if ProjectFirst(in, out, blk.NumDst, blk.NumSrc(), len(blk.Nbr)) {
				width = out
			}
		case "sage-pool":
			width = in
		case "sage-lstm":
			width = 4 * in
		case "gat":
			width = out
			if l == len(layers)-1 {
				width = out * m.Spec.Heads // the last layer's heads are averaged
			}
		}
		total += e * float64(width) * 4 * 2
	}
	return total
}

// distinctNeighbours returns how many distinct source rows b's edges
// read, and how many destinations have a neighbour.
func (m *Model) distinctNeighbours(b *block.Block) (u, dPlus int) {
	if cap(m.mark) < b.NumSrc() {
		m.mark = make([]bool, b.NumSrc())
	}
	mark := m.mark[:b.NumSrc()]
	clear(mark)
	for _, j := range b.Nbr {
		if !mark[j] {
			mark[j] = true
			u++
		}
	}
	for i := 0; i < b.NumDst; i++ {
		if b.Ptr[i+1] > b.Ptr[i] {
			dPlus++
		}
	}
	return u, dPlus
}

// Infer runs the model in evaluation mode layer by layer over every node
// of g with every neighbour (block.Neighborhood), batch destinations at a
// time, reading the previous layer's outputs of each block's sources; it
// returns the last layer's input for every node (N×ReprDim, the node
// representations; a copy of the features for one layer) and the logits
// (N×Classes). The batches run on up to Workers copies of the model at
// once. g.F must be Spec.In (the caller checks; Infer panics otherwise).
func (m *Model) Infer(g *data.Graph, batch int) (repr, logits []float32) {
	if g.F != m.Spec.In {
		panic(fmt.Sprintf("nn.Model.Infer: the graph has %d features, the model reads %d", g.F, m.Spec.In))
	}
	n := g.N()
	if batch < 1 {
		batch = max(n, 1)
	}
	chunks := (n + batch - 1) / batch
	reps := m.inferReplicas(min(max(Workers, 1), max(chunks, 1)))
	ids := make([]int32, n)
	for i := range ids {
		ids[i] = int32(i)
	}
	in, inDim := g.X[:n*g.F], g.F
	if m.Spec.Layers == 1 {
		repr = append([]float32(nil), in...)
	}
	gather := make([][]float32, len(reps))
	for l := range m.layers {
		outDim := m.layers[l].OutDim()
		out := make([]float32, n*outDim)
		hidden := l < len(m.layers)-1
		var next atomic.Int64
		var wg sync.WaitGroup
		for w, rep := range reps {
			wg.Add(1)
			go func() {
				defer wg.Done()
				layer := rep.layers[l]
				for {
					c := int(next.Add(1) - 1)
					if c >= chunks {
						return
					}
					lo, hi := c*batch, min((c+1)*batch, n)
					var blk *block.Block
					var x []float32
					if m.Spec.UsesEdges() {
						blk = block.Neighborhood(g, ids[lo:hi])
						gather[w] = scratch(gather[w], blk.NumSrc()*inDim)
						x = gather[w]
						for i, v := range blk.Src {
							copy(x[i*inDim:(i+1)*inDim], in[int(v)*inDim:(int(v)+1)*inDim])
						}
					} else { // mlp reads only the destinations' rows
						blk = &block.Block{Src: ids[lo:hi], NumDst: hi - lo, Ptr: make([]int32, hi-lo+1)}
						x = in[lo*inDim : hi*inDim]
					}
					y := layer.Forward(blk, x, false, nil)[:(hi-lo)*outDim]
					dst := out[lo*outDim : hi*outDim]
					if hidden {
						activate(dst, nil, y, m.elu())
					} else {
						copy(dst, y)
					}
				}
			}()
		}
		wg.Wait()
		if !hidden {
			logits = out
			if l > 0 {
				repr = in
			}
		}
		in, inDim = out, outDim
	}
	return repr, logits
}

// inferReplicas returns k copies of m with m's current parameters.
func (m *Model) inferReplicas(k int) []*Model {
	for len(m.replicas) < k {
		r, err := New(m.Spec, 0)
		if err != nil {
			panic(err) // m's Spec passed Check when m was made
		}
		m.replicas = append(m.replicas, r)
	}
	for _, r := range m.replicas[:k] {
		for i, p := range r.params {
			copy(p.W, m.params[i].W)
		}
	}
	return m.replicas[:k]
}

// The model file: modelMagic, uint32 version, uint32 parameters; per
// parameter uint32 name length, name, uint32 dimensions, uint32 sizes,
// float32 values; little-endian.
const (
	modelMagic   = "TFGNNMOD"
	modelVersion = 1
)

// Save writes the parameters' names, shapes and values.
func (m *Model) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(modelMagic)
	put32(bw, modelVersion)
	put32(bw, uint32(len(m.params)))
	for _, p := range m.params {
		put32(bw, uint32(len(p.Name)))
		bw.WriteString(p.Name)
		put32(bw, uint32(len(p.Shape)))
		for _, d := range p.Shape {
			put32(bw, uint32(d))
		}
		if err := binary.Write(bw, binary.LittleEndian, p.W); err != nil {
			return fmt.Errorf("writing the model: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the model: %w", err)
	}
	return nil
}

// Load reads parameters written by Save into m, whose parameters must have
// the same names and shapes (the same Spec); on an error m is unchanged.
// It reads no further than the model's last byte.
func (m *Model) Load(r io.Reader) error {
	if err := readMagic(r, modelMagic, modelVersion, "model file"); err != nil {
		return err
	}
	count, err := get32(r)
	if err != nil {
		return fmt.Errorf("model file: reading the parameter count: %w", noEOF(err))
	}
	if int(count) != len(m.params) {
		return fmt.Errorf("model file: %d parameters, the model (%s, %d layers) has %d", count, m.Spec.Model, m.Spec.Layers, len(m.params))
	}
	vals := make([][]float32, len(m.params))
	for i, p := range m.params {
		nl, err := get32(r)
		if err != nil || nl > 1<<10 {
			return fmt.Errorf("model file: reading parameter %d's name: %w", i, badLen(err, nl))
		}
		name := make([]byte, nl)
		if _, err := io.ReadFull(r, name); err != nil {
			return fmt.Errorf("model file: reading parameter %d's name: %w", i, noEOF(err))
		}
		nd, err := get32(r)
		if err != nil || nd > 8 {
			return fmt.Errorf("model file: reading parameter %d's shape: %w", i, badLen(err, nd))
		}
		shape := make([]int, nd)
		for j := range shape {
			d, err := get32(r)
			if err != nil {
				return fmt.Errorf("model file: reading parameter %d's shape: %w", i, noEOF(err))
			}
			shape[j] = int(d)
		}
		if string(name) != p.Name || !sameShape(shape, p.Shape) {
			return fmt.Errorf("model file: parameter %d is %s %s, the model's is %s %s", i, name, shapeString(shape), p.Name, shapeString(p.Shape))
		}
		vals[i] = make([]float32, len(p.W))
		if err := binary.Read(r, binary.LittleEndian, vals[i]); err != nil {
			return fmt.Errorf("model file: reading %s's values: %w", p.Name, noEOF(err))
		}
	}
	for i, p := range m.params {
		copy(p.W, vals[i])
	}
	return nil
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func shapeString(s []int) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = fmt.Sprint(d)
	}
	return "[" + strings.Join(parts, "×") + "]"
}

func put32(w *bufio.Writer, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	w.Write(b[:])
}

func get32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

// readMagic reads and checks a file's magic and version.
func readMagic(r io.Reader, magic string, version uint32, what string) error {
	b := make([]byte, len(magic))
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: empty", what)
		}
		return fmt.Errorf("%s: reading the header: %w", what, noEOF(err))
	}
	if string(b) != magic {
		return fmt.Errorf("%s: starts with %q, not %q", what, b, magic)
	}
	v, err := get32(r)
	if err != nil {
		return fmt.Errorf("%s: reading the version: %w", what, noEOF(err))
	}
	if v != version {
		return fmt.Errorf("%s: version %d, this build reads version %d", what, v, version)
	}
	return nil
}

// noEOF turns a clean EOF inside a file into io.ErrUnexpectedEOF.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// badLen is the error of a length field: err, or an implausible value.
func badLen(err error, v uint32) error {
	if err != nil {
		return noEOF(err)
	}
	return fmt.Errorf("implausible length %d", v)
}
