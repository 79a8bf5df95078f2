package main

import (
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/workload"
)

// The human and machine outputs of realrun: column lists, the timeline
// chart and summary lines.

// epochColumns are realrun's table and CSV columns; the human table
// leaves the Wide ones out (--wide shows them).
var epochColumns = plots.Columns{
	{Field: "Epoch", Head: "epoch"},
	{Field: "EpochSeconds", Head: "epoch", Seconds: true, CSVPrec: 3},
	{Field: "StallSeconds", Head: "stall", Seconds: true, CSVPrec: 3},
	{Field: "ComputeSeconds", Head: "compute", Seconds: true, CSVPrec: 3, Wide: true},
	{Field: "Swaps", Head: "swaps"},
	{Field: "Loads", Head: "loads", Wide: true},
	{Field: "Writes", Head: "writes", Wide: true},
	{Field: "FinalWrites"},
	{Field: "ReadBytes", Head: "read MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "WriteBytes", Head: "write MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "EdgesPerSecond", Head: "edges/s", Prec: 0, CSVPrec: 0},
	{Field: "Loss", Head: "loss", Prec: 2, CSVPrec: 2, Wide: true},
	{Field: "LossPerEdge", Head: "loss/edge", Prec: 4, CSVPrec: 6},
	// The protocol beside the MRRs: filtered and sampled MRRs differ.
	{Field: "EvalProtocol", Head: "protocol", ZeroMissing: true},
	{Field: "Valid.MRR", Head: "valid\nMRR", Prec: 3, CSVPrec: 4},
	{Field: "Valid.HitsAt1", CSVPrec: 4},
	{Field: "Valid.HitsAt3", CSVPrec: 4},
	{Field: "Valid.HitsAt10", CSVPrec: 4},
	{Field: "Test.MRR", Head: "test\nMRR", Prec: 3, CSVPrec: 4},
	{Field: "Test.HitsAt1", Head: "test\nHits@1", Prec: 3, CSVPrec: 4, Wide: true},
	{Field: "Test.HitsAt3", CSVPrec: 4},
	{Field: "Test.HitsAt10", Head: "test\nHits@10", Prec: 3, CSVPrec: 4},
	{Field: "EvalSeconds", Head: "eval", Seconds: true, CSVPrec: 3, Wide: true},
}

// runColumns are the CSV's columns after epochColumns: the model and the
// objective the run trained with, the same on every row (runCSV).
var runColumns = plots.Columns{
	{Field: "Model"},
	{Field: "Objective.Loss"},
	{Field: "Objective.Margin", CSVPrec: -1}, // -1: the shortest exact decimal
	{Field: "Objective.Adversarial", CSVPrec: -1},
	{Field: "Objective.Regularizer"},
	{Field: "Objective.RegCoef", CSVPrec: -1},
}

// runRow is the run's part of every CSV row.
type runRow struct {
	Model     string             `json:"model"`
	Objective workload.Objective `json:"objective"`
}

// runCSV is out's epochs as a CSV table, each row with the run's model and
// objective.
func runCSV(out Output) plots.Table {
	t := epochColumns.CSV(out.Epochs)
	run := runColumns.CSV([]runRow{{Model: out.Model, Objective: out.Objective}})
	t.Header = append(t.Header, run.Header...)
	for i := range t.Rows {
		t.Rows[i] = append(t.Rows[i], run.Rows[0]...)
	}
	return t
}

// evalSummary is one line per split on the run's last evaluation of it
// ("" when nothing was evaluated).
func evalSummary(epochs []realrun.Epoch) string {
	var lines []string
	for _, split := range []string{"valid", "test"} {
		for i := len(epochs) - 1; i >= 0; i-- {
			q := epochs[i].Valid
			if split == "test" {
				q = epochs[i].Test
			}
			if q != nil {
				how := q.Mode
				if q.Auto {
					how += ", chosen by --eval-protocol auto,"
				}
				lines = append(lines, fmt.Sprintf("evaluation (%s, epoch %d): %s ranking of %d %s edges, both sides (%.1f s); random MRR %.4f",
					split, epochs[i].Epoch, how, q.Edges, split, q.Seconds, q.Baseline))
				break
			}
		}
	}
	for _, e := range epochs {
		if e.EvalStopped {
			lines = append(lines, fmt.Sprintf("the evaluation after epoch %d was stopped before it finished (— in its row)", e.Epoch))
		}
	}
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\nfiltered and sampled MRRs are not comparable; " + plots.Missing + " marks an epoch not evaluated"
}

// drawTimeline plots, for the last epoch, compute and I/O busy over time,
// one strip per resource on a shared time axis, to path (.png or .svg).
func drawTimeline(out Output, path string) error {
	if len(out.Epochs) == 0 {
		return fmt.Errorf("no epoch to plot")
	}
	e := out.Epochs[len(out.Epochs)-1]
	st := plots.Strips{Title: fmt.Sprintf("realrun epoch %d: %s, p=%d c=%d", e.Epoch, out.Ordering, out.P, out.C), XLabel: "seconds", YLabel: "busy fraction", YMax: 1}
	compute, read, write := plots.Series{Name: "compute"}, plots.Series{Name: "disk read"}, plots.Series{Name: "disk write"}
	for _, pt := range e.Timeline {
		x := (pt.Start + pt.End) / 2
		compute.X, compute.Y = append(compute.X, x), append(compute.Y, pt.Compute)
		read.X, read.Y = append(read.X, x), append(read.Y, pt.Read)
		write.X, write.Y = append(write.X, x), append(write.Y, pt.Write)
	}
	st.Series = []plots.Series{compute, read, write}
	return plots.SaveStack(path, st)
}

// gpuSummary is one line on the GPU of the last epoch ("" without one):
// which GPU, what did the products, and how much of the host↔GPU copy
// time was hidden behind training.
func gpuSummary(out Output) string {
	if len(out.Epochs) == 0 || out.Epochs[len(out.Epochs)-1].GPU == nil {
		return ""
	}
	e := out.Epochs[len(out.Epochs)-1]
	g := e.GPU
	return fmt.Sprintf("GPU %s (driver %s, CUDA %s); products: %s; host↔GPU copies %.2f s in flight, %.2f s of it hidden behind training",
		g.Name, g.Driver, g.CUDA, g.GEMM, e.TransferSeconds, e.HiddenTransferSeconds)
}

// checkpointSummary is one line on the checkpoints taken inside epochs
// ("" when none was).
func checkpointSummary(out Output) string {
	var n int
	var bytes int64
	var secs float64
	for _, e := range out.Epochs {
		n, bytes, secs = n+e.InsideCheckpoints, bytes+e.CheckpointBytes, secs+e.CheckpointWaitSeconds
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("checkpoints inside epochs: %d, %.1f MB written, training waited %.1f s for them", n, float64(bytes)/1e6, secs)
}

// comparisonColumns are `realrun --compare-sim`'s table and CSV columns
// (headers on two lines; --wide adds the Wide ones).
var comparisonColumns = plots.Columns{
	{Field: "Ordering", Head: "ordering"},
	{Field: "Measured.EpochSeconds", Head: "epoch s\nmeasured", Prec: 2, CSVPrec: 2},
	{Field: "Predicted.EpochSeconds", Head: "epoch s\npredicted", Prec: 2, CSVPrec: 2},
	{Field: "RelativeError.EpochSeconds", Key: "epoch_relative_error", Head: "epoch\nerror %", Scale: 100, Prec: 1, CSVPrec: 4},
	{Field: "Measured.StallSeconds", Head: "stall s\nmeasured", Prec: 2, CSVPrec: 2},
	{Field: "Predicted.StallSeconds", Head: "stall s\npredicted", Prec: 2, CSVPrec: 2},
	{Field: "Measured.ComputeSeconds", Head: "compute s\nmeasured", Prec: 2, CSVPrec: 2, Wide: true},
	{Field: "Predicted.ComputeSeconds", Head: "compute s\npredicted", Prec: 2, CSVPrec: 2, Wide: true},
	{Field: "Measured.ReadBytes", Head: "read bytes\nmeasured", Wide: true},
	{Field: "Predicted.ReadBytes", Head: "read bytes\npredicted", Wide: true},
	{Field: "Measured.WriteBytes", Head: "write bytes\nmeasured", Wide: true},
	{Field: "Predicted.WriteBytes", Head: "write bytes\npredicted", Wide: true},
	{Field: "Measured.Swaps", Key: "swaps", Head: "swaps"},
}
