package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Strips draws one narrow panel per series, one above the other on a
// shared x axis, each named at its left: the way to show several busy
// fractions over time (per ordering, per resource) that would tangle as
// lines in one panel. Every strip is filled from 0 up to its value, and
// all share the y range 0 to YMax, stated in the title.
type Strips struct {
	Title, XLabel string
	// YLabel names the value ("GPU busy"); the title says its range.
	YLabel string
	// YMax is the top of every strip (0: the largest value, rounded up).
	YMax   float64
	Series []Series
}

// Strip geometry.
const (
	stripMin   = 0.95 * vg.Centimeter // the least height of a strip
	stripMax   = 2 * vg.Centimeter
	stripsData = 6 * vg.Centimeter // the strips' height when there are few
	stripGap   = 1.2 * vg.Millimeter
	stripAxis  = 1.3 * vg.Centimeter // the x axis under the last strip
)

// stripColor fills every strip: the names, not colours, tell them apart.
var (
	stripLine = color.NRGBA{R: 0x1f, G: 0x5f, B: 0xa8, A: 0xff}
	stripFill = color.NRGBA{R: 0x1f, G: 0x5f, B: 0xa8, A: 0x60}
)

func (s Strips) part() (part, error) {
	lc := LineChart{Series: s.Series}
	lo, hi, err := lc.check()
	if err != nil {
		return part{}, err
	}
	if lo < 0 {
		return part{}, fmt.Errorf("strips: value %v is negative; a strip is filled from 0", lo)
	}
	ymax := s.YMax
	if ymax <= 0 {
		step := niceStep(0, hi, false)
		ymax = math.Max(step, math.Ceil(hi/step-1e-9)*step)
	}
	// The shared x axis.
	var x plot.Axis
	x.Min, x.Max = math.Inf(1), math.Inf(-1)
	var xs []float64
	for _, sr := range s.Series {
		for _, v := range sr.X {
			x.Min, x.Max = math.Min(x.Min, v), math.Max(x.Max, v)
		}
		xs = append(xs, sr.X...)
	}
	roundAxis(&x, allIntegers(xs))

	var grid [][]*plot.Plot
	for i, sr := range s.Series {
		p := plot.New()
		p.X.Min, p.X.Max = x.Min, x.Max
		p.X.Tick.Marker = x.Tick.Marker
		p.Add(vlines{x.Tick.Marker})
		xys := make(plotter.XYs, len(sr.X))
		for j := range sr.X {
			xys[j] = plotter.XY{X: sr.X[j], Y: math.Min(sr.Y[j], ymax)}
		}
		line, err := plotter.NewLine(xys)
		if err != nil {
			return part{}, fmt.Errorf("series %d (%q): %w", i, sr.Name, err)
		}
		line.Color = stripLine
		line.Width = vg.Points(0.8)
		line.FillColor = stripFill
		p.Add(line)
		p.Y.Min, p.Y.Max = 0, ymax
		p.Y.Tick.Marker = plot.ConstantTicks{{Value: ymax / 2, Label: sr.Name}}
		p.Y.Tick.Length = 0
		p.Y.Padding = 0
		p.X.Padding = 0
		if i < len(s.Series)-1 {
			p.HideX()
		} else {
			p.X.Label.Text = s.XLabel
		}
		grid = append(grid, []*plot.Plot{p})
	}
	if len(grid) == 0 {
		return part{}, errors.New("no series")
	}
	title := s.Title
	if s.YLabel != "" {
		title += fmt.Sprintf(" (each strip: %s from 0 to %s)", s.YLabel, strconv.FormatFloat(ymax, 'g', 4, 64))
	}
	n := vg.Length(len(grid))
	h := min(max(stripsData/n, stripMin), stripMax)
	return part{
		title:  title,
		grid:   grid,
		height: n*(h+stripGap) + stripAxis + titleHeight(title),
		padY:   stripGap,
	}, nil
}

// vlines draws light vertical lines at the major ticks of a shared x axis
// (a hidden axis has no ticks for plotter.Grid to follow).
type vlines struct{ ticks plot.Ticker }

// Plot implements plot.Plotter.
func (v vlines) Plot(c draw.Canvas, p *plot.Plot) {
	sty := plotter.DefaultGridLineStyle
	for _, t := range v.ticks.Ticks(p.X.Min, p.X.Max) {
		if t.IsMinor() {
			continue
		}
		x := c.X(p.X.Norm(t.Value))
		c.StrokeLine2(sty, x, c.Min.Y, x, c.Max.Y)
	}
}
