// Command gentables regenerates orderings' stored tables (strip_table.go,
// cyclic_table.go, split_table.go) with the offline searches of
// orderings/internal/search; go generate runs it in orderings (gen.go).
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/tierflow/tierflow/orderings/internal/cyclic"
	"github.com/tierflow/tierflow/orderings/internal/misses"
	"github.com/tierflow/tierflow/orderings/internal/search"
)

func main() {
	dir := flag.String("dir", ".", "the orderings directory: the tables are written there")
	table := flag.String("table", "", "the table to regenerate: strip (about 20 s), cyclic (minutes) or split (minutes per buffer size; a run keeps the table's entries and searches only the pairs without one)")
	splitC := flag.Int("split-c", 0, "with -table split: search only this c (the table keeps the other entries); 0: c = 4 … 6")
	splitP := flag.String("split-p", "", "with -table split: search only lo-hi of p (the table keeps the other entries)")
	splitDraws := flag.Int("split-draws", search.DefaultSplitOptions.Draws, "with -table split: pattern draws per (n, groups) (the first 300 are the default run's)")
	splitPattern := flag.Bool("split-pattern", false, "with -table split: run the single-pattern search at every c (default: c = 4 only)")
	stepsAll := flag.Bool("split-steps-all", false, "instead of a table: check that no split of single and pinned steps alone reaches the targets at any c ≥ 5 pair of "+misses.Path+" (about a minute; the search's tests check c = 8)")
	flag.Parse()
	log.SetFlags(0)
	if flag.NArg() > 0 {
		log.Fatalf("gentables: unexpected arguments %q", flag.Args())
	}
	logf := search.Logf(log.Printf)
	if *stepsAll {
		if *table != "" {
			log.Fatal("gentables: -split-steps-all checks, it writes no table")
		}
		if err := splitStepsAll(filepath.Join(*dir, misses.Path)); err != nil {
			log.Fatalf("gentables: %v", err)
		}
		return
	}
	opt := search.DefaultSplitOptions
	opt.C, opt.Draws, opt.Pattern = *splitC, *splitDraws, *splitPattern
	if *splitP != "" {
		if _, err := fmt.Sscanf(*splitP, "%d-%d", &opt.PLo, &opt.PHi); err != nil {
			log.Fatalf("gentables: -split-p %q: want lo-hi", *splitP)
		}
	}
	file, err := generate(*dir, *table, opt, logf)
	if err != nil {
		log.Fatalf("gentables: %v", err)
	}
	log.Printf("%s written; rebuild and rerun the tests", file)
}

// generate regenerates the named table in dir and returns its file name.
func generate(dir, table string, opt search.SplitOptions, logf search.Logf) (string, error) {
	var (
		file string
		src  []byte
		err  error
	)
	switch table {
	case "strip":
		file = search.StripFile
		var entries map[[2]int][]int
		if entries, err = search.StripTable(logf); err == nil {
			src, err = search.FormatStrip(entries)
		}
	case "cyclic":
		file = search.CyclicFile
		var entries map[[2]int]cyclic.Plan
		if entries, err = search.CyclicTable(logf); err == nil {
			src, err = search.FormatCyclic(entries)
		}
	case "split":
		file = search.SplitFile
		var old []byte
		if old, err = os.ReadFile(filepath.Join(dir, file)); err != nil {
			return "", err
		}
		var saved, entries map[[2]int]cyclic.Plan
		if saved, err = search.ReadPlans(old); err != nil {
			return "", fmt.Errorf("%s: %w", file, err)
		}
		if entries, err = search.SplitTable(saved, opt, logf); err == nil {
			src, err = search.FormatSplit(entries)
		}
	default:
		return "", fmt.Errorf("-table %q: want strip, cyclic or split", table)
	}
	if err != nil {
		return "", err
	}
	return file, os.WriteFile(filepath.Join(dir, file), src, 0o644)
}

// splitStepsAll runs search.SplitStepsExhausted at every pair of the
// misses list with c ≥ 5, one goroutine per c.
func splitStepsAll(path string) error {
	list, err := misses.Read(path)
	if err != nil {
		return err
	}
	byC := map[int][]int{}
	for _, m := range list {
		if m.C >= 5 {
			byC[m.C] = append(byC[m.C], m.P)
		}
	}
	cs := make([]int, 0, len(byC))
	for c := range byC {
		cs = append(cs, c)
	}
	sort.Ints(cs)
	errs := make([]error, len(cs))
	var wg sync.WaitGroup
	for i, c := range cs {
		wg.Go(func() {
			for _, p := range byC[c] {
				splits, err := search.SplitStepsExhausted(p, c)
				if err != nil {
					errs[i] = err
					return
				}
				if splits > 0 {
					log.Printf("p=%d c=%d: %d splits of single and pinned steps, none reaches the targets", p, c, splits)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	n := 0
	for _, ps := range byC {
		n += len(ps)
	}
	log.Printf("%d pairs with c ≥ 5 checked", n)
	return nil
}
