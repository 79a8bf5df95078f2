// Command reproduce regenerates the papers' figures and tables: it runs the
// named experiments, prints each table with our numbers beside the paper's,
// and writes CSV, Markdown, PNG and SVG files under --out.
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/experiments"
	_ "github.com/tierflow/tierflow/experiments/simulated" // registers the simulated experiments
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
	readmeOnly := fs.Bool("readme-only", false, "run nothing: write DIR/NAME/README.md from the files already in DIR/NAME/ (commit and date from git log of that folder); all also covers the results folders other tools write")
	var list string
	cli.EnumVar(fs, &list, "experiments", "all", "comma-separated experiments (the list above), or all")
	cli.SetHelp(fs, help())
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if *readmeOnly {
		return readmes(*out, list, stdout, stderr)
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
		start := time.Now()
		r, err := e.Run()
		if err != nil {
			return err
		}
		cli.RenderAll(r.Notes) // the fields they name ({Eval}) by their flags
		if *out != "" {
			dir := filepath.Join(*out, r.Name)
			if err := write(dir, r, stderr); err != nil {
				return err
			}
			p := renderProvenance(experiments.LiveProvenance(experiments.MakeCommand(r.Name), start, time.Since(start)))
			if err := writeReadme(dir, r, p, stderr); err != nil {
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
		d := cli.Render(e.Description)
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
			{Title: "Output", Flags: []string{"out", "readme-only", "json", "csv"}},
		},
		Examples: []string{
			"reproduce                                              # every experiment, files under results/",
			"reproduce --experiments marius-table8,legend-fig18 --out /tmp/r",
			"reproduce --experiments pbg-table3 --out '' --csv      # print CSV, write nothing",
			"reproduce --readme-only                                # every results/NAME/README.md from the files there",
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

// writeReadme writes dir/README.md for a result whose files write has just
// stored in dir.
func writeReadme(dir string, r experiments.Result, p experiments.Provenance, stderr io.Writer) error {
	images, files, err := experiments.ScanFolder(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", r.Name, err)
	}
	titles := map[string]string{}
	for _, c := range r.Charts {
		titles[c.File] = c.Title
	}
	for i, im := range images {
		if t := titles[im.File]; t != "" {
			images[i].Alt = t
		}
	}
	path := filepath.Join(dir, "README.md")
	rd := experiments.Readme{Result: r, Prov: p, Images: images, Files: files}
	if err := atomicfile.Write(path, func(w io.Writer) error { return experiments.WriteReadme(w, rd) }); err != nil {
		return fmt.Errorf("%s: %w", r.Name, err)
	}
	atomicfile.Announce(stderr, path)
	return nil
}

// readmes is --readme-only: every named folder's README.md from the files
// committed there, without running anything.
func readmes(out, list string, stdout, stderr io.Writer) error {
	if out == "" {
		return cli.Usagef("--readme-only needs --out")
	}
	var names []string
	all := list == "all"
	if all {
		names = readmeFolders()
	} else {
		names = cli.SplitList(list)
		if len(names) == 0 {
			return cli.Usagef("--experiments: empty list")
		}
	}
	root, rel := gitRoot(out)
	return readmesAt(out, root, rel, names, all, stdout, stderr)
}

// readmeFolders are the results folders --readme-only covers with all:
// every experiment's and those other tools write.
func readmeFolders() []string {
	names := experiments.Names()
	for _, f := range experiments.Folders {
		names = append(names, f.Name)
	}
	return names
}

// readmesAt writes the README.md of each folder names under out, with the
// provenance git gives for the repository's folder root/rel (out itself,
// or a copy of it); all skips folders that are not there.
func readmesAt(out, root, rel string, names []string, all bool, stdout, stderr io.Writer) error {
	for _, n := range names {
		dir := filepath.Join(out, n)
		if _, err := os.Stat(dir); err != nil {
			if all {
				fmt.Fprintf(stderr, "reproduce: %s: no results folder, skipped\n", dir)
				continue
			}
			return cli.Usagef("--readme-only: %s: %w", n, err)
		}
		relDir := filepath.ToSlash(filepath.Join(rel, n))
		if f, ok := experiments.LookupFolder(n); ok {
			f.Command = cli.Render(f.Command)
			p := renderProvenance(experiments.CommittedProvenance(root, relDir, f.Command))
			note, _ := experiments.NoteFor(n)
			p.Machine = experiments.RecordedMachine(false, note.Body)
			p.RunTime = experiments.RecordedRunTime(note.Body)
			if err := experiments.WriteFolderReadme(dir, f, p); err != nil {
				return err
			}
			fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, "README.md"))
			continue
		}
		e, err := experiments.Lookup(n)
		if err != nil {
			return cli.Usagef("--experiments: %w", err)
		}
		r, err := readResult(dir, n)
		if err != nil {
			return err
		}
		p := renderProvenance(experiments.CommittedProvenance(root, relDir, experiments.MakeCommand(n)))
		notes := strings.Join(r.Notes, "\n")
		note, _ := experiments.NoteFor(n)
		p.Machine = experiments.RecordedMachine(!e.Slow, r.Title, notes, note.Body)
		p.RunTime = experiments.RecordedRunTime(notes)
		if err := writeReadme(dir, r, p, io.Discard); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, "README.md"))
	}
	return nil
}

// gitRoot returns the repository root holding dir and dir relative to it
// (dir itself and "." outside a checkout).
func gitRoot(dir string) (root, rel string) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir, "."
	}
	b, err := exec.Command("git", "-C", abs, "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return abs, "."
	}
	root = strings.TrimSpace(string(b))
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	if a, err := filepath.EvalSymlinks(abs); err == nil {
		abs = a
	}
	rel, err = filepath.Rel(root, abs)
	if err != nil {
		return abs, "."
	}
	return root, rel
}

// readResult reads back a Result that write stored in dir: the header and
// rows from NAME.csv, the title and notes from NAME.md.
func readResult(dir, name string) (experiments.Result, error) {
	r := experiments.Result{Name: name}
	f, err := os.Open(filepath.Join(dir, name+".csv"))
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return r, fmt.Errorf("%s: %s.csv: %w", name, name, err)
	}
	if len(recs) == 0 {
		return r, fmt.Errorf("%s: %s.csv is empty", name, name)
	}
	r.Header, r.Rows = recs[0], recs[1:]
	md, err := os.ReadFile(filepath.Join(dir, name+".md"))
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	r.Title, r.Notes = parseMarkdown(string(md))
	return r, nil
}

// parseMarkdown splits NAME.md as write makes it: the title, a blank
// line, the table, then one "* " line a note (a note's further lines
// follow it).
func parseMarkdown(md string) (title string, notes []string) {
	lines := strings.Split(strings.TrimRight(md, "\n"), "\n")
	if len(lines) == 0 {
		return "", nil
	}
	title = lines[0]
	i := 1
	for i < len(lines) && !strings.HasPrefix(lines[i], "|") {
		i++
	}
	for i < len(lines) && strings.HasPrefix(lines[i], "|") {
		i++
	}
	for ; i < len(lines); i++ {
		ln := lines[i]
		switch {
		case strings.HasPrefix(ln, "* "):
			notes = append(notes, strings.TrimPrefix(ln, "* "))
		case len(notes) > 0 && ln != "":
			notes[len(notes)-1] += "\n" + ln
		}
	}
	return title, notes
}

// renderProvenance names by their flags the fields that a README's
// provenance names (the command, how it was written: {ReadmeOnly}).
func renderProvenance(p experiments.Provenance) experiments.Provenance {
	p.Command, p.From = cli.Render(p.Command), cli.Render(p.From)
	return p
}
