package experiments

import (
	"bufio"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/stats"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "quality-orderings-curve", Description: "The convergence behind quality-orderings: validation MRR after every epoch of the unpartitioned reference (p = 1) and of BETA at p = 16, c = 4, one seed, WordNet KG 30 epochs and the Twitter-shaped graph 15 (about 10 minutes)", Run: QualityOrderingsCurve, Slow: true})
	register(Experiment{Name: "quality-orderings", Description: "Does the edge-bucket ordering, p or c change embedding quality? Filtered test MRR and Hits@10 after 5 epochs for every ordering against the unpartitioned reference (p = 1), 3 training seeds: the WordNet KG at (p, c) = (16, 3), (4, 3), (16, 4) and a generated Twitter-shaped graph at (16, 3) (about 20 minutes; $TIERFLOW_QO_RUNS resumes)", Run: QualityOrderings, Slow: true})
}

// QOGraph is one graph of the quality-orderings experiment: how to write
// its train/valid/test files and how long to train on it.
type QOGraph struct {
	Name string
	// Epochs is the fixed number of epochs every run trains.
	Epochs int
	// PC are the (p, c) the orderings are trained at, besides the
	// reference (p = 1).
	PC [][2]int
	// Build writes train.tsv, valid.tsv and test.tsv under dir and
	// describes the graph (one sentence).
	Build func(dir string) (string, error)
}

// buildIn writes the graph's files into its own directory under base and
// returns that directory and the graph's description.
func (gr QOGraph) buildIn(base string) (dir, desc string, err error) {
	dir = filepath.Join(base, gr.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	desc, err = gr.Build(dir)
	return dir, desc, err
}

// QOGrid is the experiment's grid: graphs × (p, c) × orderings × seeds.
type QOGrid struct {
	Graphs    []QOGraph
	Orderings []string
	// Seeds are the training seeds (job.Options.Seed): initialisation,
	// the node-to-partition relabelling, edge shuffling and negatives.
	// The graphs' files, their split and the orderings' seed are fixed.
	Seeds []int64
	// Curve: the reference (p = 1, first seed) is also trained once with
	// the validation split ranked after every epoch, to show how near
	// convergence the fixed number of epochs is.
	Curve bool
	// RunsFile, if not empty, keeps every finished run as a JSON line;
	// a run already there (same graph, p, c, ordering, seed and epochs)
	// is taken from it instead of trained again, so an interrupted
	// experiment resumes. QualityOrderings sets it from
	// $TIERFLOW_QO_RUNS.
	RunsFile string
}

// QOSocialScale is the scale of the Twitter preset in the experiment:
// 8,320 nodes and 292,000 edges, so that an epoch takes a second or two
// on two loaded cores and the test edges are ranked filtered against
// every node.
const QOSocialScale = 0.0002

// QOTestEdges is how many test edges of the social graph are ranked: a
// fixed sample of its held-out edges (the others are kept as validation
// edges, so filtering still knows them).
const QOTestEdges = 5000

// DefaultQOGrid is what `reproduce --experiments quality-orderings` runs.
var DefaultQOGrid = QOGrid{
	Graphs: []QOGraph{
		{Name: "wordnet", Epochs: 5, Build: buildQOWordNet, PC: [][2]int{{16, 3}, {4, 3}, {16, 4}}},
		{Name: "twitter", Epochs: 5, Build: buildQOSocial, PC: [][2]int{{16, 3}}},
	},
	Orderings: []string{"beta", "hilbert", "hilbert-symmetric", "tierflow", "legend", "row-major", "random"},
	Seeds:     []int64{1, 2, 3},
	Curve:     true,
}

// qoLog receives the experiment's progress lines.
var qoLog io.Writer = os.Stderr

// QORun is one training run's outcome.
type QORun struct {
	Graph    string  `json:"graph"`
	P        int     `json:"p"`
	C        int     `json:"c"`
	Ordering string  `json:"ordering"`
	Seed     int64   `json:"seed"`
	Epochs   int     `json:"epochs"`
	MRR      float64 `json:"mrr"`
	Hits10   float64 `json:"hits10"`
	Protocol string  `json:"protocol"`
	Seconds  float64 `json:"seconds"`
}

// QORef is the ordering name of the unpartitioned reference (p = 1).
const QORef = "none (p = 1)"

// QOCell is one graph × p × c × ordering aggregated over its seeds.
type QOCell struct {
	Graph    string
	P, C     int
	Ordering string
	Protocol string
	MRRs     []float64 // in seed order
	Median   float64
	Min, Max float64
	Hits10   float64 // median
	// DeltaRef is Median minus the reference's median (same graph).
	DeltaRef float64
	// VsRef compares the seed range with the reference's: "reference",
	// "within the seed spread", "below/above, beyond the seed spread".
	VsRef string
	// VsBest compares it with the best ordering's (highest median) at the
	// same graph, p and c.
	VsBest string
}

func median(xs []float64) float64 { return stats.Median(xs) }

// beyond says how range [lo, hi] lies against [rlo, rhi]: "below" or
// "above" when they do not overlap, "" when they do.
func beyond(lo, hi, rlo, rhi float64) string {
	switch {
	case hi < rlo:
		return "below"
	case lo > rhi:
		return "above"
	}
	return ""
}

// AggregateQO groups runs by graph, p, c and ordering (in the order each
// group first appears), takes the median and range of MRR over seeds, and
// compares each group's range with its graph's reference (p = 1) and with
// the best ordering at the same p and c.
func AggregateQO(runs []QORun) []QOCell {
	type key struct {
		g    string
		p, c int
		o    string
	}
	var order []key
	groups := map[key][]QORun{}
	for _, r := range runs {
		k := key{r.Graph, r.P, r.C, r.Ordering}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	cells := make([]QOCell, 0, len(order))
	for _, k := range order {
		rs := slices.Clone(groups[k])
		slices.SortFunc(rs, func(a, b QORun) int { return cmp.Compare(a.Seed, b.Seed) })
		c := QOCell{Graph: k.g, P: k.p, C: k.c, Ordering: k.o, Protocol: rs[0].Protocol}
		var hits []float64
		for _, r := range rs {
			c.MRRs = append(c.MRRs, r.MRR)
			hits = append(hits, r.Hits10)
		}
		c.Median, c.Min, c.Max, c.Hits10 = median(c.MRRs), slices.Min(c.MRRs), slices.Max(c.MRRs), median(hits)
		cells = append(cells, c)
	}
	ref := map[string]*QOCell{}
	best := map[key]*QOCell{} // ordering "" : the best at (graph, p, c)
	for i := range cells {
		c := &cells[i]
		if c.P == 1 {
			ref[c.Graph] = c
			continue
		}
		bk := key{c.Graph, c.P, c.C, ""}
		if b := best[bk]; b == nil || c.Median > b.Median {
			best[bk] = c
		}
	}
	for i := range cells {
		c := &cells[i]
		r := ref[c.Graph]
		switch {
		case c.P == 1:
			c.VsRef, c.VsBest = "reference", "-"
			continue
		case r == nil:
			c.VsRef = "no reference"
		default:
			c.DeltaRef = c.Median - r.Median
			if side := beyond(c.Min, c.Max, r.Min, r.Max); side != "" {
				c.VsRef = side + ", beyond the seed spread"
			} else {
				c.VsRef = "within the seed spread"
			}
		}
		b := best[key{c.Graph, c.P, c.C, ""}]
		switch {
		case b == c:
			c.VsBest = "best here"
		case beyond(c.Min, c.Max, b.Min, b.Max) != "":
			c.VsBest = fmt.Sprintf("below %s, beyond the seed spread", b.Ordering)
		default:
			c.VsBest = fmt.Sprintf("within %s's spread", b.Ordering)
		}
	}
	return cells
}

// qoRows formats the cells as the experiment's table.
func qoRows(cells []QOCell) [][]string {
	var rows [][]string
	for _, c := range cells {
		seeds := make([]string, len(c.MRRs))
		for i, m := range c.MRRs {
			seeds[i] = f3(m)
		}
		pc := []string{strconv.Itoa(c.P), strconv.Itoa(c.C)}
		delta := fmt.Sprintf("%+.3f", c.DeltaRef)
		if c.P == 1 {
			pc[1], delta = "-", "-"
		}
		rows = append(rows, []string{c.Graph, c.Protocol, pc[0], pc[1], c.Ordering, f3(c.Median), f3(c.Min) + "–" + f3(c.Max),
			strings.Join(seeds, " "), f3(c.Hits10), delta, c.VsRef, c.VsBest})
	}
	return rows
}

// QualityOrderings runs DefaultQOGrid, keeping its runs in
// $TIERFLOW_QO_RUNS when set.
func QualityOrderings() (Result, error) {
	g := DefaultQOGrid
	g.RunsFile = os.Getenv("TIERFLOW_QO_RUNS")
	return g.Run()
}

// qoKey identifies a run in a runs file.
func qoKey(r QORun) string {
	return fmt.Sprintf("%s/%d/%d/%s/%d/%d", r.Graph, r.P, r.C, r.Ordering, r.Seed, r.Epochs)
}

// qoCache is the runs file: the runs it holds and where to add more.
type qoCache struct {
	path string
	runs map[string]QORun
}

func openQOCache(path string) (*qoCache, error) {
	c := &qoCache{path: path, runs: map[string]QORun{}}
	if path == "" {
		return c, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return c, nil
	} else if err != nil {
		return nil, err
	}
	for i, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var r QORun
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		c.runs[qoKey(r)] = r
	}
	return c, nil
}

// get returns the kept run like want, if any.
func (c *qoCache) get(want QORun) (QORun, bool) {
	r, ok := c.runs[qoKey(want)]
	return r, ok
}

// put keeps r (appended to the file at once).
func (c *qoCache) put(r QORun) error {
	c.runs[qoKey(r)] = r
	if c.path == "" {
		return nil
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(c.path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Run trains every configuration of the grid and tabulates the quality.
func (g QOGrid) Run() (Result, error) {
	r := Result{
		Name:   "quality-orderings",
		Title:  "Quality by edge-bucket ordering, p and c: test MRR after a fixed number of epochs against the unpartitioned reference (p = 1), median and range over training seeds",
		Header: []string{"graph", "protocol", "p", "c", "ordering", "MRR median", "MRR min–max", "MRR per seed", "Hits@10 median", "Δ MRR vs p=1", "vs p=1", "vs best at (p, c)"},
	}
	start := time.Now()
	base, err := os.MkdirTemp("", "tierflow-quality-orderings-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	cache, err := openQOCache(g.RunsFile)
	if err != nil {
		return r, err
	}
	var runs []QORun
	skipped := map[string][]string{} // reason → "p=… c=…"
	// The references first, then stage i trains every graph's i-th (p, c),
	// so that an interrupted run holds every graph's first (p, c).
	var dirs []string
	for _, gr := range g.Graphs {
		dir, desc, err := gr.buildIn(base)
		if err != nil {
			return r, err
		}
		opts := qoOptions(dir, gr.Epochs)
		if n := gr.Epochs; g.Curve && len(g.Seeds) > 0 {
			o := opts
			o.Seed, o.Workdir = g.Seeds[0], filepath.Join(dir, "work-curve")
			curve, err := trainUnpartitioned(o, true)
			if err != nil {
				return r, fmt.Errorf("%s reference curve: %w", gr.Name, err)
			}
			var pts []string
			for i, q := range curve {
				pts = append(pts, fmt.Sprintf("%d: %s", i+1, f3(q.MRR)))
			}
			r.Notes = append(r.Notes, fmt.Sprintf("%s: %s The reference (p = 1, seed %d) trained %d epochs, validation MRR (%s) after each: %s.",
				gr.Name, desc, g.Seeds[0], n, curve[0].Mode, strings.Join(pts, ", ")))
			os.RemoveAll(o.Workdir)
		} else {
			r.Notes = append(r.Notes, gr.Name+": "+desc)
		}
		for _, seed := range g.Seeds {
			run := QORun{Graph: gr.Name, P: 1, C: 1, Ordering: QORef, Seed: seed, Epochs: gr.Epochs}
			if kept, ok := cache.get(run); ok {
				runs = append(runs, kept)
				continue
			}
			o := opts
			o.Seed, o.Workdir = seed, filepath.Join(dir, "work-p1")
			t0 := time.Now()
			qs, err := trainUnpartitioned(o, false)
			if err != nil {
				return r, fmt.Errorf("%s p=1 seed %d: %w", gr.Name, seed, err)
			}
			q := qs[len(qs)-1]
			run.MRR, run.Hits10, run.Protocol, run.Seconds = q.MRR, q.HitsAt10, q.Mode, time.Since(t0).Seconds()
			if err := cache.put(run); err != nil {
				return r, err
			}
			runs = append(runs, run)
		}
		fmt.Fprintf(qoLog, "quality-orderings: %s p=1: %d runs, %.0f s so far\n", gr.Name, len(g.Seeds), time.Since(start).Seconds())
		dirs = append(dirs, dir)
	}
	stages := 0
	for _, gr := range g.Graphs {
		stages = max(stages, len(gr.PC))
	}
	for i := 0; i < stages; i++ {
		for gi, gr := range g.Graphs {
			if i >= len(gr.PC) {
				continue
			}
			dir, opts, pc := dirs[gi], qoOptions(dirs[gi], gr.Epochs), gr.PC[i]
			p, c := pc[0], pc[1]
			plans, skip, err := orderings.Select(g.Orderings, p, c, orderings.Belady, 0)
			if err != nil {
				return r, err
			}
			for _, s := range skip {
				key := s.Ordering + ": " + s.Reason
				at := fmt.Sprintf("%s p=%d c=%d", gr.Name, p, c)
				skipped[key] = append(skipped[key], at)
			}
			for _, pl := range plans {
				for _, seed := range g.Seeds {
					run := QORun{Graph: gr.Name, P: p, C: c, Ordering: pl.Ordering, Seed: seed, Epochs: gr.Epochs}
					if kept, ok := cache.get(run); ok {
						runs = append(runs, kept)
						continue
					}
					o := opts
					o.P, o.C, o.Ordering, o.Seed = p, c, pl.Ordering, seed
					o.Workdir = filepath.Join(dir, fmt.Sprintf("work-p%d-s%d", p, seed))
					t0 := time.Now()
					out, err := job.Train(o, nil, false, io.Discard)
					if err != nil {
						return r, fmt.Errorf("%s p=%d c=%d %s seed %d: %w", gr.Name, p, c, pl.Ordering, seed, err)
					}
					q := out.Epochs[len(out.Epochs)-1].Test
					if q == nil {
						return r, fmt.Errorf("%s p=%d c=%d %s seed %d: no test evaluation", gr.Name, p, c, pl.Ordering, seed)
					}
					run.MRR, run.Hits10, run.Protocol, run.Seconds = q.MRR, q.HitsAt10, q.Mode, time.Since(t0).Seconds()
					if err := cache.put(run); err != nil {
						return r, err
					}
					runs = append(runs, run)
				}
			}
			fmt.Fprintf(qoLog, "quality-orderings: %s p=%d c=%d: %d orderings, %.0f s so far\n", gr.Name, p, c, len(plans), time.Since(start).Seconds())
		}
	}
	for _, dir := range dirs {
		os.RemoveAll(dir)
	}
	// Rows by graph, p and c (the orderings in the grid's order).
	gi := map[string]int{}
	for i, gr := range g.Graphs {
		gi[gr.Name] = i
	}
	slices.SortStableFunc(runs, func(a, b QORun) int {
		return cmp.Or(cmp.Compare(gi[a.Graph], gi[b.Graph]), cmp.Compare(a.P, b.P), cmp.Compare(a.C, b.C))
	})
	var secs float64
	for _, run := range runs {
		secs += run.Seconds
	}
	r.Notes = append(r.Notes, fmt.Sprintf("Training and evaluation in the table's %d runs: %.1f minutes of wall time (a run taken from a runs file counts its own time).", len(runs), secs/60))
	cells := AggregateQO(runs)
	r.Rows = qoRows(cells)
	r.Notes = append(r.Notes, qoNotes(g, cells, skipped, time.Since(start))...)
	return r, nil
}

// qoOptions are the runs' options: realrun's defaults for the graph's
// files (the score function, learning rate and negatives follow from
// whether the edges have relations), a fixed number of epochs, the test
// split ranked filtered after the last epoch only, one checkpoint kept.
func qoOptions(dir string, epochs int) job.Options {
	o := job.Defaults
	o.Edges, o.Valid, o.Test = filepath.Join(dir, "train.tsv"), filepath.Join(dir, "valid.tsv"), filepath.Join(dir, "test.tsv")
	o.Epochs, o.Eval, o.EvalProtocol = epochs, "end", "filtered"
	o.Overwrite, o.KeepCheckpoints = true, 1
	return o
}

// qoNotes say what the grid was, what was skipped and why, and sum up
// which rows differ beyond the seed spread.
func qoNotes(g QOGrid, cells []QOCell, skipped map[string][]string, took time.Duration) []string {
	seeds := make([]string, len(g.Seeds))
	for i, s := range g.Seeds {
		seeds[i] = strconv.FormatInt(s, 10)
	}
	notes := []string{
		fmt.Sprintf("Seeds %s vary the training alone (job.Options.Seed: initial embeddings, the seeded relabelling of nodes into partitions, each epoch's edge shuffle and negatives; two Hogwild workers add their own noise). The graphs' files and splits are fixed, the orderings' seed is 0 (BETA's canonical order; random is one fixed permutation), evaluation ranks the same test edges every run.", strings.Join(seeds, ", ")),
		"p ≥ 2 runs go through job.Train with job.Defaults (only the files, epochs, p, c, ordering, seed and {Eval} end {EvalProtocol} filtered given). p = 1 is not a Plan (orderings need 2 ≤ c ≤ p), so the reference trains the same work directory layout with one partition through the same engine (realrun.RunEpoch with a one-bucket plan, job.Configure's hyper-parameters, eval.Evaluate): every epoch is one bucket holding every edge, shuffled, with negatives drawn from all nodes — in-memory training.",
		"Verdicts: a row is beyond the seed spread when its min–max range over seeds does not overlap the reference's (vs p=1) or the best ordering's at the same graph, p and c (vs best); with 3 seeds this is a coarse test, not a significance test.",
	}
	for _, k := range slices.Sorted(maps.Keys(skipped)) {
		notes = append(notes, fmt.Sprintf("Skipped %s (at %s).", k, strings.Join(skipped[k], ", ")))
	}
	var below, above, worse []string
	for _, c := range cells {
		id := fmt.Sprintf("%s p=%d c=%d %s (%+.3f)", c.Graph, c.P, c.C, c.Ordering, c.DeltaRef)
		switch {
		case strings.HasPrefix(c.VsRef, "below"):
			below = append(below, id)
		case strings.HasPrefix(c.VsRef, "above"):
			above = append(above, id)
		}
		if strings.HasPrefix(c.VsBest, "below") {
			worse = append(worse, fmt.Sprintf("%s p=%d c=%d %s (%s)", c.Graph, c.P, c.C, c.Ordering, c.VsBest))
		}
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return strings.Join(xs, "; ")
	}
	notes = append(notes,
		fmt.Sprintf("Below the reference beyond the seed spread: %s.", list(below)),
		fmt.Sprintf("Above the reference beyond the seed spread: %s.", list(above)),
		fmt.Sprintf("Below the best ordering at their (p, c) beyond the seed spread: %s.", list(worse)),
		fmt.Sprintf("Whole experiment: %.1f minutes of wall time.", took.Minutes()))
	return notes
}

// onePartitionPlan is the Plan of unpartitioned training: one partition
// in one slot, one bucket. orderings refuses p < 2 (a Plan is for
// out-of-core training), so it is written out here.
func onePartitionPlan() *orderings.Plan {
	return &orderings.Plan{
		Ordering: "unpartitioned", Policy: string(orderings.Belady), P: 1, C: 1,
		Buckets:       []orderings.Bucket{{Src: 0, Dst: 0}},
		Loads:         []orderings.Load{{Partition: 0, Slot: 0, Evicts: orderings.None, IssueAt: 0, NeededAt: 0}},
		FinalResident: []int{0},
		Counts:        orderings.Counts{Loads: 1, FinalWrites: 1},
	}
}

// trainUnpartitioned trains o's graph with p = 1 and returns the quality
// after every epoch (curve: the validation split after each) or after the
// last (the test split), ranked as job.Train ranks it.
func trainUnpartitioned(o job.Options, curve bool) ([]realrun.Quality, error) {
	return trainPlan(o, onePartitionPlan(), curve)
}

// trainPlan trains o's graph with plan as job.Train would, through the
// same work directory, engine, epochs and evaluation, but for a plan
// job.Configure refuses (p = 1): the data spec and hyper-parameters are
// Configure's for the same options at p = c = 2, with the layout's p set
// to the plan's.
func trainPlan(o job.Options, plan *orderings.Plan, curve bool) ([]realrun.Quality, error) {
	qs, _, err := trainPlanTimed(o, plan, curve, nil)
	return qs, err
}

// trainPlanTimed is trainPlan that also returns the epochs' training
// time (the sum of their EpochSeconds: evaluation and checkpoints left
// out); a non-nil ob replaces the objective the options give.
func trainPlanTimed(o job.Options, plan *orderings.Plan, curve bool, ob *workload.Objective) ([]realrun.Quality, float64, error) {
	qs, train, _, err := trainPlanFor(o, plan, curve, ob, 0)
	return qs, train, err
}

// trainPlanFor is trainPlanTimed that, with budget > 0, stops after the
// first epoch whose training time brings the total to budget seconds (or
// after o.Epochs, whichever comes first) and evaluates that last epoch;
// it also returns the epochs trained.
func trainPlanFor(o job.Options, plan *orderings.Plan, curve bool, ob *workload.Objective, budget float64) (out []realrun.Quality, train float64, epochs int, err error) {
	o.P, o.C, o.Ordering = max(plan.P, 2), max(plan.C, 2), "beta"
	cfg, err := job.Configure(o)
	if err != nil {
		return nil, 0, 0, err
	}
	cfg.Spec.P = plan.P
	if ob != nil {
		cfg.Hyper.Objective = *ob
	}
	cfg.Settings[workdir.SettingKey("P")], cfg.Settings[workdir.SettingKey("C")], cfg.Settings[workdir.SettingKey("Ordering")] = strconv.Itoa(plan.P), strconv.Itoa(plan.C), plan.Ordering
	unlock, err := workdir.LockWorkdir(cfg.Spec.Workdir)
	if err != nil {
		return nil, 0, 0, err
	}
	defer unlock()
	st, _, err := workdir.Start(cfg.Spec, workdir.Use{Overwrite: true, Settings: cfg.Settings, Keep: cfg.Keep}, io.Discard)
	if err != nil {
		return nil, 0, 0, err
	}
	degrees, err := st.Degrees()
	if err != nil {
		return nil, 0, 0, err
	}
	eng, err := realrun.NewEngine(realrun.EngineOptions{Engine: o.Engine, Hyper: cfg.Hyper, Store: st, Degrees: degrees, Seed: cfg.Spec.Seed, C: plan.C})
	if err != nil {
		return nil, 0, 0, err
	}
	if c, ok := eng.(io.Closer); ok {
		defer c.Close()
	}
	ev := eval.DefaultEval
	ev.Seed, ev.Workers, ev.MaxEdges, ev.Protocol = cfg.Spec.Seed, cfg.Hyper.Workers, o.EvalEdges, o.EvalProtocol
	if o.EvalProtocol == "auto" {
		ev.Protocol = ""
	}
	for e := 1; e <= o.Epochs; e++ {
		ep, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: !o.NoPrefetch, Seed: cfg.Spec.Seed, Epoch: e})
		if err != nil {
			return nil, 0, 0, err
		}
		train, epochs = train+ep.EpochSeconds, e
		last := e == o.Epochs || (budget > 0 && train >= budget)
		if !curve && !last {
			continue
		}
		ev.Split = store.Test
		if curve {
			ev.Split = store.Valid
		}
		q, err := eval.Evaluate(st, cfg.Hyper.Model, eng.Relations(), degrees, ev)
		if err != nil {
			return nil, 0, 0, err
		}
		out = append(out, q)
		if last {
			break
		}
	}
	return out, train, epochs, nil
}

// buildQOWordNet writes the quality experiment's WordNet KG.
func buildQOWordNet(dir string) (string, error) {
	wn := WordNetDir
	if d := os.Getenv("TIERFLOW_WORDNET"); d != "" {
		wn = d
	}
	s, err := BuildWordNetKG(wn, dir)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("the quality experiment's WN18-style KG from WordNet 3.0 (%d entities, %d / %d / %d triples; ComplEx, d=100, lr 0.3, uniform negatives: realrun's KG defaults).",
		s.Entities, len(s.Train), len(s.Valid), len(s.Test)), nil
}

// buildQOSocial writes the Twitter preset at QOSocialScale, generated and
// split with seed 1 as a work directory of the preset would be (90/5/5),
// as edge files: the training edges, QOTestEdges test edges drawn from
// the held-out ones with a fixed seed, and the other held-out edges as
// validation edges.
func buildQOSocial(dir string) (string, error) {
	pr, err := graph.LookupPreset("twitter")
	if err != nil {
		return "", err
	}
	sc, err := pr.Scaled(QOSocialScale)
	if err != nil {
		return "", err
	}
	var train, held [][2]int64
	split := graph.NewSplitter(1, workdir.HeldOut, workdir.HeldOut)
	err = graph.Generate(sc, 1, func(src, _, dst int64) error {
		if split.Next() == graph.Train {
			train = append(train, [2]int64{src, dst})
		} else {
			held = append(held, [2]int64{src, dst})
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	rng := rand.New(rand.NewPCG(1, 0x716f)) // "qo"
	rng.Shuffle(len(held), func(i, j int) { held[i], held[j] = held[j], held[i] })
	nt := min(QOTestEdges, len(held))
	write := func(name string, es [][2]int64) error {
		return atomicfile.Write(filepath.Join(dir, name), func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			for _, e := range es {
				if _, err := fmt.Fprintf(bw, "%d\t%d\n", e[0], e[1]); err != nil {
					return err
				}
			}
			return bw.Flush()
		})
	}
	for _, f := range []struct {
		name string
		es   [][2]int64
	}{{"train.tsv", train}, {"test.tsv", held[:nt]}, {"valid.tsv", held[nt:]}} {
		if err := write(f.name, f.es); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("the twitter preset at scale %g (generated with seed 1: %d nodes, %d edges, split 90/5/5 as realrun splits it; %d train edges, %d test edges drawn from the held-out ones, the other %d held-out edges as validation; dot, d=100, lr 0.1, half the negatives by degree: realrun's defaults for a graph without relations).",
		QOSocialScale, sc.Nodes, sc.Edges, len(train), nt, len(held)-nt), nil
}

// QOCurveEpochs are the epochs of quality-orderings-curve per graph.
var QOCurveEpochs = map[string]int{"wordnet": 30, "twitter": 15}

// QualityOrderingsCurve trains DefaultQOGrid's graphs unpartitioned and
// with BETA at p = 16, c = 4 (seed 1) for QOCurveEpochs, ranking the
// validation split after every epoch.
func QualityOrderingsCurve() (Result, error) {
	r := Result{
		Name:   "quality-orderings-curve",
		Title:  "Validation MRR (filtered) after every epoch: unpartitioned (p = 1) against BETA at p = 16, c = 4, seed 1",
		Header: []string{"graph", "epoch", "p=1 MRR", "p=16 c=4 beta MRR", "difference"},
	}
	start := time.Now()
	base, err := os.MkdirTemp("", "tierflow-quality-orderings-curve-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	beta, err := orderings.Build("beta", 16, 4, orderings.Belady, 0)
	if err != nil {
		return r, err
	}
	for _, gr := range DefaultQOGrid.Graphs {
		dir, desc, err := gr.buildIn(base)
		if err != nil {
			return r, err
		}
		o := qoOptions(dir, QOCurveEpochs[gr.Name])
		o.Seed = 1
		var curves [2][]realrun.Quality
		for i, pl := range []*orderings.Plan{onePartitionPlan(), beta} {
			o.Workdir = filepath.Join(dir, fmt.Sprintf("work-p%d", pl.P))
			if curves[i], err = trainPlan(o, pl, true); err != nil {
				return r, fmt.Errorf("%s p=%d: %w", gr.Name, pl.P, err)
			}
		}
		chart := Chart{File: "quality-orderings-curve-" + gr.Name, Title: "Validation MRR per epoch, " + gr.Name, XLabel: "epoch", YLabel: "filtered MRR",
			Series: []Series{{Name: "p = 1 (unpartitioned)"}, {Name: "p = 16, c = 4, beta"}}}
		for e := range curves[0] {
			a, b := curves[0][e].MRR, curves[1][e].MRR
			r.Rows = append(r.Rows, []string{gr.Name, strconv.Itoa(e + 1), f3(a), f3(b), fmt.Sprintf("%+.3f", b-a)})
			for k, y := range []float64{a, b} {
				chart.Series[k].X = append(chart.Series[k].X, float64(e+1))
				chart.Series[k].Y = append(chart.Series[k].Y, y)
			}
		}
		r.Charts = append(r.Charts, chart)
		r.Notes = append(r.Notes, gr.Name+": "+desc)
		os.RemoveAll(dir)
	}
	r.Notes = append(r.Notes, "Both runs train as quality-orderings' do (p = 16 through the same path as p = 1: job.Configure's hyper-parameters, realrun.RunEpoch, eval.Evaluate), ranking the validation split after every epoch; one seed, so the last digit moves between runs.",
		fmt.Sprintf("Whole experiment: %.1f minutes of wall time.", time.Since(start).Minutes()))
	return r, nil
}
