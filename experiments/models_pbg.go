package experiments

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "models-pbg", Description: "tierflow's CPU engine beside PyTorch-BigGraph on the WordNet KG, same model (ComplEx, TransE-L2), loss, dimension, negatives, lr and epochs: filtered test MRR, Hits@10 and training edges/s, 3 seeds, PBG at batch 1000 and 100; PBG's source from $PBG_SRC (about 20 minutes on 2 cores)", Run: ModelsPBG, Slow: true})
}

// MPModel is one model of the models-pbg comparison and the objective
// both engines train it with.
type MPModel struct {
	Model  string  // tierflow's model name (workload.Model)
	Loss   string  // softmax, ranking or logistic
	Margin float64 // ranking's margin, logistic's γ
}

// String is the model as the environment spells it: MODEL[:LOSS[:MARGIN]].
func (m MPModel) String() string {
	if m.Loss == "" || m.Loss == "softmax" {
		return m.Model
	}
	return m.Model + ":" + m.Loss + ":" + strconv.FormatFloat(m.Margin, 'g', -1, 64)
}

// MPConfig is what models-pbg runs: the same hyper-parameters for both
// engines; PBG runs once per PBGBatches entry (PBG's optimizer step is per
// batch, tierflow's per chunk of Negatives edges: a batch of Negatives
// edges steps as often as tierflow, PBG's default 1000 ten times less).
type MPConfig struct {
	Models     []MPModel
	Seeds      []int64
	Epochs     int
	Dim        int
	Negatives  int
	LR         float64
	Workers    int
	PBGBatches []int
	// PBGSrc is PyTorch-BigGraph's checkout ("": the PBG runs are left
	// out, and the notes say so); Python the interpreter with torch, h5py,
	// attrs and numpy; Script scripts/pbg_side.py.
	PBGSrc, Python, Script string
}

// DefaultMPConfig is models-pbg's grid.
var DefaultMPConfig = MPConfig{
	Models:     []MPModel{{Model: "complex", Loss: "softmax"}, {Model: "transe-l2", Loss: "softmax"}},
	Seeds:      []int64{1, 2, 3},
	Epochs:     10,
	Dim:        100,
	Negatives:  100,
	LR:         0.3,
	Workers:    2,
	PBGBatches: []int{1000, 100},
	Python:     "/usr/bin/python3",
	Script:     "scripts/pbg_side.py",
}

// MPConfigFromEnv is DefaultMPConfig with the environment's overrides:
// PBG_SRC, TIERFLOW_MP_MODELS (comma-separated MODEL[:LOSS[:MARGIN]]),
// TIERFLOW_MP_SEEDS, TIERFLOW_MP_EPOCHS, TIERFLOW_MP_PBG_BATCH,
// TIERFLOW_PYTHON, TIERFLOW_PBG_SCRIPT.
func MPConfigFromEnv(getenv func(string) string) (MPConfig, error) {
	c := DefaultMPConfig
	c.PBGSrc = getenv("PBG_SRC")
	if v := getenv("TIERFLOW_MP_MODELS"); v != "" {
		ms, err := ParseMPModels(v)
		if err != nil {
			return c, fmt.Errorf("TIERFLOW_MP_MODELS: %w", err)
		}
		c.Models = ms
	}
	if v := getenv("TIERFLOW_MP_SEEDS"); v != "" {
		c.Seeds = nil
		for _, f := range strings.Split(v, ",") {
			s, err := strconv.ParseInt(strings.TrimSpace(f), 10, 64)
			if err != nil {
				return c, fmt.Errorf("TIERFLOW_MP_SEEDS: %w", err)
			}
			c.Seeds = append(c.Seeds, s)
		}
	}
	for _, iv := range []struct {
		name string
		to   *int
	}{{"TIERFLOW_MP_EPOCHS", &c.Epochs}} {
		if v := getenv(iv.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return c, fmt.Errorf("%s: want a positive integer, got %q", iv.name, v)
			}
			*iv.to = n
		}
	}
	if v := getenv("TIERFLOW_MP_PBG_BATCH"); v != "" {
		c.PBGBatches = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return c, fmt.Errorf("TIERFLOW_MP_PBG_BATCH: want positive integers, got %q", v)
			}
			c.PBGBatches = append(c.PBGBatches, n)
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

// ParseMPModels reads comma-separated MODEL[:LOSS[:MARGIN]] (the loss
// softmax when left out, the margin 0.1 for ranking and 0 for logistic).
func ParseMPModels(s string) ([]MPModel, error) {
	var out []MPModel
	for _, f := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(f), ":")
		if parts[0] == "" || len(parts) > 3 {
			return nil, fmt.Errorf("%q: want MODEL[:LOSS[:MARGIN]]", f)
		}
		m := MPModel{Model: parts[0], Loss: "softmax"}
		if len(parts) > 1 {
			m.Loss = parts[1]
		}
		switch m.Loss {
		case "softmax":
		case "ranking":
			m.Margin = 0.1
		case "logistic":
		default:
			return nil, fmt.Errorf("%q: unknown loss %q (want softmax, ranking or logistic)", f, m.Loss)
		}
		if len(parts) > 2 {
			v, err := strconv.ParseFloat(parts[2], 64)
			if err != nil {
				return nil, fmt.Errorf("%q: margin: %w", f, err)
			}
			m.Margin = v
		}
		out = append(out, m)
	}
	return out, nil
}

// MPRun is one training run of models-pbg.
type MPRun struct {
	Engine         string // "tierflow" or "pbg"
	Model          MPModel
	Seed           int64
	TrainSeconds   float64 // training alone (no start-up, checkpoint or evaluation)
	WallSeconds    float64 // the whole run, evaluation included
	EdgesPerSecond float64
	MRR, Hits1     float64
	Hits10         float64
	SelfAbove      float64 // PBG's runs: the share of queries whose own entity outscores the truth
}

// PBGResult is the part of scripts/pbg_side.py's JSON models-pbg reads.
type PBGResult struct {
	PBG struct {
		Source  string `json:"source"`
		Commit  string `json:"commit"`
		Version string `json:"version"`
	} `json:"pbg"`
	Torch          string  `json:"torch"`
	Python         string  `json:"python"`
	Operator       string  `json:"operator"`
	Comparator     string  `json:"comparator"`
	Relations      string  `json:"relations"`
	TrainEdges     int     `json:"train_edges"`
	TrainSeconds   float64 `json:"train_seconds"`
	WallSeconds    float64 `json:"wall_seconds"`
	EdgesPerSecond float64 `json:"edges_per_second"`
	Test           struct {
		Edges  int     `json:"edges"`
		MRR    float64 `json:"mrr"`
		Hits1  float64 `json:"hits1"`
		Hits10 float64 `json:"hits10"`
		// SelfAbove is the share of queries whose own entity outscores the
		// truth (see scripts/pbg_side.py).
		SelfAbove float64 `json:"self_above"`
	} `json:"test"`
}

// PBGArgs are the arguments of scripts/pbg_side.py for one run.
func (c MPConfig) PBGArgs(dir string, m MPModel, batch int, seed int64, work string) []string {
	return []string{c.Script,
		"--train", filepath.Join(dir, "train.tsv"), "--valid", filepath.Join(dir, "valid.tsv"), "--test", filepath.Join(dir, "test.tsv"),
		"--model", m.Model, "--loss", cmp.Or(m.Loss, "softmax"), "--margin", strconv.FormatFloat(m.Margin, 'g', -1, 64),
		"--dim", strconv.Itoa(c.Dim), "--epochs", strconv.Itoa(c.Epochs), "--negatives", strconv.Itoa(c.Negatives),
		"--batch", strconv.Itoa(batch), "--lr", strconv.FormatFloat(c.LR, 'g', -1, 64),
		"--workers", strconv.Itoa(c.Workers), "--threads", strconv.Itoa(c.Workers),
		"--seed", strconv.FormatInt(seed, 10), "--workdir", work}
}

// RunPBG runs scripts/pbg_side.py with PBG_SRC set and parses its JSON;
// PBG's stderr is kept for the error.
func (c MPConfig) RunPBG(args []string) (PBGResult, error) {
	var res PBGResult
	cmd := exec.Command(c.Python, args...)
	cmd.Env = append(os.Environ(), "PBG_SRC="+c.PBGSrc)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		tail := stderr.String()
		if len(tail) > 2000 {
			tail = "…" + tail[len(tail)-2000:]
		}
		return res, fmt.Errorf("%s %s: %w\n%s", c.Python, strings.Join(args, " "), err, tail)
	}
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		return res, fmt.Errorf("%s: its output is not pbg_side.py's JSON: %w", c.Script, err)
	}
	return res, nil
}

// tierflowOptions are realrun's options for one tierflow run of models-pbg.
func (c MPConfig) tierflowOptions(dir string, m MPModel, seed int64) job.Options {
	o := qoOptions(dir, c.Epochs)
	o.Model, o.Dim, o.Negatives, o.LR, o.Workers, o.Seed = m.Model, c.Dim, c.Negatives, c.LR, c.Workers, seed
	o.Workdir = filepath.Join(dir, "work-tierflow")
	return o
}

// TierflowCommand is the realrun command line (its flags named by the
// fields that set them, {Dim}: a command renders them) equivalent to a tierflow
// run of models-pbg (which trains at p = 1 in-process: realrun's command
// line asks for p ≥ 2).
func (c MPConfig) TierflowCommand(m MPModel, seed int64) string {
	s := fmt.Sprintf("realrun {Edges} train.tsv {Valid} valid.tsv {Test} test.tsv {Model} %s {Dim} %d {Epochs} %d {Negatives} %d {LR} %g {Workers} %d {Seed} %d {Eval} end {EvalProtocol} filtered",
		m.Model, c.Dim, c.Epochs, c.Negatives, c.LR, c.Workers, seed)
	if m.Loss != "" && m.Loss != "softmax" {
		s += fmt.Sprintf(" {Loss} %s {Margin} %g", m.Loss, m.Margin)
	}
	return s + " (at p = 1)"
}

// ModelsPBG runs models-pbg with the environment's configuration.
func ModelsPBG() (Result, error) {
	c, err := MPConfigFromEnv(os.Getenv)
	if err != nil {
		return Result{Name: "models-pbg"}, err
	}
	return RunModelsPBG(c)
}

// RunModelsPBG trains every model of c with every seed, tierflow then
// PBG, on the WordNet KG, and tabulates each run and each (model,
// engine)'s median over the seeds.
func RunModelsPBG(c MPConfig) (Result, error) {
	r := Result{
		Name:   "models-pbg",
		Title:  "tierflow's CPU engine beside PyTorch-BigGraph, WN18-style WordNet KG: filtered test MRR and Hits@10 (both sides, every entity), training edges/s",
		Header: []string{"model", "loss", "engine", "seed", "train s", "wall s", "edges/s", "test MRR", "Hits@1", "Hits@10"},
	}
	base, err := os.MkdirTemp("", "tierflow-models-pbg-*")
	if err != nil {
		return r, err
	}
	defer os.RemoveAll(base)
	wn := WordNetDir
	if d := os.Getenv("TIERFLOW_WORDNET"); d != "" {
		wn = d
	}
	split, err := BuildWordNetKG(wn, base)
	if err != nil {
		return r, err
	}
	loadStart := loadAvg()
	start := time.Now()
	var runs []MPRun
	var pbgInfo *PBGResult
	var pbgCmds []string
	for _, m := range c.Models {
		for _, seed := range c.Seeds {
			o := c.tierflowOptions(base, m, seed)
			ob, err := m.Objective()
			if err != nil {
				return r, err
			}
			t0 := time.Now()
			qs, train, err := trainPlanTimed(o, onePartitionPlan(), false, &ob)
			if err != nil {
				return r, fmt.Errorf("tierflow %s seed %d: %w", m, seed, err)
			}
			q := qs[len(qs)-1]
			runs = append(runs, MPRun{Engine: "tierflow", Model: m, Seed: seed, TrainSeconds: train, WallSeconds: time.Since(t0).Seconds(),
				EdgesPerSecond: float64(len(split.Train)*c.Epochs) / train, MRR: q.MRR, Hits1: q.HitsAt1, Hits10: q.HitsAt10})
			os.RemoveAll(o.Workdir)
			if c.PBGSrc == "" {
				continue
			}
			for _, batch := range c.PBGBatches {
				args := c.PBGArgs(base, m, batch, seed, filepath.Join(base, "work-pbg"))
				if seed == c.Seeds[0] {
					pbgCmds = append(pbgCmds, "PBG_SRC="+c.PBGSrc+" "+c.Python+" "+strings.Join(args, " "))
				}
				pr, err := c.RunPBG(args)
				if err != nil {
					return r, fmt.Errorf("pbg %s batch %d seed %d: %w", m, batch, seed, err)
				}
				os.RemoveAll(filepath.Join(base, "work-pbg"))
				pbgInfo = &pr
				runs = append(runs, MPRun{Engine: "pbg b=" + strconv.Itoa(batch), Model: m, Seed: seed, TrainSeconds: pr.TrainSeconds, WallSeconds: pr.WallSeconds,
					EdgesPerSecond: pr.EdgesPerSecond, MRR: pr.Test.MRR, Hits1: pr.Test.Hits1, Hits10: pr.Test.Hits10, SelfAbove: pr.Test.SelfAbove})
			}
		}
	}
	took := time.Since(start)
	r.Rows = MPRows(runs)
	r.Notes = mpNotes(c, split.Entities, len(split.Train), len(split.Valid), len(split.Test), pbgInfo, pbgCmds, loadStart, loadAvg(), took)
	if own := mpSelfAbove(runs); own != "" {
		r.Notes = append(r.Notes, "PBG's queries whose own entity (the source when the destination is replaced, and the other way round; not a known partner, so not filtered, as in realrun) outscores the true one: "+own+"; a query ranks its truth first only where its own entity does not outscore it, so this caps PBG's Hits@1 (the same share is not measured for tierflow).")
	}
	return r, nil
}

// MPRows are the table's rows: every run, then each (model, engine)'s
// median over its seeds with the range in brackets.
func MPRows(runs []MPRun) [][]string {
	var rows [][]string
	for _, u := range runs {
		rows = append(rows, []string{u.Model.Model, cmp.Or(u.Model.Loss, "softmax"), u.Engine, strconv.FormatInt(u.Seed, 10),
			f1(u.TrainSeconds), f1(u.WallSeconds), strconv.FormatFloat(u.EdgesPerSecond, 'f', 0, 64), f3(u.MRR), f3(u.Hits1), f3(u.Hits10)})
	}
	type key struct {
		m      MPModel
		engine string
	}
	var keys []key
	groups := map[key][]MPRun{}
	for _, u := range runs {
		k := key{u.Model, u.Engine}
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], u)
	}
	for _, k := range keys {
		g := groups[k]
		if len(g) < 2 {
			continue
		}
		med := func(f func(MPRun) float64, format func(float64) string) string {
			xs := make([]float64, len(g))
			for i, u := range g {
				xs[i] = f(u)
			}
			slices.Sort(xs)
			m := xs[len(xs)/2]
			if len(xs)%2 == 0 {
				m = (xs[len(xs)/2-1] + xs[len(xs)/2]) / 2
			}
			return fmt.Sprintf("%s [%s–%s]", format(m), format(xs[0]), format(xs[len(xs)-1]))
		}
		f0 := func(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }
		rows = append(rows, []string{k.m.Model, cmp.Or(k.m.Loss, "softmax"), k.engine, "median",
			med(func(u MPRun) float64 { return u.TrainSeconds }, f1), med(func(u MPRun) float64 { return u.WallSeconds }, f1),
			med(func(u MPRun) float64 { return u.EdgesPerSecond }, f0), med(func(u MPRun) float64 { return u.MRR }, f3),
			med(func(u MPRun) float64 { return u.Hits1 }, f3), med(func(u MPRun) float64 { return u.Hits10 }, f3)})
	}
	return rows
}

// mpSelfAbove lists each PBG run's SelfAbove share ("" without PBG runs).
func mpSelfAbove(runs []MPRun) string {
	var parts []string
	for _, u := range runs {
		if strings.HasPrefix(u.Engine, "pbg") {
			parts = append(parts, fmt.Sprintf("%s %s seed %d %.0f%%", u.Model.Model, u.Engine, u.Seed, 100*u.SelfAbove))
		}
	}
	return strings.Join(parts, ", ")
}

func mpNotes(c MPConfig, entities, train, valid, test int, pbg *PBGResult, pbgCmds []string, load0, load1 string, took time.Duration) []string {
	models := make([]string, len(c.Models))
	for i, m := range c.Models {
		models[i] = m.String()
	}
	notes := []string{
		fmt.Sprintf("Graph: the quality experiment's WN18-style KG from WordNet 3.0 (Debian wordnet-base): %d entities, 18 relation types, %d train / %d valid / %d test triples. Test: every test edge ranked on both sides against every entity, filtered by the train, valid and test edges, ties at the mid-rank (realrun's filtered protocol; for PBG computed by scripts/pbg_side.py from PBG's checkpoint with PBG's own operators and comparator, because PBG's own evaluation ranks against sampled negatives).", entities, train, valid, test),
		fmt.Sprintf("Both engines: models %s, d = %d, %d epochs, %d uniform negatives shared by each chunk of %d edges and corrupting both sides, Adagrad lr %g, %d workers (Hogwild), one partition, seeds %s.",
			strings.Join(models, ", "), c.Dim, c.Epochs, c.Negatives, c.Negatives, c.LR, c.Workers, joinSeeds(c.Seeds)),
		"Commands: tierflow: " + c.TierflowCommand(c.Models[0], c.Seeds[0]) + " for the first model and seed, the others alike; in-process through the experiment, train s = the epochs' EpochSeconds (without evaluation and checkpoints), wall s = training plus the work directory's set-up, checkpoints and the final evaluation.",
	}
	if c.PBGSrc == "" {
		notes = append(notes, "PBG: NOT RUN — PBG_SRC is not set. PyTorch-BigGraph's source cannot be fetched by the project (GitHub is out of reach of CI machines and the Go module proxy refuses its repository); give a checkout: make reproduce-models-pbg PBG_SRC=DIR (github.com/facebookresearch/PyTorch-BigGraph, measured at commit 6fccd3f).")
	} else {
		for _, cmd := range pbgCmds {
			notes = append(notes, "PBG: "+cmd)
		}
		if pbg != nil {
			v := cmp.Or(pbg.PBG.Commit, "commit unknown (not a git checkout: set the note by hand)")
			notes = append(notes, fmt.Sprintf("PBG: %s (%s, version %s), torch %s, Python %s; train s = the sum of PBG's per-bucket \"Trained N edges in T s\" (its Hogwild workers' batches), wall s = the whole train() call (spawning its worker pool, initialisation, checkpoints) plus the evaluation.",
				pbg.PBG.Source, v, pbg.PBG.Version, pbg.Torch, pbg.Python))
		}
		notes = append(notes, fmt.Sprintf("What differs, by design of the two engines: the optimizer step — tierflow takes an elementwise Adagrad step after every chunk of %d edges, PBG one row-wise Adagrad step (RowAdagrad: one accumulator per row, relations elementwise) after every batch (engine \"pbg b=B\": batches of B edges; b=%d steps as often as tierflow); the initial embeddings — tierflow draws entities uniformly in ±0.1, ComplEx relations 1 ± 0.1 (real) and ±0.1 (imaginary), TransE translations 0, PBG entities from N(0, 0.001²) (its default init_scale) and relation operators at the identity (complex_diagonal 1+0i, translation 0); the negatives — tierflow shares one draw of %d between both sides, PBG draws each side's own; PBG's workers seed their generators from their pids, so only its initial embeddings follow the seed. The models are the same family: a named model is trained in PBG with one relation type per relation and dynamic_relations off, so that PBG scores C(s, op_r(d)) with one operator per relation shared by both sides (ComplEx: Re<s, conj(r∘d)>, tierflow's with r → conj r; TransE-L2: −‖s − (d + r)‖, tierflow's −‖s + r − d‖ with r → −r).",
			c.Negatives, c.Negatives, c.Negatives))
	}
	cpu := cpuModel()
	notes = append(notes, fmt.Sprintf("Machine: %s, %d logical CPUs, %s; Go %s. Load average (1, 5, 15 min) at the start %s, at the end %s; the whole grid took %.0f s.",
		cpu, runtime.NumCPU(), runtime.GOOS+"/"+runtime.GOARCH, runtime.Version(), load0, load1, took.Seconds()))
	return notes
}

func joinSeeds(seeds []int64) string {
	s := make([]string, len(seeds))
	for i, x := range seeds {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, ", ")
}

// loadAvg is /proc/loadavg's three load averages ("?" where it cannot be read).
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// cpuModel is /proc/cpuinfo's first "model name" ("unknown CPU" where none).
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown CPU"
}

// Objective is m's training objective for tierflow: its loss (always
// given, so that the model's default objective, workload.DefaultObjective,
// never chooses it) with its margin, no regularisation.
func (m MPModel) Objective() (workload.Objective, error) {
	model, err := workload.ParseModel(m.Model)
	if err != nil {
		return workload.Objective{}, err
	}
	l, err := workload.ParseLoss(cmp.Or(m.Loss, "softmax"))
	if err != nil {
		return workload.Objective{}, err
	}
	ob := workload.Objective{Loss: l, Regularizer: workload.RegNone}
	if l != workload.Softmax {
		ob.Margin = m.Margin
	}
	if err := ob.Validate(model); err != nil {
		return ob, fmt.Errorf("%s: %w", m, err)
	}
	return ob, nil
}
