package plots

import (
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
)

// Tick marks. gonum's default ticker picks steps such as 60 or 25.00 and
// labels integers with two decimals; these give a round step (1, 2, 2.5 or
// 5 × 10^k) with the fewest decimals that tell the labels apart, and, on an
// axis whose values are all integers (p, c, epochs), integer ticks only.

// niceTicks is a plot.Ticker with round steps and no minor ticks.
type niceTicks struct {
	// integer keeps the step at 1 or more, so every label is an integer.
	integer bool
	// step, when set, is the step (roundAxis fixes it with the range).
	step float64
}

// Ticks returns the major ticks between lo and hi.
func (t niceTicks) Ticks(lo, hi float64) []plot.Tick {
	step := t.step
	if step <= 0 {
		step = niceStep(lo, hi, t.integer)
	}
	dec := decimals(step)
	var ticks []plot.Tick
	first := math.Ceil(lo/step - 1e-9)
	for k := first; k*step <= hi+step*1e-9; k++ {
		v := k * step
		if math.Abs(v) < step*1e-9 {
			v = 0 // no "-0"
		}
		ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', dec, 64)})
	}
	return ticks
}

// niceStep returns the round step giving about four to seven ticks over
// [lo, hi]; with integer, at least 1.
func niceStep(lo, hi float64, integer bool) float64 {
	span := hi - lo
	if !(span > 0) || math.IsInf(span, 0) {
		span = math.Max(math.Abs(hi), 1)
	}
	raw := span / 5
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if integer && m == 2.5 && mag < 10 {
			continue // 2.5 is no integer step; 25 is
		}
		if m*mag >= raw*0.999 {
			step = m * mag
			break
		}
	}
	if integer {
		step = math.Max(1, math.Round(step))
	}
	return step
}

// decimals returns the number of decimals a multiple of step needs.
func decimals(step float64) int {
	for d := 0; d < 10; d++ {
		s := step * math.Pow(10, float64(d))
		if math.Abs(s-math.Round(s)) < 1e-6*s {
			return d
		}
	}
	return 10
}

// valueTicks is a plot.Ticker with a tick at each given value (the p a
// sweep ran, say), labelled as an integer.
type valueTicks []float64

// Ticks returns the values in [lo, hi].
func (vs valueTicks) Ticks(lo, hi float64) []plot.Tick {
	var ticks []plot.Tick
	for _, v := range vs {
		if v >= lo-1e-9 && v <= hi+1e-9 {
			ticks = append(ticks, plot.Tick{Value: v, Label: strconv.FormatFloat(v, 'f', 0, 64)})
		}
	}
	return ticks
}

// allIntegers reports whether every value is a whole number.
func allIntegers(vs []float64) bool {
	for _, v := range vs {
		if v != math.Trunc(v) || math.Abs(v) > 1e15 {
			return false
		}
	}
	return len(vs) > 0
}

// integerTicker returns the ticker of an axis whose values are all
// integers: a tick at each distinct value when there are few and they are
// spread out enough for their labels (8, 16, 32, 64, 128), otherwise round
// integer steps.
func integerTicker(vs []float64) plot.Ticker {
	distinct := append([]float64(nil), vs...)
	sort.Float64s(distinct)
	n := 0
	for i, v := range distinct {
		if i == 0 || v != distinct[n-1] {
			distinct[n] = v
			n++
		}
	}
	distinct = distinct[:n]
	if n >= 2 && n <= 12 {
		span := distinct[n-1] - distinct[0]
		gap := math.Inf(1)
		for i := 1; i < n; i++ {
			gap = math.Min(gap, distinct[i]-distinct[i-1])
		}
		if gap >= span/16 {
			return valueTicks(distinct)
		}
	}
	return niceTicks{integer: true}
}

// roundAxis widens a linear axis to whole steps of its ticker (so the
// first and last ticks sit on the frame), sets the ticker, and makes the
// range non-empty.
func roundAxis(a *plot.Axis, integer bool) {
	if a.Max <= a.Min {
		d := math.Max(math.Abs(a.Min)*0.1, 1)
		a.Min, a.Max = a.Min-d, a.Max+d
	}
	step := niceStep(a.Min, a.Max, integer)
	a.Min = math.Floor(a.Min/step+1e-9) * step
	a.Max = math.Ceil(a.Max/step-1e-9) * step
	a.Tick.Marker = niceTicks{integer: integer, step: step}
}
