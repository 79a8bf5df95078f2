package nn

import (
	"math"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/model"
)

// Linear is y = x·Wᵀ + b over a block's destination rows (the first
// NumDst source rows): the layer of the features-only MLP, and the
// building block of the others. W is out×in.
type Linear struct {
	W, B     Param
	in, out  int
	x        []float32 // the rows the last Forward read (a view)
	nsrc     int       // the last Forward's source rows
	y, dx    []float32
	partials [][]float32 // per-worker dW
	noDx     bool        // Backward skips dX (SetInputGrad(false))
}

// NewLinear returns a Linear layer with Glorot-uniform weights drawn from
// rng and zero bias.
func NewLinear(name string, in, out int, rng *rand.Rand) *Linear {
	l := &Linear{in: in, out: out}
	l.W = Param{Name: name + ".weight", Shape: []int{out, in}, W: make([]float32, out*in), G: make([]float32, out*in)}
	l.B = Param{Name: name + ".bias", Shape: []int{out}, W: make([]float32, out), G: make([]float32, out)}
	glorot(l.W.W, in, out, rng)
	return l
}

// glorot fills w with Glorot (Xavier) uniform values for a fanIn×fanOut
// matrix.
func glorot(w []float32, fanIn, fanOut int, rng *rand.Rand) {
	a := math.Sqrt(6 / float64(fanIn+fanOut))
	for i := range w {
		w[i] = float32((2*rng.Float64() - 1) * a)
	}
}

func (l *Linear) InDim() int       { return l.in }
func (l *Linear) OutDim() int      { return l.out }
func (l *Linear) Params() []*Param { return []*Param{&l.W, &l.B} }
func (l *Linear) Forward(b *block.Block, in []float32, train bool, rng *rand.Rand) []float32 {
	l.nsrc = b.NumSrc()
	return l.forwardRows(in[:b.NumDst*l.in], b.NumDst)
}

// forwardRows is Forward over the first m rows of x.
func (l *Linear) forwardRows(x []float32, m int) []float32 {
	l.x = x
	l.y = grow(l.y, m*l.out)
	parallelRows(m, func(_, lo, hi int) {
		y := l.y[lo*l.out : hi*l.out]
		for i := lo; i < hi; i++ {
			copy(y[(i-lo)*l.out:(i-lo+1)*l.out], l.B.W)
		}
		model.SgemmNT(hi-lo, l.out, l.in, x[lo*l.in:hi*l.in], l.W.W, y)
	})
	return l.y
}

// SetInputGrad says whether Backward must compute the gradient of the
// layer's input (true at first); with false it skips dX = dOut·W and
// returns nil (the parameters' gradients are the same).
func (l *Linear) SetInputGrad(need bool) { l.noDx = !need }

// Backward adds the parameters' gradients and returns the input's (nil
// after SetInputGrad(false)).
func (l *Linear) Backward(dOut []float32) []float32 {
	m := len(dOut) / l.out
	if l.noDx {
		l.backwardRows(dOut, m, nil)
		return nil
	}
	l.dx = grow(l.dx, l.nsrc*l.in) // the rows beyond the destinations get none
	l.backwardRows(dOut, m, l.dx[:m*l.in])
	return l.dx
}

// backwardRows adds the parameters' gradients for the last forwardRows
// and adds dX (m×in) into dx; a nil dx skips dX.
func (l *Linear) backwardRows(dOut []float32, m int, dx []float32) {
	parts := rowParts(m)
	if dx != nil {
		parallelRows(m, func(w, lo, hi int) {
			model.SgemmNN(hi-lo, l.in, l.out, dOut[lo*l.out:hi*l.out], l.W.W, dx[lo*l.in:hi*l.in])
		})
	}
	for len(l.partials) < parts {
		l.partials = append(l.partials, nil)
	}
	parallelRows(m, func(w, lo, hi int) {
		p := l.W.G
		if parts > 1 {
			l.partials[w] = grow(l.partials[w], l.out*l.in)
			p = l.partials[w]
		}
		model.SgemmTN(l.out, l.in, hi-lo, dOut[lo*l.out:hi*l.out], l.x[lo*l.in:hi*l.in], p)
	})
	if parts > 1 {
		for w := 0; w < parts; w++ {
			for i, v := range l.partials[w] {
				l.W.G[i] += v
			}
		}
	}
	for i := 0; i < m; i++ {
		for j, v := range dOut[i*l.out : (i+1)*l.out] {
			l.B.G[j] += v
		}
	}
}
