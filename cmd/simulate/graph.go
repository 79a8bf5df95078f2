package main

import (
	"flag"
	"fmt"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/validate"
)

// addGraphFlag registers --graph, which simulate and simulate sweep share.
func addGraphFlag(fs *flag.FlagSet, dir *string) {
	fs.StringVar(dir, "graph", "", "simulate your own graph, the realrun work directory `DIR`: its nodes, relations, training edges and bucket sizes at any p (instead of --dataset and --edges), trained as it was — its --dim, --model, --batch, --negatives, --chunk, --p, --c, ordering, --policy and --ordering-seed unless given")
}

// useGraph reads the flags that depend on --graph and an --edges
// histogram into q: with --graph, the work directory's graph replaces the
// dataset preset (a conflict with --dataset, --edges or --skew is a usage
// error), and --dim and --model not given become the graph's own;
// without it, --p not given becomes the histogram's p when --edges names
// one (sim.Request resolves P 0). It returns what the directory's
// training was started with (nil without --graph), for fromGraph.
func useGraph(q *sim.Request, dir string, set map[string]bool) (*validate.Trained, error) {
	if !set["p"] {
		q.P = 0
	}
	if !set["graph"] {
		return nil, nil
	}
	for _, f := range []string{"dataset", "edges", "skew", "resident-nodes"} {
		if set[f] {
			return nil, cli.Usagef("--graph and --%s: the graph's own sizes and buckets replace the dataset preset's; give one or the other", f)
		}
	}
	if dir == "" {
		return nil, cli.Usagef("--graph: give a realrun work directory")
	}
	g, tr, err := validate.WorkdirGraph(dir)
	if err != nil {
		return nil, cli.Usagef("--graph: %w", err)
	}
	q.Graph, q.Dataset, q.Edges = g, "", ""
	if !set["dim"] {
		q.Dim = 0
	}
	return &tr, nil
}

// fromGraph sets the fields of q that the work directory's training says
// (tr) and no flag given overrides: the training shape — d, model, batch,
// negatives, chunk — and, when plan, the Plan — p, c and the ordering
// where the system takes them, the policy and the ordering seed (a
// sweep sweeps p, c and the orderings, and takes only the policy and
// seed). It returns them as simulate's flags, for the reader:
// ["--p 4", "--c 2", …].
func fromGraph(q *sim.Request, tr validate.Trained, set map[string]bool, plan bool) []string {
	var took []string
	take := func(flag, value string) { took = append(took, "--"+flag+" "+value) }
	takeInt := func(flag string, v int, dst *int) {
		if v > 0 && !set[flag] {
			*dst = v
			take(flag, fmt.Sprint(v))
		}
	}
	sys, err := sim.LookupSystem(q.System)
	if err == nil && sys.Partitioned {
		if plan {
			takeInt("p", tr.P, &q.P)
			if sys.Capacity == 0 { // the system's own design fixes c (and plays its ordering)
				takeInt("c", tr.C, &q.C)
				if tr.Ordering != "" && !set["orderings"] {
					q.Orderings = tr.Ordering
					take("orderings", tr.Ordering)
				}
			}
		}
		if tr.Policy != "" && !set["policy"] {
			q.Policy = tr.Policy
			take("policy", tr.Policy)
		}
		if tr.OrderingSeed != 0 && !set["ordering-seed"] && !set["seed"] {
			q.Seed = tr.OrderingSeed
			take("ordering-seed", fmt.Sprint(tr.OrderingSeed))
		}
	}
	if g := q.Graph; g != nil {
		if !set["dim"] && g.Dim > 0 {
			take("dim", fmt.Sprint(g.Dim))
		}
		if !set["model"] && g.Model != "" {
			take("model", string(g.Model))
		}
	}
	takeInt("batch", tr.Batch, &q.Batch)
	takeInt("negatives", tr.Negatives, &q.Negatives)
	takeInt("chunk", tr.Chunk, &q.Chunk)
	return took
}

// graphNote is the line that tells the reader which settings came from
// the work directory: took, and swept (a sweep's p and c added to the
// swept ones).
func graphNote(dir string, tr validate.Trained, took, swept []string) string {
	from := "its training record's, " + validate.SettingsFile
	if !tr.Recorded {
		from = "its manifest's; the directory has no training record"
	}
	with := strings.Join(took, " ")
	if len(swept) > 0 {
		with = strings.TrimPrefix(with+" and its "+strings.Join(swept, " ")+" among the swept", " ")
	}
	if with == "" {
		return fmt.Sprintf("--graph %s: none of its training's settings used: the flags given override them", dir)
	}
	return fmt.Sprintf("--graph %s: simulated as it was trained, with %s (%s); a flag given overrides any of them", dir, with, from)
}

// addInts returns xs with x added in order (unchanged when x is there
// or is 0).
func addInts(xs []int, x int) []int {
	if x <= 0 || slices.Contains(xs, x) {
		return xs
	}
	out := append(slices.Clone(xs), x)
	slices.Sort(out)
	return out
}

// openGraph describes a realrun work directory as a graph for the
// simulator (validate.WorkdirGraph).
func openGraph(dir string) (*sim.Graph, error) {
	g, _, err := validate.WorkdirGraph(dir)
	return g, err
}
