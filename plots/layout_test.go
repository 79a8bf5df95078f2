package plots

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Structural tests of the figures: they measure the layout (where the
// data, the legends and the tick labels are) rather than compare pixels,
// which would depend on the font rasteriser.

// layoutOf lays charts out as SaveStack does.
func layoutOf(t *testing.T, charts ...Chart) (figureLayout, vg.Rectangle) {
	t.Helper()
	parts := make([]part, len(charts))
	for i, c := range charts {
		p, err := c.part()
		require.NoError(t, err)
		parts[i] = p
	}
	normalise(parts)
	w, h := figureSize(parts)
	dc := draw.New(vgimg.New(w, h))
	return layout(parts, dc), dc.Rectangle
}

var orderingNames = []string{"beta", "hilbert", "hilbert-symmetric", "legend-c", "tierflow", "inside-out", "outside-in", "row-major", "random"}

// sweepLike is a line chart of n series over integer p, as simulate
// sweep draws.
func sweepLike(n int) LineChart {
	c := LineChart{Title: "best ordering's epoch", XLabel: "partitions p", YLabel: "epoch (minutes)"}
	for i := 0; i < n; i++ {
		s := Series{Name: fmt.Sprintf("device-%d c=%d", i/5, 2<<(i%5))}
		for _, p := range []float64{8, 16, 32, 64} {
			s.X = append(s.X, p)
			s.Y = append(s.Y, p*float64(i+1)/7)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func orderingBars() BarChart {
	b := BarChart{Title: "epoch", YLabel: "minutes", Categories: orderingNames}
	e, s := BarSeries{Name: "epoch"}, BarSeries{Name: "I/O stall"}
	for i := range orderingNames {
		e.Values = append(e.Values, float64(10+15*i))
		s.Values = append(s.Values, float64(5+14*i))
	}
	b.Series = []BarSeries{e, s}
	return b
}

func orderingStrips() Strips {
	st := Strips{Title: "GPU utilisation", XLabel: "minutes", YLabel: "GPU busy"}
	for i, name := range orderingNames {
		s := Series{Name: name}
		for k := 0; k <= 10*(i+1); k++ {
			s.X = append(s.X, float64(k)+0.5)
			s.Y = append(s.Y, 0.1+0.3*math.Abs(math.Sin(float64(k))))
		}
		st.Series = append(st.Series, s)
	}
	return st
}

func fig7Like() LineChart {
	c := LineChart{Title: "Total I/O", XLabel: "partitions p", YLabel: "total I/O (GB)"}
	for i, name := range []string{"BETA", "Hilbert", "Hilbert-symmetric", "lower bound"} {
		s := Series{Name: name}
		for _, p := range []float64{8, 16, 32, 64, 128} {
			s.X = append(s.X, p)
			s.Y = append(s.Y, 262+float64(i)*100+1000/p)
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func devicePanels() Panels {
	ps := Panels{Title: "sweep"}
	for d := 0; d < 5; d++ {
		c := sweepLike(5)
		c.Title = fmt.Sprintf("device-%d", d)
		for i := range c.Series {
			c.Series[i].Name = fmt.Sprintf("c=%d", 2<<i)
		}
		ps.Charts = append(ps.Charts, c)
	}
	return ps
}

// figures are the shapes of every figure the commands draw.
func figures() map[string][]Chart {
	return map[string][]Chart{
		"simulate":          {orderingBars(), orderingStrips()},
		"sweep 25 series":   {sweepLike(25)},
		"sweep panels":      {devicePanels()},
		"fig7":              {fig7Like()},
		"short bars":        {goodBar(false)},
		"log bars":          {goodBar(true)},
		"long bars log":     {BarChart{Title: "t", YLabel: "s", LogY: true, Categories: orderingNames, Series: []BarSeries{{Name: "a", Values: []float64{1, 10, 100, 1000, 3, 4, 5, 6, 7}}}}},
		"line log":          {goodLine(true)},
		"timeline strips":   {Strips{Title: "t", XLabel: "seconds", YLabel: "busy", YMax: 1, Series: []Series{{Name: "compute", X: []float64{0.001, 0.1, 0.21}, Y: []float64{1, 0.5, 0}}, {Name: "disk read", X: []float64{0.001, 0.21}, Y: []float64{0, 0.2}}}}},
		"scatter with y=x":  {LineChart{Scatter: true, Series: []Series{{Name: "beta", X: []float64{0.99}, Y: []float64{0.1}}, {Name: "y = x", X: []float64{0, 1.1}, Y: []float64{0, 1.1}, Line: true}}}},
		"single point line": {LineChart{Series: []Series{{Name: "one", X: []float64{1}, Y: []float64{5}}}}},
	}
}

func intersects(a, b vg.Rectangle) bool {
	return a.Min.X < b.Max.X && b.Min.X < a.Max.X && a.Min.Y < b.Max.Y && b.Min.Y < a.Max.Y
}

func inside(r, in vg.Rectangle) bool {
	const eps = 0.01
	return r.Min.X >= in.Min.X-eps && r.Min.Y >= in.Min.Y-eps && r.Max.X <= in.Max.X+eps && r.Max.Y <= in.Max.Y+eps
}

func TestLegendsOutsideData(t *testing.T) {
	for name, charts := range figures() {
		t.Run(name, func(t *testing.T) {
			fl, page := layoutOf(t, charts...)
			for _, l := range fl.legends {
				assert.True(t, inside(l, page), "legend %v inside the figure %v", l, page)
				for _, p := range fl.plots {
					assert.False(t, intersects(l, p.data.Rectangle), "legend %v over the data %v", l, p.data.Rectangle)
					assert.False(t, intersects(l, p.cell.Rectangle), "legend %v over a plot's axes %v", l, p.cell.Rectangle)
				}
			}
			for _, p := range fl.plots {
				assert.True(t, inside(p.cell.Rectangle, page), "plot %v inside the figure %v", p.cell.Rectangle, page)
				for _, tr := range fl.titles {
					assert.False(t, intersects(tr, p.cell.Rectangle), "title %v over a plot %v", tr, p.cell.Rectangle)
				}
			}
		})
	}
}

// labelBoxes returns the extents of the major tick labels of a's ticks
// along the axis (x for the horizontal axis, y for the vertical one).
func labelBoxes(a plot.Axis, data draw.Canvas, horizontal bool) (lo, hi []vg.Length, labels []string) {
	for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if tk.IsMinor() || tk.Value < a.Min || tk.Value > a.Max {
			continue
		}
		var c, half vg.Length
		if horizontal {
			c, half = data.X(a.Norm(tk.Value)), a.Tick.Label.Width(tk.Label)/2
		} else {
			c, half = data.Y(a.Norm(tk.Value)), a.Tick.Label.Height(tk.Label)/2
		}
		lo, hi, labels = append(lo, c-half), append(hi, c+half), append(labels, tk.Label)
	}
	return lo, hi, labels
}

func TestTickLabelsDoNotCollide(t *testing.T) {
	for name, charts := range figures() {
		t.Run(name, func(t *testing.T) {
			fl, _ := layoutOf(t, charts...)
			for _, p := range fl.plots {
				for _, horizontal := range []bool{true, false} {
					a := p.plot.Y
					if horizontal {
						a = p.plot.X
					}
					lo, hi, labels := labelBoxes(a, p.data, horizontal)
					for i := range labels {
						for j := i + 1; j < len(labels); j++ {
							gap := max(lo[j]-hi[i], lo[i]-hi[j])
							assert.GreaterOrEqual(t, float64(gap), 2.0, "tick labels %q and %q collide", labels[i], labels[j])
						}
					}
				}
			}
		})
	}
}

func TestBarOrientation(t *testing.T) {
	fl, _ := layoutOf(t, orderingBars())
	p := fl.plots[0].plot
	// Nine ordering names do not fit side by side: the bars lie down and
	// the names are the y axis, the first ordering on top.
	_, _, labels := labelBoxes(p.Y, fl.plots[0].data, false)
	require.Len(t, labels, len(orderingNames))
	assert.Equal(t, "random", labels[0])
	assert.Equal(t, "beta", labels[len(labels)-1])

	fl, _ = layoutOf(t, goodBar(false))
	_, _, labels = labelBoxes(fl.plots[0].plot.X, fl.plots[0].data, true)
	assert.Equal(t, []string{"small", "medium", "large"}, labels, "short names stay under upright bars")
}

func TestIntegerAxisTicks(t *testing.T) {
	tests := []struct {
		name string
		xs   []float64
		want []string // nil: any integers
	}{
		{"fig7 p", []float64{8, 16, 32, 64, 128}, []string{"8", "16", "32", "64", "128"}},
		{"sweep p", []float64{8, 16, 24, 32, 48, 64}, []string{"8", "16", "24", "32", "48", "64"}},
		{"epochs", []float64{1, 2, 3}, []string{"1", "2", "3"}},
		{"many epochs", []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 25, 30, 40, 50}, nil},
		{"range p", []float64{4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22}, nil},
		{"one p", []float64{32}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ys := make([]float64, len(tc.xs))
			for i := range ys {
				ys[i] = 0.5 + float64(i)
			}
			fl, _ := layoutOf(t, LineChart{XLabel: "p", Series: []Series{{Name: "s", X: tc.xs, Y: ys}}})
			a := fl.plots[0].plot.X
			_, _, labels := labelBoxes(a, fl.plots[0].data, true)
			require.NotEmpty(t, labels)
			for _, l := range labels {
				assert.NotContains(t, l, ".", "integer axis labelled %q", l)
				_, err := strconv.Atoi(l)
				assert.NoError(t, err, "label %q", l)
			}
			if tc.want != nil {
				assert.Equal(t, tc.want, labels)
			}
			for _, tk := range a.Tick.Marker.Ticks(a.Min, a.Max) {
				assert.Equal(t, math.Trunc(tk.Value), tk.Value, "tick at %v", tk.Value)
			}
		})
	}
}

func TestNiceTicks(t *testing.T) {
	tests := []struct {
		lo, hi  float64
		integer bool
		want    string
	}{
		{0, 0.21, false, "0.00 0.05 0.10 0.15 0.20"},
		{262, 880, false, "400 600 800"},
		{200, 1000, false, "200 400 600 800 1000"},
		{0, 1, false, "0.0 0.2 0.4 0.6 0.8 1.0"},
		{0, 150, false, "0 50 100 150"},
		{1, 3, true, "1 2 3"},
		{0, 12, true, "0 5 10"},
		{0, 8, true, "0 2 4 6 8"},
		{0, 120, true, "0 25 50 75 100"},
		{0, 100, true, "0 20 40 60 80 100"},
		{-1, 1, false, "-1.0 -0.5 0.0 0.5 1.0"},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(tc.lo, tc.hi, tc.integer), func(t *testing.T) {
			var labels []string
			for _, tk := range (niceTicks{integer: tc.integer}).Ticks(tc.lo, tc.hi) {
				labels = append(labels, tk.Label)
			}
			assert.Equal(t, tc.want, strings.Join(labels, " "))
		})
	}
}

func TestStackedDataAreasAlign(t *testing.T) {
	fl, _ := layoutOf(t, orderingBars(), orderingStrips())
	require.Len(t, fl.plots, 1+len(orderingNames))
	bars := fl.plots[0].data.Rectangle
	strip := fl.plots[1].data.Rectangle
	for i, p := range fl.plots {
		d := p.data.Rectangle
		assert.InDelta(t, float64(bars.Min.X), float64(d.Min.X), 0.01, "plot %d starts where the others do", i)
		assert.InDelta(t, float64(bars.Max.X), float64(d.Max.X), 0.01, "plot %d ends where the others do", i)
		if i > 0 {
			assert.InDelta(t, float64(strip.Size().Y), float64(d.Size().Y), 0.01, "strip %d as tall as the first", i)
		}
		if i > 1 {
			assert.Less(t, float64(d.Max.Y), float64(fl.plots[i-1].data.Min.Y), "strip %d below strip %d", i, i-1)
		}
	}
	// Only the last strip carries the time axis.
	for i, p := range fl.plots[1:] {
		last := i == len(orderingNames)-1
		assert.Equal(t, last, len(p.plot.X.Tick.Marker.Ticks(p.plot.X.Min, p.plot.X.Max)) > 0, "strip %d", i)
	}
}

func TestPanelsShareStyles(t *testing.T) {
	fl, _ := layoutOf(t, devicePanels())
	require.Len(t, fl.plots, 5)
	require.Len(t, fl.legends, 1)
	assert.Len(t, fl.parts[0].legend, 5, "one legend entry per c, not per device and c")
}

func TestSaveNewCharts(t *testing.T) {
	dir := t.TempDir()
	for name, charts := range map[string][]Chart{"strips": {orderingStrips()}, "panels": {devicePanels()}, "stack": {orderingBars(), orderingStrips()}} {
		for _, ext := range []string{".png", ".svg"} {
			path := filepath.Join(dir, name+ext)
			require.NoError(t, SaveStack(path, charts...))
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			if ext == ".png" {
				assert.True(t, strings.HasPrefix(string(data), "\x89PNG"), name)
			} else {
				assert.Contains(t, string(data), "<svg", name)
			}
		}
	}
}

func TestNewChartErrors(t *testing.T) {
	tests := []struct {
		name  string
		chart Chart
		want  string
	}{
		{"strips none", Strips{}, "no series"},
		{"strips negative", Strips{Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{-1}}}}, "negative"},
		{"strips NaN", Strips{Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{nan()}}}}, "NaN"},
		{"panels none", Panels{}, "no panels"},
		{"panel bad", Panels{Charts: []LineChart{{Title: "x"}}}, `panel 1 ("x"): no series`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := SaveStack(filepath.Join(dir, "c.png"), tc.chart)
			require.ErrorContains(t, err, tc.want)
			assert.Empty(t, dirEntries(t, dir))
		})
	}
}
