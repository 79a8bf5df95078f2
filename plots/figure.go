package plots

import (
	"bytes"
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// Layout rules, applied here once for every chart:
//
//   - a legend never sits on the data: it is drawn in a column to the right
//     of the data areas (the column is as wide as the widest legend of the
//     figure, so the data areas of stacked charts line up);
//   - the data areas of stacked charts share their left and right edges,
//     so their x axes can be read against each other;
//   - a chart is as tall as its content needs (a horizontal bar chart
//     grows with its categories, a strip chart with its strips, any chart
//     with a long legend).

// Chart is anything SaveStack can draw: a LineChart, a BarChart, a
// Strips or a Panels.
type Chart interface {
	part() (part, error)
}

// part is one chart laid out: a grid of plots with an optional title
// above the grid and an optional legend to the right of its data.
type part struct {
	title  string
	grid   [][]*plot.Plot
	legend []legendEntry
	// height is the part's height in the figure (grown to fit the legend).
	height vg.Length
	// padX and padY separate the plots of the grid.
	padX, padY vg.Length
}

// legendEntry is one line of a legend.
type legendEntry struct {
	name   string
	thumbs []plot.Thumbnailer
}

// Figure geometry.
const (
	figMargin = 2 * vg.Millimeter // around the figure
	legendGap = 4 * vg.Millimeter // between the data and the legend
	partGap   = 5 * vg.Millimeter // between stacked charts
)

// legendStyle is the text style of every legend.
func legendStyle() text.Style {
	return plot.NewLegend().TextStyle
}

// titleStyle is the text style of a part's title.
func titleStyle() text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, 12), Handler: plot.DefaultTextHandler, XAlign: draw.XCenter}
}

// legendSize is the width and height the legend's entries take.
func legendSize(es []legendEntry) (w, h vg.Length) {
	if len(es) == 0 {
		return 0, 0
	}
	l := plot.NewLegend()
	for _, e := range es {
		r := l.TextStyle.Rectangle(" " + e.name)
		w = max(w, l.ThumbnailWidth+r.Max.X)
		h = max(h, r.Max.Y)
	}
	return w, h * vg.Length(len(es))
}

// titleHeight is the height a part's title takes (0 without one).
func titleHeight(title string) vg.Length {
	if title == "" {
		return 0
	}
	return titleStyle().Height(title) + 2*vg.Millimeter
}

// placed is where layout put one plot: its whole cell and its data area.
type placed struct {
	plot       *plot.Plot
	cell, data draw.Canvas
}

// figureLayout is a figure laid out on a canvas: what draw draws, and what
// the tests measure.
type figureLayout struct {
	plots   []placed
	legends []vg.Rectangle // one per part with a legend
	titles  []vg.Rectangle
	parts   []part
	// legendBoxes[i] is the canvas part i's legend is drawn in (empty without one).
	legendBoxes []draw.Canvas
}

// figureSize is the width and height of a figure of parts.
func figureSize(parts []part) (vg.Length, vg.Length) {
	h := 2*figMargin + partGap*vg.Length(len(parts)-1)
	for _, p := range parts {
		h += p.height
	}
	return chartWidth, h
}

// normalise grows each part to fit its legend.
func normalise(parts []part) {
	for i := range parts {
		_, lh := legendSize(parts[i].legend)
		need := lh + titleHeight(parts[i].title) + 3*vg.Centimeter
		parts[i].height = max(parts[i].height, need)
	}
}

// layout places parts, one below the other, on dc.
func layout(parts []part, dc draw.Canvas) figureLayout {
	fl := figureLayout{parts: parts}
	var legendW vg.Length
	for _, p := range parts {
		w, _ := legendSize(p.legend)
		legendW = max(legendW, w)
	}
	right := dc.Max.X - figMargin
	if legendW > 0 {
		right -= legendW + legendGap
	}
	left := dc.Min.X + figMargin

	// The grid area of each part, then the left and right gutters (axis
	// labels and tick labels) of the widest part, so that every part's
	// data area starts and ends at the same x.
	type area struct {
		c     draw.Canvas
		tiles draw.Tiles
	}
	areas := make([]area, len(parts))
	y := dc.Max.Y - figMargin
	for i, p := range parts {
		if i > 0 {
			y -= partGap
		}
		top := y
		y -= p.height
		th := titleHeight(p.title)
		if th > 0 {
			fl.titles = append(fl.titles, vg.Rectangle{Min: vg.Point{X: left, Y: top - th}, Max: vg.Point{X: right, Y: top}})
		}
		c := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: left, Y: y}, Max: vg.Point{X: right, Y: top - th}}}
		cols := 0
		for _, row := range p.grid {
			cols = max(cols, len(row))
		}
		areas[i] = area{c: c, tiles: draw.Tiles{Rows: len(p.grid), Cols: cols, PadX: p.padX, PadY: p.padY}}
	}
	gutter := func(a area, p part) (l, r vg.Length) {
		cells := alignGrid(p.grid, a.tiles, a.c)
		first := cells[0][0]
		last := cells[0][len(cells[0])-1]
		l = p.grid[0][0].DataCanvas(first).Min.X - a.c.Min.X
		r = a.c.Max.X - p.grid[0][len(p.grid[0])-1].DataCanvas(last).Max.X
		return l, r
	}
	var gl, gr vg.Length
	ls := make([]vg.Length, len(parts))
	rs := make([]vg.Length, len(parts))
	for i, p := range parts {
		ls[i], rs[i] = gutter(areas[i], p)
		gl, gr = max(gl, ls[i]), max(gr, rs[i])
	}
	for i, p := range parts {
		a := areas[i]
		a.c = draw.Crop(a.c, gl-ls[i], -(gr - rs[i]), 0, 0)
		cells := alignGrid(p.grid, a.tiles, a.c)
		for r, row := range p.grid {
			for k, pl := range row {
				if pl == nil {
					continue
				}
				fl.plots = append(fl.plots, placed{plot: pl, cell: cells[r][k], data: pl.DataCanvas(cells[r][k])})
			}
		}
		if len(p.legend) > 0 {
			lw, lh := legendSize(p.legend)
			top := p.grid[0][0].DataCanvas(cells[0][0]).Max.Y
			x := right + legendGap
			box := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{Min: vg.Point{X: x, Y: a.c.Min.Y}, Max: vg.Point{X: x + lw, Y: top}}}
			fl.legendBoxes = append(fl.legendBoxes, box)
			fl.legends = append(fl.legends, vg.Rectangle{Min: vg.Point{X: x, Y: top - lh}, Max: vg.Point{X: x + lw, Y: top}})
		} else {
			fl.legendBoxes = append(fl.legendBoxes, draw.Canvas{})
		}
	}
	return fl
}

// draw draws the laid-out figure.
func (fl figureLayout) draw(dc draw.Canvas) {
	dc.SetColor(color.White)
	dc.Fill(dc.Rectangle.Path())
	ti := 0
	for i, p := range fl.parts {
		if p.title != "" {
			r := fl.titles[ti]
			ti++
			sty := titleStyle()
			c := draw.Canvas{Canvas: dc.Canvas, Rectangle: r}
			c.FillText(sty, vg.Point{X: (r.Min.X + r.Max.X) / 2, Y: r.Min.Y + 2*vg.Millimeter + sty.FontExtents().Descent}, p.title)
		}
		if len(p.legend) > 0 {
			l := plot.NewLegend()
			l.Top, l.Left = true, true
			for _, e := range p.legend {
				l.Add(e.name, e.thumbs...)
			}
			l.Draw(fl.legendBoxes[i])
		}
	}
	for _, pl := range fl.plots {
		pl.plot.Draw(pl.cell)
	}
}

// SaveStack renders charts one above the other into a single image at path
// (.png or .svg), written atomically like LineChart.Save.
func SaveStack(path string, charts ...Chart) error {
	format, err := formatOf(path)
	if err != nil {
		return err
	}
	if len(charts) == 0 {
		return fmt.Errorf("plots: stack %q: no charts", path)
	}
	parts := make([]part, len(charts))
	for i, c := range charts {
		p, err := c.part()
		if err != nil {
			if len(charts) == 1 {
				return fmt.Errorf("plots: chart %q: %w", path, err)
			}
			return fmt.Errorf("plots: stack %q: chart %d: %w", path, i+1, err)
		}
		parts[i] = p
	}
	var buf bytes.Buffer
	if err := renderParts(parts, format, &buf); err != nil {
		return fmt.Errorf("plots: render %q: %w", path, err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

// renderParts draws parts into w; gonum/plot panics on some invalid input,
// which is turned into an error here.
func renderParts(parts []part, format string, w io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gonum/plot: %v", r)
		}
	}()
	normalise(parts)
	width, height := figureSize(parts)
	var canvas vg.CanvasWriterTo
	switch format {
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	dc := draw.New(canvas)
	layout(parts, dc).draw(dc)
	_, err = canvas.WriteTo(w)
	return err
}

// alignGrid returns the cell of every plot of grid (row-major, nil for an
// empty cell) on dc so that every data area has the same size and the
// data areas of a column (row) share their left and right (top and bottom)
// edges, whatever the axis labels beside them. (plot.Align leaves the
// data area of a row with an x axis taller than the rows without one.)
func alignGrid(grid [][]*plot.Plot, t draw.Tiles, dc draw.Canvas) [][]draw.Canvas {
	cells := make([][]draw.Canvas, t.Rows)
	for j := range cells {
		cells[j] = make([]draw.Canvas, t.Cols)
		for i := range cells[j] {
			cells[j][i] = t.At(dc, i, j)
		}
	}
	// The gutters depend a little on the cell's size (gonum pads the data
	// area for glyphs in data coordinates): measure again on the result.
	for range 3 {
		cells = alignOnce(grid, t, dc, cells)
	}
	return cells
}

func alignOnce(grid [][]*plot.Plot, t draw.Tiles, dc draw.Canvas, cells [][]draw.Canvas) [][]draw.Canvas {
	rows, cols := t.Rows, t.Cols
	type gut struct{ l, r, b, t vg.Length }
	g := make([][]gut, rows)
	colL, colR := make([]vg.Length, cols), make([]vg.Length, cols)
	rowB, rowT := make([]vg.Length, rows), make([]vg.Length, rows)
	for j := range grid {
		g[j] = make([]gut, cols)
		for i, p := range grid[j] {
			if p == nil {
				continue
			}
			c := cells[j][i]
			d := p.DataCanvas(c)
			g[j][i] = gut{d.Min.X - c.Min.X, c.Max.X - d.Max.X, d.Min.Y - c.Min.Y, c.Max.Y - d.Max.Y}
			colL[i], colR[i] = max(colL[i], g[j][i].l), max(colR[i], g[j][i].r)
			rowB[j], rowT[j] = max(rowB[j], g[j][i].b), max(rowT[j], g[j][i].t)
		}
	}
	spaceX := t.PadX * vg.Length(cols-1)
	for i := range colL {
		spaceX += colL[i] + colR[i]
	}
	spaceY := t.PadY * vg.Length(rows-1)
	for j := range rowB {
		spaceY += rowB[j] + rowT[j]
	}
	w := (dc.Max.X - dc.Min.X - spaceX) / vg.Length(cols)
	h := (dc.Max.Y - dc.Min.Y - spaceY) / vg.Length(rows)
	out := make([][]draw.Canvas, rows)
	top := dc.Max.Y
	for j := 0; j < rows; j++ {
		out[j] = make([]draw.Canvas, cols)
		dataTop := top - rowT[j]
		x := dc.Min.X
		for i := 0; i < cols; i++ {
			dataLeft := x + colL[i]
			gg := g[j][i]
			out[j][i] = draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
				Min: vg.Point{X: dataLeft - gg.l, Y: dataTop - h - gg.b},
				Max: vg.Point{X: dataLeft + w + gg.r, Y: dataTop + gg.t},
			}}
			x = dataLeft + w + colR[i] + t.PadX
		}
		top = dataTop - h - rowB[j] - t.PadY
	}
	return out
}
