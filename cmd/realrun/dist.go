//go:build !nodist

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/workload"
)

// distMain is `realrun --trainers N`.
func distMain(o cmdOptions, format cli.Format, stdout, stderr io.Writer) error {
	if o.dist.Trainers < 1 {
		return cli.Usagef("--trainers %d: at least 1 trainer (--etcd and --lease go with --trainers)", o.dist.Trainers)
	}
	if o.dist.Lease < time.Second {
		return cli.Usagef("--lease %s: at least 1s", o.dist.Lease)
	}
	var other []string
	for _, f := range []struct {
		name string
		set  bool
	}{{"plan", o.PlanFile != ""}, {"checkpoint-every", o.CheckpointEvery != (workload.CheckpointInterval{})}, {"timeline", o.timeline != ""}, {"trace", o.trace != ""}, {"engine", o.Engine != "" && o.Engine != "cpu"}, {"export", o.Export != ""}} {
		if f.set {
			other = append(other, "--"+f.name)
		}
	}
	if len(other) > 0 {
		return cli.Usagef("%s: not with --trainers (yet)", strings.Join(other, ", "))
	}
	argv, err := selfArgv()
	if err != nil {
		return err
	}
	d := dist.DistOptions{Trainers: o.dist.Trainers, Etcd: o.dist.Etcd, Lease: o.dist.Lease, Objects: o.dist.Objects, Listen: o.dist.Listen, Argv: argv, Compare: o.compareSim}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out, err := dist.TrainDistributed(ctx, o.Options, d, stderr)
	if err != nil {
		return asUsage(err)
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, out)
	case cli.CSV:
		var rows []dist.TrainerEpoch
		for _, e := range out.Epochs {
			rows = append(rows, e.Trainers...)
		}
		return trainerColumns.CSV(rows).CSV(stdout)
	}
	// The epochs as one machine's table shows them (loss, validation and
	// test quality), then every epoch's trainers.
	if len(out.Epochs) > 0 {
		if err := distEpochColumns.Select(o.out.isWide()).Human(out.Epochs).Render(stdout); err != nil {
			return err
		}
	}
	for i, e := range out.Epochs {
		fmt.Fprintf(stdout, "epoch %d: %.1f s\n", e.Epoch, e.Seconds)
		if err := trainerColumns.Select(o.out.isWide()).Human(e.Trainers).Render(stdout); err != nil {
			return err
		}
		if i < len(out.Predicted) {
			p := out.Predicted[i]
			var loads, saves int
			var train, wait, xfer float64
			for _, t := range e.Trainers {
				n := float64(len(e.Trainers))
				loads, saves = loads+t.Loads, saves+t.Saves
				train, wait, xfer = train+t.TrainSeconds/n, wait+t.WaitBucketSeconds/n, xfer+t.TransferSeconds/n
			}
			fmt.Fprintf(stdout, "predicted: %.1f s (%+.0f%%); loads %d (measured %d), saves %d (%d); a trainer trains %.1f s (%.1f), waits %.1f s (%.1f), transfers %.1f s (%.1f)\n",
				p.Seconds, 100*(p.Seconds/e.Seconds-1), p.Loads, loads, p.Saves, saves, p.TrainSeconds, train, p.WaitBucketSeconds, wait, p.TransferSeconds, xfer)
		}
	}
	if c := out.Calibration; c != nil {
		fmt.Fprintf(stdout, "prediction: the simulator's model of this engine (sim.EngineModel) with the engine timed on one bucket before the run (%.2f µs an edge, trainers sharing %d cores) and the store's speed measured then (%.0f MB/s for a partition written and read back)\n",
			c.EdgeSeconds*1e6, runtime.NumCPU(), c.StoreBytes/1e6)
	}
	via := "the shared work directory"
	if out.Objects != "" {
		via = "the object store " + out.Objects
	}
	fmt.Fprintf(stdout, "%d trainers on %s (%s, d=%d, p=%d, %d train edges) through etcd %s, partitions through %s; buckets lost to dead trainers: %d\n",
		out.Trainers, out.Dataset, out.Model, out.Dim, out.P, out.TrainEdges, out.Etcd, via, out.Lost)
	if out.Quality.Mode != "" {
		fmt.Fprintf(stdout, "MRR %.4f  Hits@1 %.4f  Hits@10 %.4f (%s, %d test edges)\n", out.MRR, out.Quality.HitsAt1, out.Quality.HitsAt10, out.Quality.Mode, out.Quality.Edges)
	}
	if s := bestSummary(out.Best, out.Workdir, out.StoppedEarly, out.EarlyStop); s != "" {
		fmt.Fprintln(stdout, s)
	}
	for _, f := range out.Failed {
		fmt.Fprintf(stdout, "warning: %s (the others finished its buckets)\n", f)
	}
	fmt.Fprintln(stdout, "occupancy: training ÷ the trainer's epoch; wait: the lock server had no bucket with free partitions")
	return nil
}

// trainerColumns are the distributed run's per-trainer table and CSV.
var trainerColumns = plots.Columns{
	{Field: "Epoch", Head: "epoch"},
	{Field: "Trainer", Head: "trainer"},
	{Field: "Buckets", Head: "buckets"},
	{Field: "TrainSeconds", Head: "train", Seconds: true, CSVPrec: 3},
	{Field: "WaitBucketSeconds", Head: "wait for bucket", Seconds: true, CSVPrec: 3},
	{Field: "TransferSeconds", Head: "transfer", Seconds: true, CSVPrec: 3},
	{Field: "Seconds", Head: "epoch", Seconds: true, CSVPrec: 3},
	{Field: "Occupancy", Head: "occupancy %", Scale: 100, Prec: 0, CSVPrec: 4},
	{Field: "Loads", Head: "loads", Wide: true},
	{Field: "Saves", Head: "saves", Wide: true},
	{Field: "ReadBytes", Head: "read MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "WriteBytes", Head: "written MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "EdgeBytes"},
	{Field: "Loss", Head: "loss", Prec: 2, CSVPrec: 2},
	{Field: "Lost"},
}

// distEpochColumns are the distributed run's epochs table: one
// machine's columns (epochColumns) a distributed epoch has — its time,
// loss, and the quality evaluated after it.
var distEpochColumns = append(plots.Columns{{Field: "Epoch", Head: "epoch"}, {Field: "Seconds", Head: "epoch", Seconds: true, CSVPrec: 3}},
	pickColumns(epochColumns, "Loss", "LossPerEdge", "Valid.", "Test.", "EvalProtocol", "EvalSeconds")...)

// pickColumns are the columns of cs whose field is one of fields (or,
// for a name ending in ".", under it), in cs's order.
func pickColumns(cs plots.Columns, fields ...string) plots.Columns {
	var out plots.Columns
	for _, c := range cs {
		for _, f := range fields {
			if c.Field == f || strings.HasSuffix(f, ".") && strings.HasPrefix(c.Field, f) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// trainerMain is `realrun trainer`: one trainer of a distributed run.
func trainerMain(args []string, stdout, stderr io.Writer) error {
	var o dist.TrainerOptions
	var endpoints string
	fs := newFlagSet(prog + " trainer")
	fs.StringVar(&endpoints, "etcd", "", "etcd `ENDPOINTS` of the run (comma-separated; realrun --trainers prints them)")
	fs.StringVar(&o.Store, "store", "", "the run's shared store: its work `DIR`, on a filesystem every trainer sees")
	fs.StringVar(&o.Prefix, "run", "", "the run's etcd `PREFIX` (realrun --trainers prints it)")
	fs.IntVar(&o.ID, "id", -1, "this trainer's id: 0, 1, …, unique among the run's live trainers")
	fs.DurationVar(&o.Lease, "lease", 5*time.Second, "this trainer's lease: silent this long, it loses its bucket to the pool")
	wide := cli.WideFlag(fs)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun trainer --etcd ENDPOINTS --store DIR --run PREFIX --id N",
		Summary: "Joins a distributed run as one trainer: takes buckets from the lock server in etcd, partitions through the shared store, until the run is done.",
		Groups:  []cli.FlagGroup{{Title: "The run", Flags: []string{"etcd", "store", "run", "id", "lease"}}, {Title: "Output", Flags: []string{"json", "csv"}}},
		Examples: []string{
			"realrun trainer --etcd http://10.0.0.1:2379 --store /shared/wd --run /tierflow/5f3a/1764170000 --id 2",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case endpoints == "":
		return cli.Usagef("--etcd: required (the endpoints realrun --trainers prints)")
	case o.Store == "":
		return cli.Usagef("--store: required (the run's work directory)")
	case o.Prefix == "":
		return cli.Usagef("--run: required (the prefix realrun --trainers prints)")
	case o.ID < 0:
		return cli.Usagef("--id %d: a trainer id ≥ 0", o.ID)
	case o.Lease < time.Second:
		return cli.Usagef("--lease %s: at least 1s", o.Lease)
	}
	if fi, err := os.Stat(o.Store); err != nil || !fi.IsDir() {
		return cli.Usagef("--store %s: not a directory", o.Store)
	}
	if o.Endpoints, err = dist.ParseEndpoints(endpoints); err != nil {
		return cli.Usagef("%w", err)
	}
	o.Log = stderr
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	eps, err := dist.RunTrainer(ctx, o)
	if errors.Is(err, dist.ErrDuplicate) || errors.Is(err, dist.ErrNoRun) || errors.Is(err, dist.ErrUnreachable) || errors.Is(err, dist.ErrNotShared) {
		return cli.Usagef("%w", err)
	} else if err != nil {
		return err
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, eps)
	case cli.CSV:
		return trainerColumns.CSV(eps).CSV(stdout)
	}
	if len(eps) == 0 {
		fmt.Fprintln(stdout, "the run was already done")
		return nil
	}
	return trainerColumns.Select(*wide).Human(slices.Clip(eps)).Render(stdout)
}
