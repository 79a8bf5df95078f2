package plots

import (
	"errors"
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
)

// Panels draws line charts as small multiples, Cols to a row, under one
// title and with one legend: series of the same name have the same colour
// and marker in every panel, so a long legend (five devices × five buffer
// sizes) becomes one panel per device and a short legend of sizes.
// Each chart's Title names its panel; each panel has its own y range.
type Panels struct {
	Title  string
	Charts []LineChart
	// Cols is the number of panels per row (0: 2, or 1 for one chart).
	Cols int
}

// panelHeight is the height of one row of panels.
const panelHeight = 6 * vg.Centimeter

// Save renders the panels to path with the same rules as LineChart.Save.
func (ps Panels) Save(path string) error { return SaveStack(path, ps) }

func (ps Panels) part() (part, error) {
	if len(ps.Charts) == 0 {
		return part{}, errors.New("no panels")
	}
	cols := ps.Cols
	if cols <= 0 {
		cols = min(2, len(ps.Charts))
	}
	styles := map[string]int{}
	style := func(name string) int {
		k, ok := styles[name]
		if !ok {
			k = len(styles)
			styles[name] = k
		}
		return k
	}
	var legend []legendEntry
	seen := map[string]bool{}
	var grid [][]*plot.Plot
	for i, c := range ps.Charts {
		p, entries, err := c.plot(style)
		if err != nil {
			return part{}, fmt.Errorf("panel %d (%q): %w", i+1, c.Title, err)
		}
		p.Title.Text = c.Title
		p.Title.TextStyle.Font.Size = 10
		p.Title.Padding = 1.5 * vg.Millimeter
		for _, e := range entries {
			if !seen[e.name] {
				seen[e.name] = true
				legend = append(legend, e)
			}
		}
		if i%cols == 0 {
			grid = append(grid, make([]*plot.Plot, cols))
		}
		grid[len(grid)-1][i%cols] = p
	}
	return part{
		title:  ps.Title,
		grid:   grid,
		legend: legend,
		height: vg.Length(len(grid))*panelHeight + titleHeight(ps.Title),
		padX:   4 * vg.Millimeter,
		padY:   4 * vg.Millimeter,
	}, nil
}
