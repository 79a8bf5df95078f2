// Command tracecheck checks trace files the way a viewer reads them
// (chrometrace.Check) and prints what each holds; with --summary, what
// each run in it did (chrometrace.Summarize): make check-trace runs it
// before opening the files in a browser, and REPRODUCE reads validation
// traces with it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"text/tabwriter"

	"github.com/tierflow/tierflow/internal/chrometrace"
)

func main() {
	summary := flag.Bool("summary", false, "print each run's tracks (spans, busy time, transfer rates), the disk's busy time, its loads by when their partition was last written and, for a prediction and a measurement of one ordering, the buckets each waited for")
	minWait := flag.Duration("min-wait", 1e6, "with --summary: the shortest wait compared bucket by bucket")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: tracecheck [--summary [--min-wait 1ms]] FILE.json ...")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() == 0 {
		flag.Usage()
		os.Exit(2)
	}
	bad := false
	for _, path := range flag.Args() {
		data, err := os.ReadFile(path)
		if err == nil {
			err = chrometrace.Check(data)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "tracecheck: %s: %v\n", path, err)
			bad = true
			continue
		}
		var f chrometrace.File
		_ = json.Unmarshal(data, &f) // Check has read it
		count := map[string]int{}
		for _, e := range f.TraceEvents {
			count[e.Ph]++
		}
		var kinds []string
		for k := range count {
			kinds = append(kinds, fmt.Sprintf("%s %d", k, count[k]))
		}
		sort.Strings(kinds)
		fmt.Printf("%s: ok, %d bytes, events by phase: %v\n", path, len(data), kinds)
		if *summary {
			printSummary(os.Stdout, f, minWait.Seconds())
		}
	}
	if bad {
		os.Exit(1)
	}
}

func printSummary(out io.Writer, f chrometrace.File, minWait float64) {
	sums := chrometrace.Summarize(f)
	for _, s := range sums {
		fmt.Fprintf(out, "\n%s: %.3f s\n", s.Process, s.Seconds)
		w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(w, "  track\tspans\tbusy s\tMB\tMB/s p10\tMB/s median\tMB/s p90\n")
		for _, t := range s.Tracks {
			if t.Bytes == 0 {
				fmt.Fprintf(w, "  %s\t%d\t%.3f\t\t\t\t\n", t.Track, t.Spans, t.BusySeconds)
				continue
			}
			fmt.Fprintf(w, "  %s\t%d\t%.3f\t%.0f\t%.0f\t%.0f\t%.0f\n", t.Track, t.Spans, t.BusySeconds, t.Bytes/1e6, t.RateP10/1e6, t.RateP50/1e6, t.RateP90/1e6)
		}
		if s.DiskBusySeconds > 0 {
			fmt.Fprintf(w, "  disk, read or write\t\t%.3f\t%.0f\t\t%.0f\t\n", s.DiskBusySeconds, s.DiskBytes/1e6, s.DiskBytes/s.DiskBusySeconds/1e6)
		}
		w.Flush()
		if len(s.Loads) > 0 {
			fmt.Fprintf(out, "  loads by when their partition was last written in this run:\n")
			w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
			fmt.Fprintf(w, "  \tloads\tMB/s p10\tMB/s median\tMB/s p90\n")
			for _, c := range s.Loads {
				fmt.Fprintf(w, "  %s\t%d\t%.0f\t%.0f\t%.0f\n", c.Class, c.Loads, c.RateP10/1e6, c.RateP50/1e6, c.RateP90/1e6)
			}
			w.Flush()
		}
	}
	if pairs := chrometrace.Pairs(sums, minWait); len(pairs) > 0 {
		fmt.Fprintln(out)
		for _, p := range pairs {
			fmt.Fprintf(out, "%s: buckets the trainer waited for ≥ %g ms: %d in both, %d only predicted, %d only measured\n",
				p.Ordering, minWait*1e3, p.Both, p.OnlyPredicted, p.OnlyMeasured)
		}
	}
}
