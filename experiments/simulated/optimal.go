package simulated

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/orderings"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "optimal", Description: "The true minimum swaps for small (p, c) by exact search, beside the lower bound (Marius eq. 2), BETA and tierflow", Run: Optimal})
}

// OptimalFullP is the largest p for which the optimal experiment searches
// every c; above it, up to orderings.MaxOptimalP, it searches c from p − 1
// downwards and stops at the first c whose search needs more than
// optimalNodeLimit nodes (smaller buffers are harder: p = 12 with c = 5
// is not settled after 10 million nodes).
const OptimalFullP = 11

// optimalNodeLimit bounds one search above OptimalFullP (about 30 s here).
const optimalNodeLimit = 1_000_000

// Optimal tabulates, for every 3 ≤ p ≤ OptimalFullP and 2 ≤ c ≤ p, and for
// the large c of every p up to orderings.MaxOptimalP, the proven optimum
// and its certificate (the IDA* iterations and nodes), the lower bound,
// BETA's swaps and tierflow's.
func Optimal() (experiments.Result, error) {
	r := experiments.Result{
		Name:  "optimal",
		Title: "The minimum swaps over all bucket orders (exact search), beside the lower bound (Marius eq. 2), BETA (eq. 3) and tierflow",
		Header: []string{"p", "c", "optimum", "lower bound", "BETA", "tierflow", "tierflow prefetchable",
			"optimum − bound", "BETA − optimum", "IDA* bounds tried", "nodes", "nodes at optimum − 1"},
	}
	var notes []string
	series := []experiments.Series{{Name: "BETA − optimum"}, {Name: "optimum − bound"}}
	for p := 3; p <= orderings.MaxOptimalP; p++ {
		for c := p; c >= 2; c-- {
			limit := int64(0)
			if p > OptimalFullP {
				limit = optimalNodeLimit
			}
			res, err := orderings.OptimalSwaps(p, c, limit)
			if errors.Is(err, orderings.ErrSearchLimit) {
				notes = append(notes, fmt.Sprintf("p=%d: c ≤ %d not searched to the end (c = %d needs more than %d nodes; its bound %d is not refuted)",
					p, c, c, limit, res.Iterations[len(res.Iterations)-1].Bound))
				break
			}
			if err != nil {
				return experiments.Result{}, fmt.Errorf("optimal: %w", err)
			}
			if _, err := res.Plan(); err != nil {
				return experiments.Result{}, fmt.Errorf("optimal: %w", err)
			}
			tf, err := orderings.Build("tierflow", p, c, orderings.Belady, 0)
			if err != nil {
				return experiments.Result{}, fmt.Errorf("optimal: %w", err)
			}
			lb, beta := orderings.LowerBound(p, c), orderings.BETASwaps(p, c)
			var bounds []string
			for _, it := range res.Iterations {
				bounds = append(bounds, strconv.Itoa(it.Bound))
			}
			refuted := "– (bound reached)"
			if n := len(res.Iterations); n > 1 {
				refuted = strconv.FormatInt(res.Iterations[n-2].Nodes, 10)
			}
			r.Rows = append(r.Rows, []string{
				strconv.Itoa(p), strconv.Itoa(c), strconv.Itoa(res.Swaps), strconv.Itoa(lb), strconv.Itoa(beta),
				strconv.Itoa(tf.Counts.Swaps), strconv.Itoa(tf.Counts.PrefetchableSwaps),
				strconv.Itoa(res.Swaps - lb), strconv.Itoa(beta - res.Swaps),
				strings.Join(bounds, " "), strconv.FormatInt(res.Nodes, 10), refuted,
			})
			x := float64(p) + float64(c)/float64(p+1)
			series[0].X, series[0].Y = append(series[0].X, x), append(series[0].Y, float64(beta-res.Swaps))
			series[1].X, series[1].Y = append(series[1].X, x), append(series[1].Y, float64(res.Swaps-lb))
		}
	}
	sort.SliceStable(r.Rows, func(i, j int) bool { // by p, then c
		pi, _ := strconv.Atoi(r.Rows[i][0])
		pj, _ := strconv.Atoi(r.Rows[j][0])
		ci, _ := strconv.Atoi(r.Rows[i][1])
		cj, _ := strconv.Atoi(r.Rows[j][1])
		return pi < pj || pi == pj && ci < cj
	})
	r.Charts = []experiments.Chart{{File: "optimal", Title: "How far BETA and the bound are from the optimum", XLabel: "p (+ c/(p+1))",
		YLabel: "swaps", Scatter: true, Series: series}}
	r.Notes = append([]string{
		"Optimum: IDA* over (resident partitions, covered pairs), one swap per step (orderings/optimal.go argues why that loses nothing), with an admissible bound max(⌈uncovered pairs ÷ (c−1)⌉, non-resident partitions with an uncovered pair), dominance pruning (evict a finished partition first, never load one) and relabelling symmetry (of the partitions never resident, only the lowest is loaded).",
		"Certificate: every optimal state sequence is replayed under Belady and validated as a Plan with exactly the optimum swaps before the row is printed; the iteration at bound optimum − 1 explored the 'nodes at optimum − 1' nodes and found no sequence, which proves the optimum (where the optimum equals the first bound, the admissible bound itself is the proof).",
		"tierflow uses the exact search's states for p ≤ 9 where they beat BETA, so it is optimal there; above, the best of its pivot/mover sequences and BETA's states.",
	}, notes...)
	return r, nil
}
