package experiments

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "models-quality", Description: "Every score function on the WordNet KG at equal training time (20 s of training a run): filtered test MRR and Hits@10 over 3 seeds, the epochs that time bought, training edges/s and the share of the FMA peak (about 12 minutes on 2 cores)", Run: ModelsQuality, Slow: true})
}

// MQRun is one model and objective of models-quality.
type MQRun struct {
	Model     workload.Model
	Objective workload.Objective
}

// Label is the objective as a table cell.
func (m MQRun) Label() string {
	o := m.Objective
	s := string(o.LossKind())
	var opts []string
	if o.Margin != 0 {
		name := "margin"
		if o.LossKind() == workload.Logistic {
			name = "γ"
		}
		opts = append(opts, name+" "+strconv.FormatFloat(o.Margin, 'g', -1, 64))
	}
	if o.Adversarial != 0 {
		opts = append(opts, "α "+strconv.FormatFloat(o.Adversarial, 'g', -1, 64))
	}
	if o.Reg() != workload.RegNone {
		opts = append(opts, fmt.Sprintf("%s %g", o.Reg(), o.RegCoef))
	}
	if len(opts) > 0 {
		s += " (" + strings.Join(opts, ", ") + ")"
	}
	return s
}

// MQConfig is what models-quality runs.
type MQConfig struct {
	Runs   []MQRun
	Seeds  []int64
	Budget float64 // seconds of training a run
	Cap    int     // most epochs a run
}

// DefaultMQConfig trains each named model with its default objective (the
// softmax) and with the logistic loss and self-adversarial weights that
// RotatE and DGL-KE use, and two PyTorch-BigGraph pairs, at realrun's KG
// defaults (d = 100, 100 negatives, lr 0.3).
var DefaultMQConfig = MQConfig{
	Runs: []MQRun{
		{Model: workload.DistMult},
		{Model: workload.ComplEx},
		{Model: workload.ComplEx, Objective: workload.Objective{Loss: workload.Logistic, Adversarial: 1}},
		{Model: workload.TransEL1},
		{Model: workload.TransEL2},
		{Model: workload.TransEL2, Objective: workload.Objective{Loss: workload.Logistic, Margin: 6, Adversarial: 1}},
		{Model: workload.RotatE},
		{Model: workload.RotatE, Objective: workload.Objective{Loss: workload.Logistic, Margin: 6, Adversarial: 1}},
		{Model: "linear+dot"},
		{Model: "diagonal+cos"},
	},
	Seeds:  []int64{1, 2, 3},
	Budget: 20,
	Cap:    200,
}

// ModelsQuality runs models-quality's default grid.
func ModelsQuality() (Result, error) { return RunModelsQuality(DefaultMQConfig) }

// RunModelsQuality trains every run of c with every seed on the WordNet
// KG for c.Budget seconds of training, evaluates the test split (filtered,
// both sides) and tabulates each model's median and range over the seeds.
func RunModelsQuality(c MQConfig) (Result, error) {
	r := Result{
		Name:   "models-quality",
		Title:  fmt.Sprintf("Score functions on the WN18-style WordNet KG at equal training time (%g s a run): filtered test MRR and Hits@10, median [min–max] over %d seeds", c.Budget, len(c.Seeds)),
		Header: []string{"model", "objective", "epochs", "train s", "edges/s", "FLOPs, share of FMA peak", "test MRR", "Hits@10"},
	}
	base, err := os.MkdirTemp("", "tierflow-models-quality-*")
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
	peak := calibrate.FMAPeak(job0Workers())
	start := time.Now()
	load0 := loadAvg()
	for _, run := range c.Runs {
		var sr seedRuns
		for _, seed := range c.Seeds {
			o := qoOptions(base, c.Cap)
			o.Model, o.Seed = string(run.Model), seed
			ob := run.Objective
			ob.Loss, ob.Regularizer = ob.LossKind(), ob.Reg()
			if err := ob.Validate(run.Model); err != nil {
				return r, fmt.Errorf("%s: %w", run.Model, err)
			}
			qs, sec, n, err := trainPlanFor(o, onePartitionPlan(), false, &ob, c.Budget)
			if err != nil {
				return r, fmt.Errorf("%s %s seed %d: %w", run.Model, run.Label(), seed, err)
			}
			os.RemoveAll(o.Workdir)
			sr.add(qs[len(qs)-1], sec, n, len(split.Train), workload.Training{Model: run.Model, Dim: o.Dim, Batch: o.Batch, Negatives: o.Negatives, Objective: ob}, peak)
		}
		r.Rows = append(r.Rows, []string{string(run.Model), run.Label(),
			fmt.Sprintf("%.0f", median(sr.epochs)), fmt.Sprintf("%.1f", median(sr.train)), fmt.Sprintf("%.0fk", median(sr.eps)/1e3), sr.shareCell(run.Model),
			spreadCell(sr.mrr), spreadCell(sr.h10)})
	}
	r.Notes = []string{
		fmt.Sprintf("Graph: the quality experiment's WN18-style KG from WordNet 3.0 (%d entities, %d / %d / %d triples).", split.Entities, len(split.Train), len(split.Valid), len(split.Test)),
		fmt.Sprintf("Each run trains in memory (p = 1, one bucket: every edge, negatives from every node) through realrun's CPU engine with realrun's defaults (d = 100, 100 negatives, lr 0.3, Adagrad, %d workers) until its epochs' training time reaches %g s (evaluation and checkpoints not counted; at most %d epochs), then ranks the test split against every entity, filtered by train, valid and test, both sides. Seeds %s vary the initial embeddings, the shuffles and the negatives.", job0Workers(), c.Budget, c.Cap, joinSeeds(c.Seeds)),
		"edges/s is training edges × epochs ÷ training seconds; the FLOP share is that rate times the cost rule's FLOPs per edge (workload.Training.ChunkCost: the score products, 12·negatives·d for the GEMM comparators, with the operator's, the comparator's row and score terms and the loss's) over the FMA peak of the workers' cores measured at the start (realrun/calibrate.FMAPeak). The pairwise comparators' operations (l1, modulus_l1: |·|, sign, √, no fused multiply-add) are not FLOPs of that peak: their models show no share (— (pairwise)).",
		fmt.Sprintf("Load average before and after: %s → %s; took %s.", load0, loadAvg(), time.Since(start).Round(time.Second)),
	}
	return r, nil
}

// job0Workers is realrun's default worker count (the runs' and the peak's
// cores).
func job0Workers() int { return qoOptions("", 1).Workers }

// spreadCell is "median [min–max]" to three decimals.
func spreadCell(xs []float64) string {
	return fmt.Sprintf("%.3f [%.3f–%.3f]", median(xs), slices.Min(xs), slices.Max(xs))
}

// seedRuns are one model's runs over the seeds, for a row of a quality
// table: epochs, training seconds, edges/s, the FMA-peak share, MRR and
// Hits@10 of each.
type seedRuns struct{ epochs, train, eps, share, mrr, h10 []float64 }

// add records a run that trained edges × epochs in sec seconds and ended
// at q; its FLOP share is its rate times tr's chunk cost per edge over peak
// (none without a peak).
func (s *seedRuns) add(q realrun.Quality, sec float64, epochs, edges int, tr workload.Training, peak float64) {
	rate := float64(edges*epochs) / sec
	s.epochs, s.train, s.eps = append(s.epochs, float64(epochs)), append(s.train, sec), append(s.eps, rate)
	s.mrr, s.h10 = append(s.mrr, q.MRR), append(s.h10, q.HitsAt10)
	if peak > 0 {
		c := tr.ChunkCost(tr.Chunk())
		s.share = append(s.share, rate*c.FLOPs/c.Edges/peak)
	}
}

// shareCell is the median FMA-peak share, or why there is none: the
// pairwise comparators' operations are not FLOPs of that peak.
func (s *seedRuns) shareCell(m workload.Model) string {
	switch {
	case m.Comparator() == workload.CmpL1 || m.Comparator() == workload.CmpModulusL1:
		return "— (pairwise)"
	case len(s.share) > 0:
		return fmt.Sprintf("%.0f%%", 100*median(s.share))
	}
	return "—"
}
