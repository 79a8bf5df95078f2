// Command gnnbench is `make reproduce-gnn`: the accuracy of realrun gnn's
// five models (mlp, sage-mean, sage-pool, sage-lstm, gat) on every graph
// of `make gnn-graphs` over several training seeds, and its speed against
// a plain PyTorch implementation of the same models (scripts/gnn_torch.py)
// trained over the very batches realrun sampled (--save-blocks), with the
// same shape, hyper-parameters and threads. It runs bin/realrun and
// Python as child processes and writes results/gnn/: README.md (the
// tables, the machine, the command) and gnn.json (every run). With --runs
// FILE every finished run is kept there as a JSON line, and a run already
// there is taken from it instead of trained again (an interrupted
// reproduction resumes).
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/runinfo"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/model"
)

// SpeedGraphs are the default graphs of the PyTorch comparison: batches
// of realistic size (Cora's and PubMed's single batch of 140 and 60 nodes
// would measure per-call overheads), and Reddit's shape, where some models
// learn little in the budget (the PyTorch twin shows whether it is the
// model or the engine).
var SpeedGraphs = []string{"ogbn-arxiv", "ogbn-products", "reddit"}

// Models are realrun gnn's models, in the tables' order.
var Models = []string{"mlp", "sage-mean", "sage-pool", "sage-lstm", "gat"}

// Shape is one run's model shape and training hyper-parameters (realrun
// gnn's flags of the same names; the PyTorch script takes the same).
type Shape struct {
	Layers  int     `json:"layers"`
	Hidden  int     `json:"hidden"`
	Heads   int     `json:"heads"`
	Fanouts string  `json:"fanouts"`
	Batch   int     `json:"batch"`
	Dropout float64 `json:"dropout"`
	LR      float64 `json:"lr"`
	Epochs  int     `json:"epochs"`
}

// DefaultShape is every run's shape unless a Rule changes it: DGL's
// GraphSAGE example (2 layers, fanouts 10,25, dropout 0.5) with 128
// hidden units, batches of 1,024, lr 0.01 (0.003 learns too slowly in
// the few epochs the budget allows) and 20 epochs.
var DefaultShape = Shape{Layers: 2, Hidden: 128, Heads: 4, Fanouts: "10,25", Batch: 1024, Dropout: 0.5, LR: 0.01, Epochs: 20}

// Rule changes the shape of the runs of a graph, a model or both ("":
// any), or leaves them out (Skip, saying why). Rules apply in order.
type Rule struct {
	Graph, Model string
	Change       func(Shape) Shape
	Skip         string
	// Why is said in the README.
	Why string
}

// Rules are the reproduction's departures from DefaultShape.
var Rules = []Rule{
	{Graph: "cora", Change: func(s Shape) Shape { s.Epochs = 50; return s }, Why: "cora and pubmed train 50 epochs: their Planetoid splits (20 labelled nodes a class) make one batch an epoch"},
	{Graph: "pubmed", Change: func(s Shape) Shape { s.Epochs = 50; return s }},
	{Model: "sage-lstm", Change: func(s Shape) Shape { s.Fanouts = "5,10"; return s },
		Why: "sage-lstm samples fanouts 5,10: its LSTM's hidden size is the layer's input width, so each sampled neighbour costs a 4F×F product and its backward (at 10,25 an ogbn-arxiv-shaped epoch is ~400 GFLOP)"},
	{Graph: "cora", Model: "sage-lstm", Skip: "1,433-wide input: ~130 GFLOP of LSTM an epoch at 5,10 and 50 epochs"},
	{Graph: "reddit", Model: "sage-lstm", Skip: "602-wide input and mean degree 490: its full-neighbour evaluation alone is ~20 TFLOP"},
	{Graph: "wordnet", Model: "sage-lstm", Skip: "512-wide input: ~1 TFLOP of evaluation and ~0.3 TFLOP of training an epoch"},
}

// ShapeFor returns the shape of graph's model runs, or why they are left
// out.
func ShapeFor(graph, mdl string) (Shape, string) {
	s := DefaultShape
	for _, r := range Rules {
		if (r.Graph != "" && r.Graph != graph) || (r.Model != "" && r.Model != mdl) {
			continue
		}
		if r.Skip != "" {
			return s, r.Skip
		}
		if r.Change != nil {
			s = r.Change(s)
		}
	}
	return s, ""
}

// RealEpoch is one epoch of `realrun gnn --json`'s output: the
// trainer's own record.
type RealEpoch = gnn.Epoch

// TorchEpoch is one epoch of scripts/gnn_torch.py's output.
type TorchEpoch struct {
	Epoch     int     `json:"epoch"`
	Loss      float64 `json:"loss"`
	TrainAcc  float64 `json:"train_acc"`
	Batches   int     `json:"batches"`
	Seconds   float64 `json:"seconds"`
	GEMMFlops float64 `json:"gemm_flops"`
}

// TorchRun is scripts/gnn_torch.py's output.
type TorchRun struct {
	Torch    string       `json:"torch"`
	BLAS     string       `json:"blas"`
	Threads  int          `json:"threads"`
	Params   int          `json:"params"`
	Epochs   []TorchEpoch `json:"epochs"`
	TrainS   float64      `json:"train_s"`
	EvalS    float64      `json:"eval_s"`
	ValidAcc float64      `json:"valid_acc"`
	TestAcc  float64      `json:"test_acc"`
}

// Run is one training run of realrun gnn (and, for a speed run, of the
// PyTorch script over the same blocks).
type Run struct {
	Graph   string      `json:"graph"`
	Model   string      `json:"model"`
	Seed    int         `json:"seed"`
	Shape   Shape       `json:"shape"`
	Threads int         `json:"threads"`
	Speed   bool        `json:"speed"`
	Epochs  []RealEpoch `json:"epochs"`
	// ValidAcc and TestAcc are after the last epoch.
	ValidAcc float64 `json:"valid_acc"`
	TestAcc  float64 `json:"test_acc"`
	// WallSeconds is realrun's whole run (loading, training, evaluation).
	WallSeconds float64   `json:"wall_s"`
	Torch       *TorchRun `json:"torch,omitempty"`
}

// key identifies a run in the runs file.
func (r Run) key() string {
	return fmt.Sprintf("%s|%s|%d|%+v|%d|%v", r.Graph, r.Model, r.Seed, r.Shape, r.Threads, r.Speed)
}

// Config is one reproduction.
type Config struct {
	Realrun, Python, Script string
	GraphDir                string
	Graphs                  []string
	Models                  []string
	Seeds                   []int
	SpeedGraphs             []string
	SpeedModels             []string
	Threads                 int
	// Epochs, when > 0, replaces every graph's own epochs.
	Epochs        int
	Out, RunsFile string
	// Command is how the reproduction was started (README).
	Command string
	// Log receives a line per run.
	Log io.Writer
}

func main() {
	os.Exit(cli.Exit(os.Stderr, "gnnbench", run(os.Args[1:], os.Stdout, os.Stderr)))
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gnnbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	c := Config{Log: stderr}
	fs.StringVar(&c.Realrun, "realrun", "bin/realrun", "the realrun binary")
	fs.StringVar(&c.Python, "python", "/usr/bin/python3", "the Python with torch and numpy")
	fs.StringVar(&c.Script, "torch-script", "scripts/gnn_torch.py", "the PyTorch implementation")
	fs.StringVar(&c.GraphDir, "graph-dir", ".cache/gnn", "the graph directories (`DIR`/NAME/, make gnn-graphs)")
	graphs := fs.String("graphs", "", "graphs to run, comma-separated (default: every graph directory under --graph-dir)")
	models := fs.String("models", strings.Join(Models, ","), "models for the accuracy table")
	seeds := fs.String("seeds", "1,2,3", "training seeds")
	speedGraphs := fs.String("speed-graphs", "", "graphs of the PyTorch comparison (default: "+strings.Join(SpeedGraphs, ",")+" where present, else the two smallest; none: no comparison)")
	speedModels := fs.String("speed-models", strings.Join(Models, ","), "models of the PyTorch comparison")
	fs.IntVar(&c.Threads, "threads", 2, "threads of both implementations (realrun --workers, torch.set_num_threads)")
	epochs := fs.Int("epochs", 0, "epochs of every graph (default: each graph's own)")
	fs.StringVar(&c.Out, "out", "results/gnn", "write README.md and gnn.json to `DIR`")
	fs.StringVar(&c.RunsFile, "runs", "", "keep every finished run in `FILE` (JSON lines) and take the runs already there instead of training them again (default: none)")
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		return nil
	} else if err != nil {
		return cli.Usagef("%w", err)
	}
	c.Command = "gnnbench " + strings.Join(args, " ")
	c.Epochs = *epochs
	var err error
	if c.Graphs, err = findGraphs(c.GraphDir, cli.SplitList(*graphs)); err != nil {
		return cli.Usagef("--graphs: %w", err)
	}
	c.Models = cli.SplitList(*models)
	c.SpeedModels = cli.SplitList(*speedModels)
	for _, m := range append(slices.Clone(c.Models), c.SpeedModels...) {
		if !slices.Contains(Models, m) {
			return cli.Usagef("--models: unknown model %q (want %s)", m, strings.Join(Models, ", "))
		}
	}
	if c.Seeds, err = cli.IntList(*seeds); err != nil || len(c.Seeds) == 0 {
		return cli.Usagef("--seeds: want a list of integers")
	}
	switch *speedGraphs {
	case "none":
	case "":
		for _, g := range SpeedGraphs {
			if slices.Contains(c.Graphs, g) {
				c.SpeedGraphs = append(c.SpeedGraphs, g)
			}
		}
		if len(c.SpeedGraphs) == 0 {
			c.SpeedGraphs = smallest(c.GraphDir, c.Graphs, 2)
		}
	default:
		c.SpeedGraphs = cli.SplitList(*speedGraphs)
	}
	if _, err := os.Stat(c.Realrun); err != nil {
		return cli.Usagef("--realrun: %w (make build)", err)
	}
	if len(c.SpeedGraphs) > 0 {
		if out, err := exec.Command(c.Python, "-c", "import torch, numpy").CombinedOutput(); err != nil {
			return cli.Usagef("--python: %s cannot import torch and numpy: %v %s (Debian: python3-torch python3-numpy)", c.Python, err, bytes.TrimSpace(out))
		}
	}
	return reproduce(c, stdout)
}

// findGraphs returns the named graphs, or every graph directory under dir
// (those holding nodes.txt), smallest first.
func findGraphs(dir string, names []string) ([]string, error) {
	if len(names) == 0 {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("%w (make gnn-graphs writes them)", err)
		}
		for _, e := range ents {
			if _, err := os.Stat(filepath.Join(dir, e.Name(), "nodes.txt")); err == nil {
				names = append(names, e.Name())
			}
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no graph directories under %s (make gnn-graphs writes them)", dir)
		}
		return smallest(dir, names, len(names)), nil
	}
	for _, n := range names {
		if _, err := os.Stat(filepath.Join(dir, n, "nodes.txt")); err != nil {
			return nil, fmt.Errorf("graph %s: %w", n, err)
		}
	}
	return names, nil
}

// smallest returns the k graphs with the smallest edge files, smallest
// first.
func smallest(dir string, names []string, k int) []string {
	size := func(n string) int64 {
		st, err := os.Stat(filepath.Join(dir, n, "edges.tsv"))
		if err != nil {
			return 0
		}
		return st.Size()
	}
	s := slices.Clone(names)
	slices.SortStableFunc(s, func(a, b string) int { return int(size(a) - size(b)) })
	return s[:min(k, len(s))]
}

// realrunArgs are the arguments of one realrun gnn run.
func realrunArgs(graphDir string, s Shape, mdl string, seed, threads int, workdir, blocks string) []string {
	f := func(name string) string { return filepath.Join(graphDir, name) }
	a := []string{"gnn",
		"--edges", f("edges.tsv"), "--features", f("features.npy"), "--feature-names", f("nodes.txt"), "--labels", f("labels.tsv"),
		"--train-nodes", f("train.txt"), "--valid-nodes", f("valid.txt"), "--test-nodes", f("test.txt"),
		"--model", mdl, "--layers", strconv.Itoa(s.Layers), "--hidden", strconv.Itoa(s.Hidden), "--heads", strconv.Itoa(s.Heads),
		"--fanouts", s.Fanouts, "--batch", strconv.Itoa(s.Batch), "--dropout", ftoa(s.Dropout), "--lr", ftoa(s.LR),
		"--epochs", strconv.Itoa(s.Epochs), "--eval-every", strconv.Itoa(s.Epochs), "--seed", strconv.Itoa(seed),
		"--workers", strconv.Itoa(threads), "--progress", "none", "--workdir", workdir, "--json"}
	if blocks != "" {
		a = append(a, "--save-blocks", blocks)
	}
	return a
}

// torchArgs are the arguments of the PyTorch script over blocks.
func torchArgs(script, graphDir, blocks string, s Shape, mdl string, seed, threads int) []string {
	return []string{script, "--graph", graphDir, "--blocks", blocks, "--model", mdl,
		"--layers", strconv.Itoa(s.Layers), "--hidden", strconv.Itoa(s.Hidden), "--heads", strconv.Itoa(s.Heads),
		"--dropout", ftoa(s.Dropout), "--lr", ftoa(s.LR), "--epochs", strconv.Itoa(s.Epochs),
		"--threads", strconv.Itoa(threads), "--seed", strconv.Itoa(seed)}
}

func ftoa(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// runCmd runs a child process and returns its standard output; on failure
// the error carries the end of its standard error.
func runCmd(name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if len(msg) > 2000 {
			msg = "…" + msg[len(msg)-2000:]
		}
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, msg)
	}
	return out.Bytes(), nil
}

// parseRealrun reads realrun gnn --json's output into r.
func parseRealrun(out []byte, r *Run) error {
	var v struct {
		Epochs []RealEpoch `json:"epochs"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		return fmt.Errorf("realrun gnn --json: %w", err)
	}
	if len(v.Epochs) == 0 {
		return errors.New("realrun gnn --json: no epochs")
	}
	last := v.Epochs[len(v.Epochs)-1]
	if last.ValidAcc == nil || last.TestAcc == nil {
		return fmt.Errorf("realrun gnn --json: epoch %d has no validation or test accuracy", last.Epoch)
	}
	r.Epochs, r.ValidAcc, r.TestAcc = v.Epochs, *last.ValidAcc, *last.TestAcc
	return nil
}

// parseTorch reads the PyTorch script's output.
func parseTorch(out []byte) (*TorchRun, error) {
	var t TorchRun
	if err := json.Unmarshal(out, &t); err != nil {
		return nil, fmt.Errorf("gnn_torch.py: %w", err)
	}
	if len(t.Epochs) == 0 {
		return nil, errors.New("gnn_torch.py: no epochs")
	}
	return &t, nil
}

// trainOne runs realrun gnn once (and the PyTorch script over its blocks
// for a speed run) in a temporary directory under tmp.
func trainOne(c Config, r *Run, tmp string) error {
	dir, err := os.MkdirTemp(tmp, "run-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	gdir := filepath.Join(c.GraphDir, r.Graph)
	blocks := ""
	if r.Speed {
		blocks = filepath.Join(dir, "blocks")
	}
	start := time.Now()
	out, err := runCmd(c.Realrun, realrunArgs(gdir, r.Shape, r.Model, r.Seed, r.Threads, filepath.Join(dir, "work"), blocks)...)
	if err != nil {
		return err
	}
	r.WallSeconds = time.Since(start).Seconds()
	if err := parseRealrun(out, r); err != nil {
		return err
	}
	if !r.Speed {
		return nil
	}
	out, err = runCmd(c.Python, torchArgs(c.Script, gdir, blocks, r.Shape, r.Model, r.Seed, r.Threads)...)
	if err != nil {
		return err
	}
	r.Torch, err = parseTorch(out)
	return err
}

// readRuns reads the runs file (absent or "": none).
func readRuns(path string) (map[string]Run, error) {
	runs := map[string]Run{}
	if path == "" {
		return runs, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return runs, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r Run
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		runs[r.key()] = r
	}
	return runs, sc.Err()
}

func appendRun(path string, r Run) error {
	if path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	b, err := json.Marshal(r)
	if err == nil {
		_, err = f.Write(append(b, '\n'))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// plan lists the runs of a reproduction: every graph × model × seed; the
// first seed's run of a speed graph and model also saves its blocks for
// the PyTorch script.
func plan(c Config) []Run {
	var runs []Run
	for _, g := range c.Graphs {
		models := slices.Clone(c.Models)
		if slices.Contains(c.SpeedGraphs, g) {
			for _, m := range c.SpeedModels {
				if !slices.Contains(models, m) {
					models = append(models, m)
				}
			}
		}
		for _, m := range models {
			inAcc := slices.Contains(c.Models, m)
			for i, seed := range c.Seeds {
				if !inAcc && i > 0 {
					break
				}
				speed := i == 0 && slices.Contains(c.SpeedGraphs, g) && slices.Contains(c.SpeedModels, m)
				shape, skip := c.shape(g, m)
				if skip != "" {
					break
				}
				runs = append(runs, Run{Graph: g, Model: m, Seed: seed, Shape: shape, Threads: c.Threads, Speed: speed})
			}
		}
	}
	return runs
}

// shape is the shape of graph's model runs in this reproduction, or why
// they are left out.
func (c Config) shape(graph, mdl string) (Shape, string) {
	s, skip := ShapeFor(graph, mdl)
	if c.Epochs > 0 {
		s.Epochs = c.Epochs
	}
	return s, skip
}

// Report is everything gnn.json holds.
type Report struct {
	Command string       `json:"command"`
	Date    string       `json:"date"`
	Commit  string       `json:"commit"`
	Machine Machine      `json:"machine"`
	Seconds float64      `json:"seconds"`
	Runs    []Run        `json:"runs"`
	Cells   []AccCell    `json:"accuracy"`
	Speed   []SpeedRow   `json:"speed"`
	Graphs  []GraphBrief `json:"graphs"`
}

// Machine describes where the numbers were measured.
type Machine struct {
	CPU     string  `json:"cpu"`
	Cores   int     `json:"cores"`
	Go      string  `json:"go"`
	FMAPeak float64 `json:"fma_peak_flops_per_core"`
	Torch   string  `json:"torch,omitempty"`
	BLAS    string  `json:"blas,omitempty"`
}

// GraphBrief is a graph's size as its files say.
type GraphBrief struct {
	Name      string `json:"name"`
	Nodes     int    `json:"nodes"`
	EdgeLines int    `json:"edge_lines"`
	Train     int    `json:"train"`
	Valid     int    `json:"valid"`
	Test      int    `json:"test"`
}

func reproduce(c Config, stdout io.Writer) error {
	begin := time.Now()
	if err := os.MkdirAll(c.Out, 0o755); err != nil {
		return err
	}
	done, err := readRuns(c.RunsFile)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "gnnbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	todo := plan(c)
	var runs []Run
	for i, r := range todo {
		if d, ok := done[r.key()]; ok {
			runs = append(runs, d)
			continue
		}
		if err := trainOne(c, &r, tmp); err != nil {
			return fmt.Errorf("%s %s seed %d: %w", r.Graph, r.Model, r.Seed, err)
		}
		if err := appendRun(c.RunsFile, r); err != nil {
			return err
		}
		line := fmt.Sprintf("[%d/%d %s] %s %s seed %d: test %.3f, %.1f s", i+1, len(todo), time.Since(begin).Round(time.Second), r.Graph, r.Model, r.Seed, r.TestAcc, r.WallSeconds)
		if r.Torch != nil {
			line += fmt.Sprintf("; PyTorch test %.3f, %.2f s/epoch against our %.2f", r.Torch.TestAcc, medianOf(r.Torch.Epochs, func(e TorchEpoch) float64 { return e.Seconds }),
				medianOf(r.Epochs, func(e RealEpoch) float64 { return e.EpochSeconds }))
		}
		fmt.Fprintln(c.Log, line)
		runs = append(runs, r)
	}
	rep := Report{Command: c.Command, Date: time.Now().UTC().Format("2006-01-02 15:04 UTC"), Commit: runinfo.Commit(), Runs: runs,
		Machine: machine(), Seconds: time.Since(begin).Seconds()}
	for _, r := range runs {
		if r.Torch != nil {
			rep.Machine.Torch, rep.Machine.BLAS = r.Torch.Torch, r.Torch.BLAS
			break
		}
	}
	for _, g := range c.Graphs {
		rep.Graphs = append(rep.Graphs, brief(c.GraphDir, g))
	}
	rep.Cells = accuracy(runs, c.Graphs, c.Models)
	rep.Speed = speed(runs, rep.Machine.FMAPeak*float64(c.Threads))
	if err := atomicfile.Write(filepath.Join(c.Out, "gnn.json"), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", " ")
		return e.Encode(rep)
	}); err != nil {
		return err
	}
	md := readme(rep, c)
	if n, ok := experiments.NoteFor("gnn"); ok {
		md = experiments.SpliceNote(md, n, "results/gnn")
	}
	if err := atomicfile.Write(filepath.Join(c.Out, "README.md"), func(w io.Writer) error { _, err := io.WriteString(w, md); return err }); err != nil {
		return err
	}
	_, err = io.WriteString(stdout, md)
	return err
}

func machine() Machine {
	m := Machine{CPU: runinfo.CPU(), Cores: runtime.NumCPU(), Go: runtime.Version()}
	m.FMAPeak = fmaPeak()
	return m
}

// fmaPeak is one core's FMA ceiling in FLOP/s: the best of five ~10 ms
// runs of the SIMD kernels' peak loop (0 without one).
func fmaPeak() float64 {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	best := 0.0
	for range 5 {
		t := time.Now()
		f := model.FMAPeak(1 << 19)
		if sec := time.Since(t).Seconds(); f > 0 && sec > 0 {
			best = max(best, f/sec)
		}
	}
	return best
}

func countLines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<20)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err != nil {
			return n
		}
	}
}

func brief(dir, g string) GraphBrief {
	p := func(n string) string { return filepath.Join(dir, g, n) }
	return GraphBrief{Name: g, Nodes: countLines(p("nodes.txt")), EdgeLines: countLines(p("edges.tsv")),
		Train: countLines(p("train.txt")), Valid: countLines(p("valid.txt")), Test: countLines(p("test.txt"))}
}
