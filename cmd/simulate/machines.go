package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/sim/sweep"
)

// machinesMain is `simulate --machines M`: PyTorch-BigGraph's trainer on
// one machine or several (sim.PBGRequest).
func machinesMain(w io.Writer, format cli.Format, q sim.Request, pq sim.PBGRequest, set map[string]bool, wide bool) error {
	if !set["machines"] {
		return cli.Usagef("--bandwidth and --epochs go with --machines")
	}
	if set["system"] && q.System != "pbg" {
		return cli.Usagef("--machines models PyTorch-BigGraph (--system pbg), not --system %s", q.System)
	}
	var other []string
	for _, f := range []string{"c", "orderings", "policy", "plan", "plot", "trace", "edges", "batch", "negatives", "chunk", "staleness", "no-prefetch", "sync-writes", "write-buffers", "checkpoint-every", "gpu-memory", "no-micro-batching"} {
		if set[f] {
			other = append(other, "--"+f)
		}
	}
	if len(other) > 0 {
		sort.Strings(other)
		return cli.Usagef("%s: not with --machines (PyTorch-BigGraph holds two partitions and takes buckets from its lock server)", strings.Join(other, ", "))
	}
	pq.Device = "pbg-paper"
	if set["device"] {
		pq.Device = q.Device
	}
	pq.Dataset, pq.Model, pq.Dim, pq.P, pq.Graph = q.Dataset, q.Model, q.Dim, q.P, q.Graph
	out, err := pq.Predict()
	if err != nil {
		return cli.AsUsage(err)
	}
	st := out.Steady()
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		return trainerColumns.CSV(st.Trainers).CSV(w)
	}
	if err := trainerColumns.Select(wide).Human(st.Trainers).Render(w); err != nil {
		return err
	}
	tr := out.Training
	fmt.Fprintf(w, "pbg on %s, %d machine(s), p=%d: %s, d=%d, %s, batch %d, %d negatives a chunk of %d; partition %.3f GB (row-wise Adagrad); GB = 10^9 bytes\n",
		out.Device, out.Machines, out.P, describe(out.Dataset, q.Graph), tr.Dim, tr.Model, tr.Batch, tr.Negatives, tr.Chunk(), sim.GB(out.PartitionBytes))
	fmt.Fprintf(w, "epoch %s (the first, under the lock server's initialisation rule: %s); %d epochs %s; per epoch: network %.1f GB (parameter sync %.1f GB), edges %.1f GB, disk read %.1f GB, written %.1f GB; peak memory %.1f GB a machine\n",
		plots.Duration(st.Seconds), plots.Duration(out.Epochs[0].Seconds), out.EpochsReported, plots.Duration(out.Seconds), st.NetworkBytes/1e9, st.SyncBytes/1e9, st.EdgeBytes/1e9, st.DiskReadBytes/1e9, st.DiskWriteBytes/1e9, sim.GB(out.PeakMemoryBytes))
	fmt.Fprintf(w, "occupancy: training ÷ epoch; waiting for a bucket: the lock server had none with free partitions, or the epoch's barrier\n")
	for _, msg := range out.Warnings {
		fmt.Fprintf(w, "warning: %s\n", msg)
	}
	return nil
}

// trainerColumns are `simulate --machines`' table and CSV columns: one row
// a trainer, over the steady epoch.
var trainerColumns = plots.Columns{
	{Field: "Machine", Head: "machine"},
	{Field: "Buckets", Head: "buckets"},
	{Field: "TrainSeconds", Head: "train", Seconds: true, CSVPrec: 3},
	{Field: "WaitBucketSeconds", Head: "wait for bucket", Seconds: true, CSVPrec: 3},
	{Field: "TransferSeconds", Head: "transfer", Seconds: true, CSVPrec: 3, Wide: true},
	{Field: "Occupancy", Head: "occupancy %", Scale: 100, Prec: 0, CSVPrec: 4},
	{Field: "Loads", Head: "loads", Wide: true},
	{Field: "Saves", Head: "saves", Wide: true},
	{Field: "SentBytes", Head: "sent GB", Scale: 1e-9, Prec: 1},
	{Field: "ReceivedBytes", Head: "received GB", Scale: 1e-9, Prec: 1},
	{Field: "PeakMemoryBytes", Head: "peak memory GB", Scale: 1e-9, Prec: 1, Wide: true},
}

// sweepMachines is `simulate sweep --machines LIST`: PyTorch-BigGraph at
// every (machines, p), ranked by time among those whose peak memory fits.
func sweepMachines(w io.Writer, format cli.Format, q sim.Request, ps, devs, machines, bandwidth string, epochs, top int, set map[string]bool, wide bool) error {
	if !set["machines"] {
		return cli.Usagef("--bandwidth and --epochs go with --machines")
	}
	if set["system"] && q.System != "pbg" {
		return cli.Usagef("--machines models PyTorch-BigGraph (--system pbg), not --system %s", q.System)
	}
	for _, f := range []string{"c", "orderings", "policy", "plot", "edges", "batch", "negatives", "chunk", "staleness", "no-prefetch", "sync-writes", "write-buffers", "checkpoint-every", "gpu-memory", "no-micro-batching", "memory-share"} {
		if set[f] {
			return cli.Usagef("--%s: not with --machines", f)
		}
	}
	ms, err := cli.IntList(machines)
	if err != nil {
		return cli.Usagef("--machines: %w", err)
	}
	pl := "1,2,4,8,16,32"
	if set["p"] {
		pl = ps
	}
	pp, err := cli.IntList(pl)
	if err != nil {
		return cli.Usagef("--p: %w", err)
	}
	device := "pbg-paper"
	if set["device"] {
		if d := cli.SplitList(devs); len(d) != 1 {
			return cli.Usagef("--device: one device with --machines, got %d", len(d))
		}
		device = devs
	}
	base := sim.PBGRequest{Device: device, Dataset: q.Dataset, Model: q.Model, Dim: q.Dim, Bandwidth: bandwidth, Epochs: epochs, Graph: q.Graph}
	out, err := sweep.RunMachines(base, ms, pp)
	if err != nil {
		return cli.AsUsage(err)
	}
	prof, err := devices.Resolve(device)
	if err != nil {
		return cli.Usagef("--device: %w", err)
	}
	sweep.RankMachines(&out, int64(prof.CPU.Memory))
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		return machinesSweepColumns.CSV(out.Rows).CSV(w)
	}
	if err := machinesSweepColumns.Select(wide).Human(out.Rows[:min(top, len(out.Rows))]).Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "pbg on %s: %s, d=%d; time of %d epochs; speed-up over the fastest one-machine row; machine-hours = the time in hours × machines; memory GB: the largest machine's peak (of %.0f GB)\n",
		out.Device, describe(out.Dataset, q.Graph), out.Dim, out.EpochsReported, sim.GB(out.MemoryBytes))
	if len(out.Skipped) > 0 {
		fmt.Fprintf(w, "left out: %d configurations with more machines than P/2 (their extra trainers only wait)\n", len(out.Skipped))
	}
	return nil
}

// machinesSweepColumns are `simulate sweep --machines`' table and CSV columns.
var machinesSweepColumns = plots.Columns{
	{Field: "Rank", Head: "rank"},
	{Field: "Machines", Head: "machines"},
	{Field: "P", Head: "p"},
	{Field: "Seconds", Head: "time", Seconds: true, CSVPrec: 1},
	{Field: "SpeedUp", Head: "speed-up", Prec: 2, CSVPrec: 4},
	{Field: "MachineHours", Head: "machine-hours", Prec: 1, CSVPrec: 3},
	{Field: "Occupancy", Head: "occupancy %", Scale: 100, Prec: 0, CSVPrec: 4},
	{Field: "WaitBucketSeconds", Head: "wait", Seconds: true, CSVPrec: 3, Wide: true},
	{Field: "TransferSeconds", Head: "transfer", Seconds: true, CSVPrec: 3, Wide: true},
	{Field: "NetworkBytes", Head: "network GB", Scale: 1e-9, Prec: 0},
	{Field: "PeakMemoryBytes", Head: "memory GB", Scale: 1e-9, Prec: 1},
	{Field: "Fits"},
}
