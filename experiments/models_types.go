package experiments

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/internal/useritem"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "models-types", Description: "Every score function on a two-type user–item graph (users partitioned, items resident; realrun {Schema}, CPU engine) at equal training time: filtered test MRR and Hits@10 over 3 seeds, edges/s and the share of the FMA peak, beside PyTorch-BigGraph on the same data (TransE = translation+l2, translation+cos, ComplEx) when $PBG_SRC is set (about 25 minutes on 2 cores)", Run: ModelsTypes, Slow: true})
}

// MTConfig is what models-types runs.
type MTConfig struct {
	Graph  useritem.Config
	Runs   []MQRun
	Seeds  []int64
	Budget float64 // seconds of training a run
	Cap    int     // most epochs a run
	// PBG are the models PyTorch-BigGraph trains beside (scripts/pbg_side.py
	// --model names), with PBGBatch edges a batch, for the epochs that fit
	// in Budget (measured by a one-epoch probe of each model); PBGSrc ""
	// leaves them out. Python and Script as MPConfig's.
	PBG                    []MPModel
	PBGBatch               int
	PBGSrc, Python, Script string
}

// DefaultMTConfig trains the named models and two PyTorch-BigGraph pairs
// with their default objective at realrun's KG defaults (d = 100, 100
// negatives, lr 0.3) for 20 s a run, as models-quality does on WordNet,
// and PBG's TransE (translation+l2), translation+cos and ComplEx.
var DefaultMTConfig = MTConfig{
	Graph: useritem.Default,
	Runs: []MQRun{
		{Model: workload.Dot},
		{Model: workload.DistMult},
		{Model: workload.ComplEx},
		{Model: workload.TransEL1},
		{Model: workload.TransEL2},
		{Model: workload.RotatE},
		{Model: "translation+cos"},
		{Model: "diagonal+cos"},
	},
	Seeds:    []int64{1, 2, 3},
	Budget:   20,
	Cap:      200,
	PBG:      []MPModel{{Model: "transe-l2", Loss: "softmax"}, {Model: "translation+cos", Loss: "softmax"}, {Model: "complex", Loss: "softmax"}},
	PBGBatch: 1000,
	Python:   "/usr/bin/python3",
	Script:   "scripts/pbg_side.py",
}

// MTConfigFromEnv is DefaultMTConfig with the environment's overrides:
// PBG_SRC, TIERFLOW_MT_MODELS (comma-separated tierflow models, each its
// default objective), TIERFLOW_MT_PBG_MODELS (MODEL[:LOSS[:MARGIN]], "none"
// for no PBG), TIERFLOW_MT_SEEDS, TIERFLOW_MT_BUDGET (seconds),
// TIERFLOW_MT_USERS, TIERFLOW_MT_ITEMS (the graph's size),
// TIERFLOW_MT_PBG_BATCH, TIERFLOW_PYTHON, TIERFLOW_PBG_SCRIPT.
func MTConfigFromEnv(getenv func(string) string) (MTConfig, error) {
	c := DefaultMTConfig
	c.PBGSrc = getenv("PBG_SRC")
	if v := getenv("TIERFLOW_MT_MODELS"); v != "" {
		c.Runs = nil
		for _, f := range strings.Split(v, ",") {
			m, err := workload.ParseModel(strings.TrimSpace(f))
			if err != nil {
				return c, fmt.Errorf("TIERFLOW_MT_MODELS: %w", err)
			}
			c.Runs = append(c.Runs, MQRun{Model: m})
		}
	}
	if v := getenv("TIERFLOW_MT_PBG_MODELS"); v != "" {
		c.PBG = nil
		if v != "none" {
			ms, err := ParseMPModels(v)
			if err != nil {
				return c, fmt.Errorf("TIERFLOW_MT_PBG_MODELS: %w", err)
			}
			c.PBG = ms
		}
	}
	if v := getenv("TIERFLOW_MT_SEEDS"); v != "" {
		c.Seeds = nil
		for _, f := range strings.Split(v, ",") {
			s, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return c, fmt.Errorf("TIERFLOW_MT_SEEDS: %w", err)
			}
			c.Seeds = append(c.Seeds, s)
		}
	}
	if v := getenv("TIERFLOW_MT_BUDGET"); v != "" {
		b, err := strconv.ParseFloat(v, 64)
		if err != nil || b <= 0 {
			return c, fmt.Errorf("TIERFLOW_MT_BUDGET: want positive seconds, got %q", v)
		}
		c.Budget = b
	}
	for _, iv := range []struct {
		name string
		to   *int
	}{{"TIERFLOW_MT_USERS", &c.Graph.Users}, {"TIERFLOW_MT_ITEMS", &c.Graph.Items}, {"TIERFLOW_MT_PBG_BATCH", &c.PBGBatch}} {
		if v := getenv(iv.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return c, fmt.Errorf("%s: want a positive integer, got %q", iv.name, v)
			}
			*iv.to = n
		}
	}
	if v := getenv("TIERFLOW_PYTHON"); v != "" {
		c.Python = v
	}
	if v := getenv("TIERFLOW_PBG_SCRIPT"); v != "" {
		c.Script = v
	}
	return c, nil
}

// ModelsTypes runs models-types with the environment's configuration.
func ModelsTypes() (Result, error) {
	c, err := MTConfigFromEnv(os.Getenv)
	if err != nil {
		return Result{Name: "models-types"}, err
	}
	return RunModelsTypes(c)
}

// MTOptions are realrun's options of one tierflow run of models-types:
// the graph's files and schema (p from the schema, as realrun --schema
// without --p), realrun's defaults otherwise, the test split ranked
// filtered after the last epoch.
func MTOptions(dir string, schema *workload.Schema, model workload.Model, seed int64, cap int) job.Options {
	o := qoOptions(dir, cap)
	o.Schema, o.P = schema, schema.P()
	o.C = min(o.C, o.P)
	o.Model, o.Seed = string(model), seed
	o.Workdir = filepath.Join(dir, "work-tierflow")
	return o
}

// RunModelsTypes generates the user–item graph, trains every run of c
// with every seed on it for c.Budget seconds of training through the
// plan realrun --schema would run, evaluates the test split (filtered,
// both sides, candidates of the relation's types), then trains PBG's
// models beside, and tabulates each model's median and range over the
// seeds.
func RunModelsTypes(c MTConfig) (Result, error) {
	r := Result{
		Name:   "models-types",
		Title:  fmt.Sprintf("Score functions on a two-type user–item graph (users partitioned, items resident) at equal training time (%g s a run): filtered test MRR and Hits@10 against the nodes of the right type, median [min–max] over %d seeds", c.Budget, len(c.Seeds)),
		Header: []string{"model", "objective", "engine", "epochs", "train s", "edges/s", "FLOPs, share of FMA peak", "test MRR", "Hits@10"},
	}
	base, err := os.MkdirTemp("", "tierflow-models-types-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	g, err := useritem.Generate(c.Graph)
	if err != nil {
		return r, err
	}
	if err := g.Write(base); err != nil {
		return r, err
	}
	schemaPath := filepath.Join(base, "schema.yaml")
	data, err := os.ReadFile(schemaPath)
	if err != nil {
		return r, err
	}
	schema, err := workload.ParseSchema(data)
	if err != nil {
		return r, err
	}
	peak := calibrate.FMAPeak(job0Workers())
	start := time.Now()
	load0 := loadAvg()
	var plan, baseline string
	for _, run := range c.Runs {
		var sr seedRuns
		for _, seed := range c.Seeds {
			o := MTOptions(base, &schema, run.Model, seed, c.Cap)
			cfg, err := job.Configure(o)
			if err != nil {
				return r, fmt.Errorf("%s seed %d: %w", run.Model, seed, err)
			}
			pl := cfg.Plans[0]
			plan = fmt.Sprintf("%s ordering, p = %d, c = %d", pl.Ordering, pl.P, pl.C)
			ob := run.Objective
			ob.Loss, ob.Regularizer = ob.LossKind(), ob.Reg()
			if err := ob.Validate(run.Model); err != nil {
				return r, fmt.Errorf("%s: %w", run.Model, err)
			}
			qs, sec, n, err := trainPlanFor(o, pl, false, &ob, c.Budget)
			if err != nil {
				return r, fmt.Errorf("%s %s seed %d: %w", run.Model, run.Label(), seed, err)
			}
			os.RemoveAll(o.Workdir)
			q := qs[len(qs)-1]
			baseline = fmt.Sprintf("%.4f", q.Baseline)
			sr.add(q, sec, n, len(g.Train), workload.Training{Model: run.Model, Dim: o.Dim, Batch: o.Batch, Negatives: o.Negatives, Objective: ob}, peak)
		}
		r.Rows = append(r.Rows, []string{string(run.Model), run.Label(), "tierflow",
			fmt.Sprintf("%.0f", median(sr.epochs)), fmt.Sprintf("%.1f", median(sr.train)), rateCell(median(sr.eps)), sr.shareCell(run.Model),
			spreadCell(sr.mrr), spreadCell(sr.h10)})
	}
	pbgNotes, err := c.runPBG(&r, base, schema.P())
	if err != nil {
		return r, err
	}
	counts := useritem.Counts(g.Train)
	gc := g.Config
	r.Notes = []string{
		fmt.Sprintf("Graph: internal/useritem's user–item graph (go run ./cmd/internal/useritem DIR --users %d --items %d --seed %d): %d users (entity type user, %d partitions) and %d items (type item, unpartitioned: resident) in %d latent communities; a user buys mostly items of its community (%.0f%%) and of a second one (%.0f%%), follows mostly users of its community, items are similar to items of theirs, popularity Zipf-skewed (exponent %g), activity log-normal. Train %d edges (bought %d, follows %d, similar %d), valid %d, test %d; every held-out node is in the training edges. A random scorer's filtered test MRR: %s.",
			gc.Users, gc.Items, gc.Seed, gc.Users, gc.P, gc.Items, gc.Communities, 100*gc.Own, 100*gc.Second, gc.Zipf, len(g.Train), counts[useritem.Bought], counts[useritem.Follows], counts[useritem.Similar], len(g.Valid), len(g.Test), baseline),
		fmt.Sprintf("tierflow: each run is realrun {Edges} train.tsv {Valid} valid.tsv {Test} test.tsv {Schema} schema.yaml {Model} MODEL {Eval} end {EvalProtocol} filtered {Seed} S (in-process through job.Configure and the same work directory, engine and evaluation; the CPU engine, %s: every user partition and the resident item table in memory) with realrun's KG defaults (d = 100, 100 negatives, lr 0.3, Adagrad, %d workers) until its epochs' training time reaches %g s (evaluation and checkpoints not counted; at most %d epochs), then ranks each test edge's destination against every node of its relation's rhs type and its source against every node of the lhs type, filtered by train, valid and test, ties at the mid-rank. Seeds %s vary the initial embeddings, the relabelling into partitions, the shuffles and the negatives.", plan, job0Workers(), c.Budget, c.Cap, joinSeeds(c.Seeds)),
		"edges/s is training edges × epochs ÷ training seconds; the FLOP share is that rate times the cost rule's FLOPs per edge (workload.Training.ChunkCost, as models-quality; a typed chunk whose two sides draw their own negatives scores as many products as one with a shared set) over the FMA peak of the workers' cores measured at the start (realrun/calibrate.FMAPeak); the pairwise comparators' models show none (— (pairwise)).",
	}
	r.Notes = append(r.Notes, pbgNotes...)
	r.Notes = append(r.Notes, fmt.Sprintf("Machine: %s, %d logical CPUs; Go %s. Load average before and after: %s → %s; took %s.",
		cpuModel(), runtime.NumCPU(), runtime.Version(), load0, loadAvg(), time.Since(start).Round(time.Second)))
	return r, nil
}

// runPBG trains c.PBG with scripts/pbg_side.py --schema on the graph in
// dir, each model's epochs chosen from a one-epoch probe so that its
// training time is about c.Budget, appends one row a model to r and
// returns the notes.
func (c MTConfig) runPBG(r *Result, dir string, p int) ([]string, error) {
	if len(c.PBG) == 0 {
		return []string{"PBG: not run (TIERFLOW_MT_PBG_MODELS=none)."}, nil
	}
	if c.PBGSrc == "" {
		return []string{"PBG: NOT RUN — PBG_SRC is not set (make reproduce-types PBG_SRC=DIR: a checkout of github.com/facebookresearch/PyTorch-BigGraph, which the project does not fetch)."}, nil
	}
	mp := MPConfig{Dim: 100, Negatives: 100, LR: 0.3, Workers: job0Workers(), PBGSrc: c.PBGSrc, Python: c.Python, Script: c.Script}
	work := filepath.Join(dir, "work-pbg")
	args := func(m MPModel, seed int64, epochs int) []string {
		mp.Epochs = epochs
		return append(mp.PBGArgs(dir, m, c.PBGBatch, seed, work), "--schema", filepath.Join(dir, "schema.yaml"))
	}
	var notes, cmds []string
	var info *PBGResult
	for _, m := range c.PBG {
		probe, err := mp.RunPBG(args(m, 0, 1))
		if err != nil {
			return nil, fmt.Errorf("pbg %s probe: %w", m, err)
		}
		os.RemoveAll(work)
		epochs := max(1, int(c.Budget/max(probe.TrainSeconds, 1e-3)+0.5))
		var ep, train, eps, mrr, h10 []float64
		for _, seed := range c.Seeds {
			a := args(m, seed, epochs)
			if seed == c.Seeds[0] {
				cmds = append(cmds, "PBG_SRC="+c.PBGSrc+" "+c.Python+" "+strings.ReplaceAll(strings.Join(a, " "), dir, "DIR")+" (DIR: the graph's folder)")
			}
			pr, err := mp.RunPBG(a)
			if err != nil {
				return nil, fmt.Errorf("pbg %s seed %d: %w", m, seed, err)
			}
			os.RemoveAll(work)
			info = &pr
			ep, train, eps = append(ep, float64(epochs)), append(train, pr.TrainSeconds), append(eps, pr.EdgesPerSecond)
			mrr, h10 = append(mrr, pr.Test.MRR), append(h10, pr.Test.Hits10)
		}
		label := m.Model
		if info != nil {
			label = fmt.Sprintf("%s (%s+%s)", m.Model, info.Operator, info.Comparator)
		}
		obj := m.Loss
		if m.Loss != "softmax" {
			obj += fmt.Sprintf(" (margin %g)", m.Margin)
		}
		r.Rows = append(r.Rows, []string{label, obj, "pbg b=" + strconv.Itoa(c.PBGBatch),
			fmt.Sprintf("%.0f", median(ep)), fmt.Sprintf("%.1f", median(train)), rateCell(median(eps)), "—",
			spreadCell(mrr), spreadCell(h10)})
		notes = append(notes, fmt.Sprintf("PBG %s: a one-epoch probe trained in %.1f s, so %d epochs for about %g s.", m.Model, probe.TrainSeconds, epochs, c.Budget))
	}
	for _, cmd := range cmds {
		notes = append(notes, "PBG: "+cmd)
	}
	if info != nil {
		notes = append(notes, fmt.Sprintf("PBG: PyTorch-BigGraph %s (commit %s, version %s), torch %s, Python %s, through scripts/pbg_side.py --schema: PBG's config has the schema's entity types (user num_partitions %d, item 1) and one relation type per relation with its lhs, rhs and the model's operator (dynamic relations off: PBG's need every relation between the same two types, so translation+cos has one operator a relation on the destination side, where tierflow's pair has one a side); node names per type cut into partitions by PBG's Dictionary after a seeded shuffle, edges in PBG's (lhs partition, rhs partition) buckets with an unpartitioned side in partition 0, as its TSV importer stores them. Same d, negatives (%d uniform a side, no batch negatives), lr, loss and workers as tierflow; batches of %d edges (PBG's default); train s = the sum of PBG's per-bucket \"Trained N edges in T s\", epochs from the probe. The test ranking is computed by the script from PBG's checkpoint with PBG's own operators and comparators: destinations against every node of the relation's rhs type, sources against its lhs type, filtered, mid-rank ties (PBG's own evaluation ranks against sampled negatives).",
			info.PBG.Source, info.PBG.Commit, info.PBG.Version, info.Torch, info.Python, p, mp.Negatives, c.PBGBatch))
	}
	return notes, nil
}

// rateCell is edges/s in thousands, to a tenth below 10k.
func rateCell(x float64) string {
	if x < 1e4 {
		return fmt.Sprintf("%.1fk", x/1e3)
	}
	return fmt.Sprintf("%.0fk", x/1e3)
}
