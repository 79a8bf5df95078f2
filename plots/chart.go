package plots

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
func (c LineChart) Save(path string) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	p, err := c.plot()
	if err != nil {
		return fmt.Errorf("plots: line chart %q: %w", path, err)
	}
	return savePlot(p, path, format)
}

// Save renders the chart to path with the same rules as LineChart.Save.
func (c BarChart) Save(path string) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	p, err := c.plot()
	if err != nil {
		return fmt.Errorf("plots: bar chart %q: %w", path, err)
	}
	return savePlot(p, path, format)
}

func (c LineChart) plot() (*plot.Plot, error) {
	if len(c.Series) == 0 {
		return nil, errors.New("no series")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("series %d (%q): len(X)=%d != len(Y)=%d", i, s.Name, len(s.X), len(s.Y))
		}
		if len(s.X) == 0 {
			return nil, fmt.Errorf("series %d (%q): no points", i, s.Name)
		}
		if err := checkFinite(s.X, "X"); err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		if err := checkValues(s.Y, "Y", c.LogY); err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		for _, y := range s.Y {
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}

	p := newPlot(c.Title, c.XLabel, c.YLabel)
	p.Add(plotter.NewGrid())
	for i, s := range c.Series {
		xys := make(plotter.XYs, len(s.X))
		for j := range s.X {
			xys[j] = plotter.XY{X: s.X[j], Y: s.Y[j]}
		}
		line, points, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		col := plotutil.Color(i)
		line.Color = col
		points.Color = col
		points.Shape = plotutil.Shape(i)
		if c.Scatter && !s.Line {
			p.Add(points)
			p.Legend.Add(s.Name, points)
			continue
		}
		p.Add(line, points)
		p.Legend.Add(s.Name, line, points)
	}
	if c.LogY {
		setLogY(p, lo, hi)
	}
	return p, nil
}

func (c BarChart) plot() (*plot.Plot, error) {
	if len(c.Categories) == 0 {
		return nil, errors.New("no categories")
	}
	if len(c.Series) == 0 {
		return nil, errors.New("no series")
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range c.Series {
		if len(s.Values) != len(c.Categories) {
			return nil, fmt.Errorf("series %d (%q): %d values for %d categories", i, s.Name, len(s.Values), len(c.Categories))
		}
		if err := checkValues(s.Values, "value", c.LogY); err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		for _, v := range s.Values {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}

	p := newPlot(c.Title, "", c.YLabel)
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil // category axis: horizontal grid lines only
	p.Add(grid)

	// A log axis cannot start at zero, so with LogY every bar is stacked on
	// an invisible base at the bottom of the axis.
	var base *plotter.BarChart
	baseValue := 0.0
	if c.LogY {
		baseValue = math.Pow(10, math.Floor(math.Log10(lo)))
		if baseValue >= lo {
			baseValue /= 10
		}
		vals := make(plotter.Values, len(c.Categories))
		for j := range vals {
			vals[j] = baseValue
		}
		var err error
		if base, err = plotter.NewBarChart(vals, vg.Points(1)); err != nil {
			return nil, fmt.Errorf("log base: %w", err)
		}
	}

	// Groups take about 70% of the space available per category.
	n := float64(len(c.Series))
	groupWidth := 0.7 * (chartWidth - 2.5*vg.Centimeter) / vg.Length(len(c.Categories))
	barWidth := groupWidth / vg.Length(n)
	for i, s := range c.Series {
		vals := make(plotter.Values, len(s.Values))
		for j, v := range s.Values {
			vals[j] = v - baseValue
		}
		bars, err := plotter.NewBarChart(vals, barWidth)
		if err != nil {
			return nil, fmt.Errorf("series %d (%q): %w", i, s.Name, err)
		}
		if base != nil {
			bars.StackOn(base)
		}
		bars.Color = plotutil.Color(i)
		bars.LineStyle.Width = 0
		bars.Offset = vg.Length(float64(i)-(n-1)/2) * barWidth
		p.Add(bars)
		p.Legend.Add(s.Name, bars)
	}
	p.NominalX(c.Categories...)
	if c.LogY {
		setLogY(p, baseValue, hi)
	}
	return p, nil
}

func newPlot(title, xlabel, ylabel string) *plot.Plot {
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = xlabel
	p.Y.Label.Text = ylabel
	p.Legend.Top = true
	p.Legend.Left = true
	p.Legend.XOffs = 2 * vg.Millimeter
	p.Legend.YOffs = -2 * vg.Millimeter
	return p
}

// setLogY switches p to a log10 y axis spanning whole decades around [lo, hi]
// (both > 0).
func setLogY(p *plot.Plot, lo, hi float64) {
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min * 10
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

// savePlot renders p in memory, then writes it to a temporary file next to
// path and renames it into place.
func savePlot(p *plot.Plot, path, format string) error {
	var buf bytes.Buffer
	if err := render(p, format, &buf); err != nil {
		return fmt.Errorf("plots: render %q: %w", path, err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// render draws p into w; gonum/plot panics on some invalid input, which is
// turned into an error here.
func render(p *plot.Plot, format string, w io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gonum/plot: %v", r)
		}
	}()
	wt, err := p.WriterTo(chartWidth, chartHeight, format)
	if err != nil {
		return err
	}
	_, err = wt.WriteTo(w)
	return err
}
