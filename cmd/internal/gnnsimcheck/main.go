// Command gnnsimcheck checks simulate gnn's predictions against realrun
// gnn's measured epochs on this machine: for each generated graph, model
// and number of micro-batches (split by REG) it calibrates the CPU GNN
// engine at the run's shape (calibrate.GNN, on batches of an epoch the
// run never trains), then predicts the epochs on that profile
// (gnnsim.Predict) and trains them (gnn.Train, the engine realrun gnn
// runs), and prints predicted against measured epoch time, with the
// run's own split of its time (compute, sampling, stall). The first
// epoch warms the engine up and is left out of the comparison.
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/gnn"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/validate/gnnsim"
)

// Row is one graph × model × K: predicted and measured seconds per
// epoch (the mean over the compared epochs) and what the run spent them
// on.
type Row struct {
	Graph     string  `json:"graph"`
	Model     string  `json:"model"`
	K         int     `json:"k"`
	Predicted float64 `json:"predicted_epoch_s"`
	Measured  float64 `json:"measured_epoch_s"`
	Error     float64 `json:"error"`
	// The run's compute, sampling, split and stall seconds per epoch, and the
	// prediction's compute and transfer.
	Compute     float64 `json:"measured_compute_s"`
	Sample      float64 `json:"measured_sample_s"`
	Stall       float64 `json:"measured_stall_s"`
	Split       float64 `json:"measured_split_s"`
	PredCompute float64 `json:"predicted_compute_s"`
	PredGather  float64 `json:"predicted_gather_s"`
	Calibration float64 `json:"calibration_s"`
}

func main() {
	os.Exit(cli.Exit(os.Stderr, "gnnsimcheck", run(os.Args[1:], os.Stdout, os.Stderr)))
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("gnnsimcheck", flag.ContinueOnError)
	graphs := fs.String("graphs", "ogbn-arxiv,ogbn-products", "generated graphs (data.Presets), each at its default scale, or NAME:SCALE")
	models := fs.String("models", "sage-mean,sage-lstm,gat", "models")
	epochs := fs.Int("epochs", 3, "epochs to train; the first is left out")
	hidden := fs.Int("hidden", gnn.Defaults.Hidden, "hidden width")
	batch := fs.Int("batch", gnn.Defaults.Batch, "output nodes per batch")
	workers := fs.Int("workers", 0, "goroutines the engine computes with, in the calibration and the runs alike (0: every CPU)")
	asJSON := fs.Bool("json", false, "print the rows as JSON")
	kList := fs.String("micro-batches", "1,2,4,8", "micro-batches per batch, a LIST (one run each, split by REG)")
	if err := fs.Parse(args); err != nil {
		return cli.Usagef("%w", err)
	}
	if *epochs < 2 {
		return cli.Usagef("--epochs %d: want at least 2 (the first is left out)", *epochs)
	}
	ks, err := cli.IntList(*kList)
	if err != nil {
		return cli.Usagef("--micro-batches: %w", err)
	}
	var rows []Row
	for _, gname := range cli.SplitList(*graphs) {
		name, scale := gname, 0.0
		if n, s, ok := strings.Cut(gname, ":"); ok {
			name = n
			if _, err := fmt.Sscan(s, &scale); err != nil {
				return cli.Usagef("--graphs: %q: scale %q is not a number", gname, s)
			}
		}
		g, err := data.Generate(name, scale, 1)
		if err != nil {
			return cli.Usagef("--graphs: %w", err)
		}
		for _, model := range cli.SplitList(*models) {
			o := gnn.Defaults
			o.Graph, o.Model, o.Hidden, o.Batch, o.Epochs, o.EvalEvery, o.Workers = g, model, *hidden, *batch, *epochs, *epochs+1, *workers
			for _, k := range ks {
				if err := micro(&o, k); err != nil {
					return cli.Usagef("--micro-batches: %w", err)
				}
				// Calibrated right before the run: on a shared machine the
				// load of the moment moves both.
				cal, err := calibrate.GNN(g, o, calibrate.GNNOptions{})
				if err != nil {
					return fmt.Errorf("%s %s: %w", name, model, err)
				}
				r, err := check(g, o, cal, k)
				if err != nil {
					return fmt.Errorf("%s %s K=%d: %w", name, model, k, err)
				}
				r.Graph = gname
				fmt.Fprintf(stderr, "%s %s K=%d: predicted %.3f s, measured %.3f s (%+.1f%%)\n", gname, model, r.K, r.Predicted, r.Measured, 100*r.Error)
				rows = append(rows, r)
			}
		}
	}
	if *asJSON {
		return cli.PrintJSON(stdout, rows)
	}
	fmt.Fprintf(stdout, "%-16s %-10s %3s %10s %10s %7s %10s %9s %9s %8s %10s %10s\n", "graph", "model", "K", "predicted", "measured", "error", "compute", "sample", "split", "stall", "pred comp", "pred gath")
	worst := 0.0
	for _, r := range rows {
		fmt.Fprintf(stdout, "%-16s %-10s %3d %9.3fs %9.3fs %+6.1f%% %9.3fs %8.3fs %8.3fs %7.3fs %9.3fs %9.3fs\n", r.Graph, r.Model, r.K, r.Predicted, r.Measured, 100*r.Error, r.Compute, r.Sample, r.Split, r.Stall, r.PredCompute, r.PredGather)
		worst = max(worst, math.Abs(r.Error))
	}
	fmt.Fprintf(stdout, "worst |error| %.1f%% (epochs 2..%d of each run; the calibration ran before the run, on batches of an epoch it never trains)\n", 100*worst, *epochs)
	return nil
}

// check predicts and trains one run at k micro-batches on the profile
// calibrated before it.
func check(g *data.Graph, o gnn.Options, cal calibrate.GNNCalibration, k int) (Row, error) {
	row := Row{Model: o.Model, K: k, Calibration: cal.Seconds}
	res, err := gnn.Train(o)
	if err != nil {
		return row, err
	}
	n := 0.0
	for _, ep := range res.Epochs[1:] {
		w := gnnsim.FromOptions(g, o)
		w.Epoch = ep.Epoch
		pred, err := gnnsim.Predict(w, cal.Profile, gnnsim.Settings{K: []int{k}, Method: o.MicroSplit})
		if err != nil {
			return row, err
		}
		p := pred.Rows[0]
		row.Predicted += p.EpochSeconds
		row.PredCompute += p.ComputeSeconds
		row.PredGather += p.TransferSeconds
		row.Measured += ep.EpochSeconds
		row.Compute += ep.ComputeSeconds
		row.Sample += ep.SampleSeconds
		row.Stall += ep.StallSeconds
		row.Split += ep.SplitSeconds
		n++
	}
	for _, p := range []*float64{&row.Predicted, &row.PredCompute, &row.PredGather, &row.Measured, &row.Compute, &row.Sample, &row.Stall, &row.Split} {
		*p /= n
	}
	row.Error = row.Predicted/row.Measured - 1
	return row, nil
}
