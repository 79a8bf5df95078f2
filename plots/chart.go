package plots

import (
	"errors"
	"fmt"
	"image/color"
	"math"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// Chart size used by Save.
const (
	chartWidth  = 16 * vg.Centimeter
	chartHeight = 10 * vg.Centimeter
)

// Series is one named line of (X, Y) points.
type Series struct {
	Name string
	X, Y []float64
	// Line keeps this series' line in a scatter chart (a reference line
	// such as y = x).
	Line bool
}

// LineChart describes a line chart with markers; LogY selects a log10 y
// axis; Scatter draws markers only (except for series with Line set).
type LineChart struct {
	Title, XLabel, YLabel string
	Series                []Series
	LogY                  bool
	Scatter               bool
}

// BarSeries is one named set of bars, one value per category.
type BarSeries struct {
	Name   string
	Values []float64
}

// BarChart is a grouped bar chart: one group of bars per Category, one bar per
// Series (Series[i].Values[j] is the value of series i in category j).
type BarChart struct {
	Title, YLabel string
	Categories    []string
	Series        []BarSeries
	LogY          bool
}

// Save renders the chart to path. The format comes from the extension (.png
// or .svg, case-insensitive). The chart is written to a temporary file in the
// same directory which is renamed to path on success; no directories are
// created.
func (c LineChart) Save(path string) error { return SaveStack(path, c) }

// Save renders the chart to path with the same rules as LineChart.Save.
func (c BarChart) Save(path string) error { return SaveStack(path, c) }

// check validates the chart's series and returns the range of Y.
func (c LineChart) check() (lo, hi float64, err error) {
	if len(c.Series) == 0 {
		return 0, 0, errors.New("no series")
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return 0, 0, fmt.Errorf("series %d (%q): len(X)=%d != len(Y)=%d", i, s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			return 0, 0, fmt.Errorf("series %d (%q): no points", i, s.Name)
		}
		if err := checkFinite(s.X, "X"); err != nil {
			return 0, 0, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		if err := checkValues(s.Y, "Y", c.LogY); err != nil {
			return 0, 0, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		for _, y := range s.Y {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	return lo, hi, nil
}

func (c LineChart) part() (part, error) {
	p, legend, err := c.plot(nil)
	if err != nil {
		return part{}, err
	}
	return part{title: c.Title, grid: [][]*plot.Plot{{p}}, legend: legend, height: chartHeight}, nil
}

// plot draws the chart without its title and legend, which it returns
// for the figure to place. style gives the style index of a series name
// (nil: the series' position).
func (c LineChart) plot(style func(name string) int) (*plot.Plot, []legendEntry, error) {
	lo, hi, err := c.check()
	if err != nil {
		return nil, nil, err
	}
	p := newPlot("", c.XLabel, c.YLabel)
	p.Add(plotter.NewGrid())
	var legend []legendEntry
	var xs, ys []float64
	for i, s := range c.Series {
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		xs, ys = append(xs, s.X...), append(ys, s.Y...)
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		k := i
		if style != nil {
			k = style(s.Name)
		}
		col := plotutil.Color(k)
		line.Color = col
		points.Color = col
		points.Shape = plotutil.Shape(k)
		if c.Scatter && !s.Line {
			points.Radius = vg.Points(4)
			p.Add(points)
			legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{points}})
			continue
		}
		if c.Scatter {
			// A reference line (y = x): grey, dashed, no markers.
			line.Color = color.Gray{Y: 0x80}
			line.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
			p.Add(line)
			legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{line}})
			continue
		}
		p.Add(line, points)
		legend = append(legend, legendEntry{s.Name, []plot.Thumbnailer{line, points}})
	}
	if allIntegers(xs) {
		p.X.Tick.Marker = integerTicker(xs)
	} else {
		roundAxis(&p.X, false)
	}
	if c.LogY {
		setLog(&p.Y, lo, hi)
	} else {
		roundAxis(&p.Y, allIntegers(ys))
	}
	return p, legend, nil
}

// Bar geometry.
const (
	barRow     = 0.42 * vg.Centimeter // one bar of a horizontal chart
	barAxes    = 2.2 * vg.Centimeter  // a horizontal chart's height besides its bars
	barDataMin = 5 * vg.Centimeter    // the least height of a horizontal chart
)

// horizontal reports whether the category labels would collide under
// vertical bars: then the bars are drawn horizontally, labels one per line
// at the left.
func (c BarChart) horizontal(legend []legendEntry) bool {
	lw, _ := legendSize(legend)
	avail := chartWidth - 2*figMargin - lw - legendGap - 2*vg.Centimeter
	slot := avail / vg.Length(len(c.Categories))
	sty := plot.New().X.Tick.Label
	for _, cat := range c.Categories {
		if sty.Width(cat) > 0.85*slot {
			return true
		}
	}
	return false
}

func (c BarChart) part() (part, error) {
	if len(c.Categories) == 0 {
		return part{}, errors.New("no categories")
	}
	if len(c.Series) == 0 {
		return part{}, errors.New("no series")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.Series {
		if len(s.Values) != len(c.Categories) {
			return part{}, fmt.Errorf("series %d (%q): %d values for %d categories", i, s.Name, len(s.Values), len(c.Categories))
		}
		if err := checkValues(s.Values, "value", c.LogY); err != nil {
			return part{}, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		for _, v := range s.Values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	var legend []legendEntry
	for _, s := range c.Series {
		legend = append(legend, legendEntry{name: s.Name})
	}
	horiz := c.horizontal(legend)
	nc, n := len(c.Categories), float64(len(c.Series))

	var p *plot.Plot
	height := chartHeight
	var groupWidth vg.Length
	cats := c.Categories
	if horiz {
		p = newPlot("", c.YLabel, "")
		row := barRow
		if n > 2 {
			row = barRow * 3 / 4 // many series: thinner bars, a chart that still fits a page
		}
		height = max(barDataMin, vg.Length(nc)*(vg.Length(n)*row+barRow/2)) + barAxes
		groupWidth = 0.75 * (height - barAxes) / vg.Length(nc)
		// Category 0 at the top, as it is read.
		cats = make([]string, nc)
		for j := range cats {
			cats[j] = c.Categories[nc-1-j]
		}
	} else {
		p = newPlot("", "", c.YLabel)
		lw, _ := legendSize(legend)
		groupWidth = 0.7 * (chartWidth - 2*figMargin - lw - legendGap - 2.5*vg.Centimeter) / vg.Length(nc)
	}
	grid := plotter.NewGrid()
	if horiz {
		grid.Horizontal.Color = nil // category axis: value grid lines only
	} else {
		grid.Vertical.Color = nil
	}
	p.Add(grid)
	valueAxis := &p.Y
	if horiz {
		valueAxis = &p.X
	}

	// A log axis cannot start at zero, so with LogY every bar is stacked on
	// an invisible base at the bottom of the axis.
	var base *plotter.BarChart
	baseValue := 0.0
	if c.LogY {
		baseValue = math.Pow(10, math.Floor(math.Log10(lo)))
		if baseValue >= lo {
			baseValue /= 10
		}
		vals := make(plotter.Values, nc)
		for j := range vals {
			vals[j] = baseValue
		}
		var err error
		if base, err = plotter.NewBarChart(vals, vg.Points(1)); err != nil {
			return part{}, fmt.Errorf("log base: %w", err)
		}
		base.Horizontal = horiz
	}

	barWidth := groupWidth / vg.Length(n)
	for i, s := range c.Series {
		vals := make(plotter.Values, nc)
		for j := range vals {
			k := j
			if horiz {
				k = nc - 1 - j
			}
			vals[j] = s.Values[k] - baseValue
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return part{}, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		bars.Horizontal = horiz
		if base != nil {
			bars.StackOn(base)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		off := float64(i) - (n-1)/2
		if horiz {
			off = -off // the first series on top, as in the legend
		}
		bars.Offset = vg.Length(off) * barWidth
		p.Add(bars)
		legend[i].thumbs = []plot.Thumbnailer{bars}
	}
	if horiz {
		p.NominalY(cats...)
	} else {
		p.NominalX(cats...)
	}
	if c.LogY {
		setLog(valueAxis, baseValue, hi)
	} else {
		roundAxis(valueAxis, false)
	}
	return part{title: c.Title, grid: [][]*plot.Plot{{p}}, legend: legend, height: height}, nil
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	return p
}

// setLog switches a to a log10 scale spanning whole decades around
// [lo, hi] (both > 0).
func setLog(a *plot.Axis, lo, hi float64) {
	a.Scale = plot.LogScale{}
	a.Tick.Marker = plot.LogTicks{Prec: -1}
	a.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	a.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
	if a.Max <= a.Min {
		a.Max = a.Min * 10
	}
}

func checkFinite(vs []float64, what string) error {
	for j, v := range vs {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%s[%d] is %v", what, j, v)
		}
	}
	return nil
}

func checkValues(vs []float64, what string, logY bool) error {
	if err := checkFinite(vs, what); err != nil {
		return err
	}
	if logY {
		for j, v := range vs {
			if v <= 0 {
				return fmt.Errorf("%s[%d]=%v is not positive, as a log y axis needs", what, j, v)
			}
		}
	}
	return nil
}

// formatOf returns the gonum format name for path's extension.
// CheckPath reports, before any work, whether a chart can be saved to
// path: a .png or .svg name in a directory that takes a new file.
func CheckPath(path string) error {
	if _, err := formatOf(path); err != nil {
		return err
	}
	return atomicfile.CheckWritable(path)
}

func formatOf(path string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	switch ext {
	case ".png", ".svg":
		return ext[1:], nil
	}
	return "", fmt.Errorf("plots: cannot save chart to %q: unsupported extension %q (want .png or .svg)", path, filepath.Ext(path))
}
