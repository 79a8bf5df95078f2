// Package experiments holds tierflow's named, reproducible experiments, one
// per paper figure or table, each a function from parameters to a Result
// that carries our numbers beside the paper's. It holds the registry and
// the experiments that train for real; those that only simulate are in
// experiments/simulated, which registers them here.
package experiments

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Result is what an experiment produces: a table (rows already formatted,
// numbers without units; units are in the header), the charts to draw from
// it, and notes that explain the comparison.
type Result struct {
	Name   string     `json:"name"`
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	Charts []Chart    `json:"charts,omitempty"`
	Notes  []string   `json:"notes,omitempty"`
}

// Column is the index of the column headed name, or -1 when r has none.
func (r Result) Column(name string) int { return slices.Index(r.Header, name) }

// Series is one named line of points.
type Series struct {
	Name string    `json:"name"`
	X    []float64 `json:"x"`
	Y    []float64 `json:"y"`
}

// Chart is a chart to draw from a Result; File is the base name of the
// image (without extension). A line chart (the default) plots Series; a
// bar chart (Bars true) draws one group per Categories entry and one bar
// per series, taking series i's value in category j from Series[i].Y[j].
type Chart struct {
	File   string `json:"file"`
	Title  string `json:"title"`
	XLabel string `json:"x_label"`
	YLabel string `json:"y_label"`
	LogY   bool   `json:"log_y"`
	Bars   bool   `json:"bars,omitempty"`
	// Scatter draws markers only; series named "y = x" keep their line.
	Scatter    bool     `json:"scatter,omitempty"`
	Categories []string `json:"categories,omitempty"`
	Series     []Series `json:"series"`
}

// Experiment is a named experiment.
type Experiment struct {
	Name        string
	Description string
	Run         func() (Result, error)
	// Slow experiments run real training for minutes; tests skip them.
	Slow bool
}

var registry = map[string]Experiment{}

// Register adds an experiment to the registry that Names and Lookup read;
// packages holding experiments (experiments/simulated) call it from their
// init. A second experiment of the same name replaces the first.
func Register(e Experiment) { registry[e.Name] = e }

func register(e Experiment) { Register(e) }

// Names lists the experiments in alphabetical order.
func Names() []string {
	names := make([]string, 0, len(registry))
	for n := range registry {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the experiment with the given name.
func Lookup(name string) (Experiment, error) {
	e, ok := registry[name]
	if !ok {
		return Experiment{}, fmt.Errorf("unknown experiment %q (want one of %s)", name, strings.Join(Names(), ", "))
	}
	return e, nil
}
