// Command reproduce regenerates the papers' figures and tables: it runs the
// named experiments, prints each table with our numbers beside the paper's,
// and writes CSV, Markdown, PNG and SVG files under --out.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/plots"
)

const prog = "reproduce"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Exit(stderr, prog, reproduce(args, stdout, stderr))
}

func reproduce(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	out := fs.String("out", "results", "write each experiment's files under `DIR`/NAME/ (empty: write nothing)")
	var list string
	cli.EnumVar(fs, &list, "experiments", "all", "comma-separated experiments (the list above), or all")
	cli.SetHelp(fs, help())
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	names := experiments.Names()
	if list != "all" {
		names = cli.SplitList(list)
		if len(names) == 0 {
			return cli.Usagef("--experiments: empty list")
		}
	}
	var exps []experiments.Experiment
	for _, n := range names {
		e, err := experiments.Lookup(n)
		if err != nil {
			return cli.Usagef("--experiments: %w", err)
		}
		exps = append(exps, e)
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return cli.Usagef("--out: %w", err)
		}
	}
	var results []experiments.Result
	for _, e := range exps {
		r, err := e.Run()
		if err != nil {
			return err
		}
		if *out != "" {
			if err := write(filepath.Join(*out, r.Name), r, stderr); err != nil {
				return err
			}
		}
		results = append(results, r)
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, results)
	case cli.CSV:
		for _, r := range results {
			if err := table(r).CSV(stdout); err != nil {
				return err
			}
		}
		return nil
	}
	for i, r := range results {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		fmt.Fprintln(stdout, r.Title)
		if err := table(r).Render(stdout); err != nil {
			return err
		}
		for _, n := range r.Notes {
			fmt.Fprintln(stdout, "note:", n)
		}
		if *out != "" {
			fmt.Fprintf(stdout, "wrote %s/\n", filepath.Join(*out, r.Name))
		}
	}
	return nil
}

// help is reproduce's --help: the flags in groups and every experiment
// with what it reproduces.
func help() cli.Help {
	var list [][2]string
	for _, n := range experiments.Names() {
		e, _ := experiments.Lookup(n)
		d := e.Description
		if e.Slow {
			d = "[slow] " + d
		}
		list = append(list, [2]string{n, d})
	}
	return cli.Help{
		Usage:   "reproduce [flags]",
		Summary: "Regenerates the papers' figures and tables: runs the named experiments, prints each table with our numbers beside the paper's, and writes CSV, Markdown, PNG and SVG files under --out.",
		Lists:   []cli.List{{Title: "Experiments (--experiments)", Items: list}},
		Groups: []cli.FlagGroup{
			{Title: "What to run", Flags: []string{"experiments"}},
			{Title: "Output", Flags: []string{"out", "json", "csv"}},
		},
		Examples: []string{
			"reproduce                                              # every experiment, files under results/",
			"reproduce --experiments marius-table8,legend-fig18 --out /tmp/r",
			"reproduce --experiments pbg-table3 --out '' --csv      # print CSV, write nothing",
		},
	}
}

func table(r experiments.Result) plots.Table {
	return plots.Table{Header: r.Header, Rows: r.Rows}
}

// write stores one result as NAME.csv, NAME.md and one PNG and SVG per chart.
func write(dir string, r experiments.Result, stderr io.Writer) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	t := table(r)
	if err := atomicfile.Write(filepath.Join(dir, r.Name+".csv"), t.CSV); err != nil {
		return err
	}
	atomicfile.Announce(stderr, filepath.Join(dir, r.Name+".csv"))
	md := func(w io.Writer) error {
		fmt.Fprintf(w, "%s\n\n", r.Title)
		if err := t.Markdown(w); err != nil {
			return err
		}
		for _, n := range r.Notes {
			fmt.Fprintf(w, "\n* %s", n)
		}
		_, err := fmt.Fprintln(w)
		return err
	}
	if err := atomicfile.Write(filepath.Join(dir, r.Name+".md"), md); err != nil {
		return err
	}
	atomicfile.Announce(stderr, filepath.Join(dir, r.Name+".md"))
	for _, c := range r.Charts {
		var chart plots.Chart
		if c.Bars {
			bc := plots.BarChart{Title: c.Title, YLabel: c.YLabel, LogY: c.LogY, Categories: c.Categories}
			for _, s := range c.Series {
				bc.Series = append(bc.Series, plots.BarSeries{Name: s.Name, Values: s.Y})
			}
			chart = bc
		} else {
			lc := plots.LineChart{Title: c.Title, XLabel: c.XLabel, YLabel: c.YLabel, LogY: c.LogY, Scatter: c.Scatter}
			for _, s := range c.Series {
				lc.Series = append(lc.Series, plots.Series{Name: s.Name, X: s.X, Y: s.Y, Line: s.Name == "y = x"})
			}
			chart = lc
		}
		for _, ext := range []string{".png", ".svg"} {
			if err := plots.SaveStack(filepath.Join(dir, c.File+ext), chart); err != nil {
				return fmt.Errorf("%s: %w", r.Name, err)
			}
			atomicfile.Announce(stderr, filepath.Join(dir, c.File+ext))
		}
	}
	return nil
}
