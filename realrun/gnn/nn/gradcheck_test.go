package nn

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// degreeBlock is a block of dst destinations among src sources whose
// degrees are drawn from 0…maxDeg (each listed value at least once when
// dst allows). With distinct, no source row is a neighbour twice in the
// whole block (src must be at least dst·maxDeg); otherwise neighbours of
// different destinations overlap freely (distinct within one).
func degreeBlock(dst, src, maxDeg int, distinct bool, rng *rand.Rand) *block.Block {
	b := &block.Block{NumDst: dst, Ptr: []int32{0}}
	for i := 0; i < src; i++ {
		b.Src = append(b.Src, int32(1000+i))
	}
	used := map[int32]bool{}
	for i := 0; i < dst; i++ {
		k := rng.IntN(maxDeg + 1)
		if i <= maxDeg {
			k = i // every degree 0…maxDeg occurs
		}
		seen := map[int32]bool{}
		for len(seen) < k {
			j := int32(rng.IntN(src))
			if j == int32(i) || seen[j] || (distinct && used[j]) {
				continue
			}
			seen[j], used[j] = true, true
			b.Nbr = append(b.Nbr, j)
		}
		b.Ptr = append(b.Ptr, int32(len(b.Nbr)))
	}
	return b
}

// testBlock is degreeBlock with 0–3 neighbours per destination,
// overlapping across destinations.
func testBlock(dst, src int, rng *rand.Rand) *block.Block {
	return degreeBlock(dst, src, 3, false, rng)
}

// normals is n standard normal values drawn from rng.
func normals(n int, rng *rand.Rand) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(rng.NormFloat64())
	}
	return x
}

// gradOpts adapts checkGrad to a layer whose loss has kinks (ReLU, max,
// LeakyReLU), where a finite difference across a kink measures neither
// side's slope. The zero value is plain central differences at step
// 1e-2, every coordinate judged.
type gradOpts struct {
	// steps are the finite-difference steps, largest first; default
	// {1e-2}. With one, its central difference is judged at every
	// coordinate. With several and no crossed, a coordinate's central
	// differences at all of them must agree within the tolerance — where
	// they do not, a kink lies within a step and the coordinate is
	// skipped — and the last (smallest) step's is judged. With crossed,
	// they are tried in turn (below).
	steps []float32
	// crossed, if set, reports after each Forward on which side of its
	// kink each kinked quantity is (for GAT, the sign of every attention
	// logit); a perturbation that changes any entry crosses a kink. Where
	// one side of ±step crosses, the coordinate is checked by a one-sided
	// difference on the other (Richardson-extrapolated from the step and
	// its half, which must not cross either); where both do, at the next
	// step; failing every step, it is skipped.
	crossed func() []bool
	// skip is the fraction of each tensor's coordinates that may be
	// skipped at kinks (default 0: none); more fails the check.
	skip float64
	// tol is how far the analytic gradient may be from the difference
	// num; default 2% of max(1, |num|).
	tol func(num float64) float64
}

// checkGrad compares l's analytic gradients — of its input and of every
// parameter — with finite differences of the loss Σ out·R for a fixed
// random R, at every coordinate (keep shapes small), by o.compare.
// Forward runs with train false, so dropout-free layers are
// deterministic.
func checkGrad(t *testing.T, l Layer, b *block.Block, seed uint64, o gradOpts) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	in := normals(b.NumSrc()*l.InDim(), rng)
	r := make([]float64, b.NumDst*l.OutDim())
	for i := range r {
		r[i] = rng.NormFloat64()
	}
	loss := func() float64 {
		s := 0.0
		for i, v := range l.Forward(b, in, false, nil) {
			s += float64(v) * r[i]
		}
		return s
	}
	for _, p := range l.Params() {
		clear(p.G)
	}
	loss()
	dOut := make([]float32, len(r))
	for i, v := range r {
		dOut[i] = float32(v)
	}
	dIn := append([]float32(nil), l.Backward(dOut)...)
	if len(dIn) != len(in) {
		t.Fatalf("Backward returned %d values, want %d (NumSrc×InDim)", len(dIn), len(in))
	}
	grads := map[string][]float32{}
	for _, p := range l.Params() {
		grads[p.Name] = append([]float32(nil), p.G...)
	}
	o.compare(t, "input", in, dIn, loss)
	for _, p := range l.Params() {
		o.compare(t, p.Name, p.W, grads[p.Name], loss)
	}
}

// compare checks ana, the analytic gradient of loss with respect to x,
// against finite differences at every coordinate of x, within o.tol; a
// NaN fails.
func (o gradOpts) compare(t *testing.T, what string, x, ana []float32, loss func() float64) {
	t.Helper()
	steps := o.steps
	if len(steps) == 0 {
		steps = []float32{1e-2}
	}
	tol := o.tol
	if tol == nil {
		tol = func(num float64) float64 { return 2e-2 * math.Max(1, math.Abs(num)) }
	}
	f0 := loss()
	var base []bool
	if o.crossed != nil {
		base = o.crossed()
	}
	// at is the loss at x[i] = v and whether no kink was crossed.
	at := func(i int, v float32) (float64, bool) {
		old := x[i]
		x[i] = v
		f := loss()
		x[i] = old
		return f, o.crossed == nil || slices.Equal(o.crossed(), base)
	}
	// diff is the difference at step eps, false where it crosses a
	// kink on both sides.
	diff := func(i int, eps float32) (float64, bool) {
		old, e := x[i], float64(eps)
		up, okUp := at(i, old+eps)
		down, okDown := at(i, old-eps)
		switch {
		case okUp && okDown:
			return (up - down) / (2 * e), true
		case okDown: // one-sided from below, Richardson-extrapolated
			half, ok := at(i, old-eps/2)
			return 2*(f0-half)/(e/2) - (f0-down)/e, ok
		case okUp:
			half, ok := at(i, old+eps/2)
			return 2*(half-f0)/(e/2) - (up-f0)/e, ok
		}
		return 0, false
	}
	// estimate is coordinate i's difference, false to skip it.
	estimate := func(i int) (float64, bool) {
		if o.crossed != nil {
			for _, eps := range steps {
				if num, ok := diff(i, eps); ok {
					return num, true
				}
			}
			return 0, false
		}
		last, _ := diff(i, steps[len(steps)-1])
		for _, eps := range steps[:len(steps)-1] {
			if num, _ := diff(i, eps); math.Abs(num-last) > tol(last) { // NaN is judged
				return 0, false
			}
		}
		return last, true
	}
	bad, skipped := 0, 0
	for i := range x {
		num, ok := estimate(i)
		if !ok {
			skipped++
			continue
		}
		if !(math.Abs(num-float64(ana[i])) <= tol(num)) { // NaN fails
			if bad < 5 {
				t.Errorf("%s[%d]: analytic %.5g, finite difference %.5g", what, i, ana[i], num)
			}
			bad++
		}
	}
	if bad > 0 {
		t.Errorf("%s: %d of %d coordinates off", what, bad, len(x))
	}
	if o.skip > 0 {
		t.Logf("%s: %d of %d coordinates skipped at kinks", what, skipped, len(x))
	}
	if float64(skipped) > o.skip*float64(len(x)) {
		t.Errorf("%s: %d of %d coordinates skipped at kinks, more than %g%%", what, skipped, len(x), 100*o.skip)
	}
}

func TestLinearGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, w := range []int{1, 2} {
		Workers = w
		b := testBlock(130, 150, rng) // enough rows for two workers
		checkGrad(t, NewLinear("fc", 5, 3, rng), b, 3, gradOpts{})
	}
	Workers = 2
}
