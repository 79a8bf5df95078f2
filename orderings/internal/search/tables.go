package search

import (
	"fmt"
	"go/format"
	"slices"
	"strings"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/internal/cyclic"
)

// Logf receives a generator's progress, one line per pair searched.
type Logf func(format string, args ...any)

// replayed returns the counts of states in tierflow's bucket order: the
// fill order, replayed under Belady.
func replayed(p, c int, states [][]int) (orderings.Counts, error) {
	s, err := orderings.Replay(p, c, orderings.FillOrder(p, c, states), orderings.Belady)
	return s.Counts, err
}

// reaches reports whether counts are within BETA's swaps for (p, c) and
// meet PrefetchTarget.
func reaches(p, c int, counts orderings.Counts) bool {
	return counts.Swaps <= orderings.BETASwaps(p, c) && counts.MeetsPrefetchTarget()
}

// The strip search's budget per pair and the largest p it runs for.
const (
	stripGenNodes = 3_000_000
	stripGenMaxP  = 64
)

// StripTable reruns stripSearch, at most stripGenNodes nodes each, for
// the pairs p ≤ stripGenMaxP where tierflow's other candidates
// (tierflowWithout "strip") miss PrefetchTarget, keeping a
// sequence that tierflow prefers to them (within BETA's swaps, reaching
// PrefetchTarget) as the swaps stripTable stores; it logs the node counts.
func StripTable(logf Logf) (map[[2]int][]int, error) {
	got := map[[2]int][]int{}
	for p := 6; p <= stripGenMaxP; p++ {
		for c := 3; c <= p/2; c++ {
			base, err := tierflowWithout(p, c, "strip")
			if err != nil {
				return nil, err
			}
			if base.MeetsPrefetchTarget() {
				continue
			}
			beta := orderings.BETASwaps(p, c)
			maxNewest := beta / 20
			var replayErr error
			states, nodes := stripSearch(p, c, beta, maxNewest, stripGenNodes, func(states [][]int) bool {
				counts, err := replayed(p, c, states)
				if err != nil {
					replayErr = err
					return true
				}
				return reaches(p, c, counts)
			})
			if replayErr != nil {
				return nil, fmt.Errorf("p=%d c=%d: %w", p, c, replayErr)
			}
			logf("p=%d c=%d: found %v after %d nodes", p, c, states != nil, nodes)
			if states != nil {
				got[[2]int{p, c}] = stripMoves(states)
			}
		}
	}
	return got, nil
}

// CyclicTable regenerates cyclicTable: for every p ≤ 128, 3 ≤ c ≤ p/2
// where tierflow's other candidates (tierflowWithout "cyclic")
// miss PrefetchTarget, the cyclic construction found by cyclicCandidates
// that tierflow would prefer to them, if any (a deterministic search: the
// pattern search is seeded by (n, k)). It logs the counts of each found.
func CyclicTable(logf Logf) (map[[2]int]cyclic.Plan, error) {
	got := map[[2]int]cyclic.Plan{}
	for p := 6; p <= 128; p++ {
		// Pattern-search nodes per pair (a node costs about n·c): up to
		// ten seconds for c ≤ 5, less for c = 6 and none above, where
		// exact splits are rare (REPRODUCE.md).
		for c := 3; c <= min(p/2, 6); c++ {
			base, err := tierflowWithout(p, c, "cyclic")
			if err != nil {
				return nil, err
			}
			if base.MeetsPrefetchTarget() {
				continue
			}
			budget := 4_800_000_000 / (p * c * c)
			if c == 6 {
				budget /= 16
			}
			bestCounts := base
			var best *cyclic.Plan
			var replayErr error
			cyclicCandidates(p, c, budget, func(pl cyclic.Plan) bool {
				counts, err := replayed(p, c, cyclic.Sequence(p, c, pl))
				if err != nil {
					replayErr = err
					return false
				}
				if counts.Swaps <= orderings.BETASwaps(p, c) && orderings.TierflowPrefers(counts, bestCounts) {
					bestCounts, best = counts, &pl
				}
				return !bestCounts.MeetsPrefetchTarget()
			})
			if replayErr != nil {
				return nil, fmt.Errorf("p=%d c=%d: %w", p, c, replayErr)
			}
			if best != nil {
				got[[2]int{p, c}] = *best
				logf("p=%d c=%d: %+v", p, c, bestCounts)
			}
		}
	}
	return got, nil
}

// SplitOptions are SplitTable's options: which pairs it searches and how.
type SplitOptions struct {
	// C, if not 0, is the only c searched; else c = 4 … 6.
	C int
	// PLo, PHi bound the p searched.
	PLo, PHi int
	// Draws is the number of pattern draws per (n, groups).
	Draws int
	// Pattern runs the single-pattern search at every c, not only c = 4.
	Pattern bool
}

// DefaultSplitOptions are the options of a full run.
var DefaultSplitOptions = SplitOptions{PLo: 6, PHi: 128, Draws: splitGenDraws}

// The split search's budgets per (p, c): splitSingles nodes per (n,
// groups) on all the differences, pattern draws and splitSingles nodes
// per draw, and for c = 4 the single-pattern nodes per option and in all.
const (
	splitGenNodes        = 300_000
	splitGenDraws        = 300
	splitGenPatternNodes = 12_000_000
	splitGenPatternTotal = 60_000_000
	splitGenDrawNodes    = 2_000
)

// SplitTable runs the split search (cyclicSplits, then for c = 4, or every
// c with opt.Pattern, the single-pattern search with a larger budget than
// CyclicTable's) for every searched (p, c) without an entry in saved where
// tierflow's other candidates (tierflowWithout "split") miss
// PrefetchTarget, and adds the first construction that reaches it within
// BETA's swaps; it returns the table with every entry of saved kept (a run
// only adds). It logs, per pair, what was searched: the (n, groups)
// options, how many of them splitSingles exhausted, and the nodes.
// Deterministic.
func SplitTable(saved map[[2]int]cyclic.Plan, opt SplitOptions, logf Logf) (map[[2]int]cyclic.Plan, error) {
	cs := []int{4, 5, 6}
	if opt.C != 0 {
		cs = []int{opt.C}
	}
	lo, hi := opt.PLo, opt.PHi
	got := map[[2]int]cyclic.Plan{}
	for pc, pl := range saved {
		got[pc] = pl
	}
	for _, c := range cs {
		for p := max(2*c, lo); p <= hi; p++ {
			if _, ok := saved[[2]int{p, c}]; ok {
				continue // found by an earlier run: kept, not searched again
			}
			found, err := splitPair(p, c, opt, logf)
			if err != nil {
				return nil, fmt.Errorf("p=%d c=%d: %w", p, c, err)
			}
			if found != nil {
				got[[2]int{p, c}] = *found
			}
		}
	}
	return got, nil
}

// splitPair is SplitTable at one (p, c) without an entry.
func splitPair(p, c int, opt SplitOptions, logf Logf) (*cyclic.Plan, error) {
	k := c - 1
	base, err := tierflowWithout(p, c, "split")
	if err != nil {
		return nil, err
	}
	if base.MeetsPrefetchTarget() {
		return nil, nil
	}
	t0 := time.Now()
	var found *cyclic.Plan
	var counts orderings.Counts
	var replayErr error
	tried, stepSplits := 0, 0
	try := func(pl cyclic.Plan) bool {
		// Every split is replayed: Belady may need fewer swaps than the
		// states (one fewer at p = 27, c = 4).
		tried++
		if onlySteps(pl) {
			stepSplits++
		}
		s, err := replayed(p, c, cyclic.Sequence(p, c, pl))
		if err != nil {
			replayErr = err
			return false
		}
		if reaches(p, c, s) {
			found, counts = &pl, s
			return false
		}
		return true
	}
	exhausted := map[string]bool{}
	options := 0
	cyclicSplits(p, c, 2*k+1, 4, splitGenNodes, opt.Draws, splitGenDrawNodes, try, func(n int, pins []int) {
		exhausted[fmt.Sprintf("%d%v", n, pins)] = true
	})
	var cut []string // (n, groups) splitSingles did not exhaust
	all := splitOptions(p, c, 2*k+1, 4)
	for _, o := range all {
		if s := fmt.Sprintf("%d%v", o.N, o.Pins); !exhausted[s] {
			cut = append(cut, s)
		}
	}
	how := "split"
	if found == nil && replayErr == nil && (c == 4 || opt.Pattern) {
		// The single-pattern search of cyclicCandidates, with a larger
		// budget per option.
		how = "pattern"
		patternLeft := splitGenPatternTotal
	opts:
		for m := 0; m <= 2*k+1; m++ {
			n := p - m
			if n%2 == 0 || n < c+2 || patternLeft <= 0 {
				continue
			}
			comps := [][]int{nil}
			if m > 0 {
				comps = compositions(m, k, 4)
			}
			for _, pins := range comps {
				steps, need, ok := pinnedSteps(n, k, pins)
				if !ok {
					continue
				}
				options++
				pat, used := cyclicPattern(n, k, need, min(splitGenPatternNodes, patternLeft))
				patternLeft -= used
				if pat != nil {
					if !try(cyclic.Plan{N: n, Pins: pins, Blocks: append(stepBlocks(steps), pat)}) {
						break opts
					}
				}
			}
		}
	}
	if replayErr != nil {
		return nil, replayErr
	}
	if how == "pattern" {
		how = fmt.Sprintf("pattern (%d options)", options)
	}
	if found != nil {
		logf("p=%d c=%d: %s %+v %+v (%.1fs)", p, c, how, *found, counts, time.Since(t0).Seconds())
	} else {
		logf("p=%d c=%d: none; %d constructions replayed (%d of single and pinned steps alone), none within BETA's swaps with PrefetchTarget; single+pinned steps exhausted at %d of %d (n, groups), not at: [%s]; pattern options %d (%.1fs)",
			p, c, tried, stepSplits, len(exhausted), len(all), strings.Join(cut, " "), options, time.Since(t0).Seconds())
	}
	return found, nil
}

// onlySteps reports whether every block of pl is a single or pinned step
// (no pattern of several steps).
func onlySteps(pl cyclic.Plan) bool {
	for _, b := range pl.Blocks {
		if len(b) != 1 {
			return false
		}
	}
	return true
}

// The tables' files, in the orderings directory.
const (
	StripFile  = "strip_table.go"
	CyclicFile = "cyclic_table.go"
	SplitFile  = "split_table.go"
)

// header starts a generated table file.
func header(table string) string {
	return "// Code generated by go run ./internal/gentables -table " + table + "; DO NOT EDIT.\n\npackage orderings\n\n"
}

// sortedKeys returns the keys of m by p, then c; by c, then p with byC.
func sortedKeys[V any](m map[[2]int]V, byC bool) [][2]int {
	keys := make([][2]int, 0, len(m))
	for pc := range m {
		keys = append(keys, pc)
	}
	slices.SortFunc(keys, func(a, b [2]int) int {
		if byC {
			a, b = [2]int{a[1], a[0]}, [2]int{b[1], b[0]}
		}
		if a[0] != b[0] {
			return a[0] - b[0]
		}
		return a[1] - b[1]
	})
	return keys
}

// FormatStrip returns strip_table.go for the entries, by p then c.
func FormatStrip(entries map[[2]int][]int) ([]byte, error) {
	var b strings.Builder
	b.WriteString(header("strip"))
	b.WriteString("// stripTable holds the sequences stripSearch (internal/search) found where\n// tierflow's other candidates miss PrefetchTarget (see tables.go).\n")
	b.WriteString("var stripTable = map[[2]int][]int{\n")
	for _, pc := range sortedKeys(entries, false) {
		fmt.Fprintf(&b, "\t{%d, %d}: %#v,\n", pc[0], pc[1], entries[pc])
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

// FormatCyclic returns cyclic_table.go for the entries, by p then c.
func FormatCyclic(entries map[[2]int]cyclic.Plan) ([]byte, error) {
	var b strings.Builder
	b.WriteString(header("cyclic"))
	b.WriteString("// cyclicTable holds the cyclic candidate tierflow tries at each (p, c)\n// where its other candidates miss PrefetchTarget (see tables.go).\n")
	b.WriteString("var cyclicTable = map[[2]int]cyclicPlan{\n")
	for _, pc := range sortedKeys(entries, false) {
		pl := entries[pc]
		fmt.Fprintf(&b, "\t{%d, %d}: {%d, %#v, [][]int{", pc[0], pc[1], pl.N, pl.Pins)
		for i, blk := range pl.Blocks {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("{")
			for j, x := range blk {
				if j > 0 {
					b.WriteString(", ")
				}
				fmt.Fprint(&b, x)
			}
			b.WriteString("}")
		}
		b.WriteString("}},\n")
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

// FormatSplit returns split_table.go for the entries, by c then p.
func FormatSplit(entries map[[2]int]cyclic.Plan) ([]byte, error) {
	var b strings.Builder
	b.WriteString(header("split"))
	b.WriteString("// splitTable holds the cyclic constructions found by the split search\n// (internal/search) where tierflow's other candidates miss PrefetchTarget.\n")
	b.WriteString("var splitTable = map[[2]int]cyclicPlan{\n")
	for _, pc := range sortedKeys(entries, true) {
		pl := entries[pc]
		fmt.Fprintf(&b, "\t{%d, %d}: {%d, %#v, %#v},\n", pc[0], pc[1], pl.N, pl.Pins, pl.Blocks)
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}

// tierflowWithout is what tierflow reaches at (p, c) without the
// candidates of one stored table (source "strip", "cyclic" or "split"):
// the counts of the candidate it would keep among the others.
func tierflowWithout(p, c int, source string) (orderings.Counts, error) {
	cands, err := orderings.TierflowCandidates(p, c)
	if err != nil {
		return orderings.Counts{}, err
	}
	kept := cands[:0]
	for _, cd := range cands {
		if cd.Source != source {
			kept = append(kept, cd)
		}
	}
	_, counts, err := orderings.BestCandidate(p, c, kept)
	return counts, err
}
