package plots

import (
	"bytes"
	"fmt"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// Chart is anything SaveStack can draw: a LineChart or a BarChart.
type Chart interface {
	plot() (*plot.Plot, error)
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
	ps := make([][]*plot.Plot, len(charts))
	for i, c := range charts {
		p, err := c.plot()
		if err != nil {
			return fmt.Errorf("plots: stack %q: chart %d: %w", path, i+1, err)
		}
		ps[i] = []*plot.Plot{p}
	}
	var buf bytes.Buffer
	if err := renderStack(ps, format, &buf); err != nil {
		return fmt.Errorf("plots: render %q: %w", path, err)
	}
	return atomicfile.WriteBytes(path, buf.Bytes())
}

func renderStack(ps [][]*plot.Plot, format string, w io.Writer) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("gonum/plot: %v", r)
		}
	}()
	width, height := chartWidth, chartHeight*vg.Length(len(ps))
	var canvas vg.CanvasWriterTo
	switch format {
	case "svg":
		canvas = vgsvg.New(width, height)
	default:
		canvas = vgimg.PngCanvas{Canvas: vgimg.New(width, height)}
	}
	dc := draw.New(canvas)
	tiles := draw.Tiles{Rows: len(ps), Cols: 1, PadX: vg.Millimeter, PadY: 3 * vg.Millimeter, PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter}
	cells := plot.Align(ps, tiles, dc)
	for i := range ps {
		ps[i][0].Draw(cells[i][0])
	}
	_, err = canvas.WriteTo(w)
	return err
}
