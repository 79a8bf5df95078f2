package simulated

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "multigpu", Description: "GE2's multi-GPU Twitter epochs (1, 2, 4 RTX 3090): the ge2 and dglke systems on G GPUs of one machine (sim.SimulateMultiGPU) against GE2's published seconds", Run: MultiGPU})
}

// The multi-GPU machine and workload: GE2's Twitter runs (Dot, d=100).
const (
	MultiGPUProfile = "ge2-paper"
	multiGPUDataset = "twitter"
	multiGPUDim     = 100
	// MultiGPUPartitions is the ge2 system's p: COVER needs p = 4^k, and
	// p = 16 gives 5 rounds of 4 disjoint lines, which 1, 2 and 4 GPUs
	// share evenly; a partition of Twitter at d=100 is 2.08 GB and a
	// buffer of 4 fits in 24 GB (assumption: GE2's p is not given).
	MultiGPUPartitions = 16
	// MultiGPUHostBW is the shared host-side cap on all GPUs' PCIe copies
	// (assumption; see devices/presets/ge2-paper.yaml).
	MultiGPUHostBW = 40e9
)

// MultiGPUCounts are the GPU counts of GE2's table.
var MultiGPUCounts = []int{1, 2, 4}

// multiGPUSeries is one system's row group: its published epoch seconds
// by MultiGPUCounts and how we simulate it. A system is added (PBG: GE2's
// 940.0 / 603.9 / 567.6 s) by appending one entry to multiGPUSeriesList.
type multiGPUSeries struct {
	Label string
	Paper []float64
	// Fitted names the one number fitted to the 1-GPU figure.
	Fitted   string
	Simulate func(g int) (sim.MultiGPUReport, error)
}

// multiGPUSeriesList is the experiment's systems, in display order.
func multiGPUSeriesList() []multiGPUSeries {
	return []multiGPUSeries{
		{Label: "GE2", Paper: []float64{516.3, 324.9, 181.5}, Fitted: "gpu.flops",
			Simulate: func(g int) (sim.MultiGPUReport, error) { return MultiGPUSimulate("ge2", g, nil) }},
		{Label: "DGL-KE", Paper: []float64{3209.9, 2438.3, 1232.0}, Fitted: "cpu.batch_edges",
			Simulate: func(g int) (sim.MultiGPUReport, error) { return MultiGPUSimulate("dglke", g, nil) }},
		{Label: "PBG", Paper: pbgGPUPaper, Fitted: "the GPU trainer's time per edge",
			Simulate: func(g int) (sim.MultiGPUReport, error) { return PBGGPUSimulate(g) }},
	}
}

// pbgGPUPaper is GE2's table's PBG row (GPU mode, Twitter).
var pbgGPUPaper = []float64{940.0, 603.9, 567.6}

// PBG's GPU mode (sim.SimulatePBGGPU) on the ge2-paper machine:
// PBGGPUPartitions (assumption: GE2 does not give PBG's p; the same 16
// as the ge2 system) and PBGShuffleBW, the rate at which PBG's C++
// helpers permute rows and edges in CPU memory across the machine's 64
// threads (assumption: random 404-byte rows, ~7% of the two sockets'
// 281 GB/s DDR4-2933 peak).
const (
	PBGGPUPartitions = 16
	PBGShuffleBW     = 20e9
)

// pbgGPUConfig is PBG's GPU mode on g GPUs with the given per-edge time.
func pbgGPUConfig(g int, edgeSeconds float64) (sim.PBGGPUConfig, error) {
	prof, err := devices.Preset(MultiGPUProfile)
	if err != nil {
		return sim.PBGGPUConfig{}, err
	}
	ds, err := workload.LookupDataset(multiGPUDataset)
	if err != nil {
		return sim.PBGGPUConfig{}, err
	}
	return sim.PBGGPUConfig{Profile: prof, Dataset: ds, Training: sim.PBGTraining(ds, multiGPUDim), P: PBGGPUPartitions, GPUs: g, EdgeSeconds: edgeSeconds, ShuffleBW: PBGShuffleBW}, nil
}

// PBGGPUEdgeSeconds is the one number fitted for PBG: one GPU's training
// time per edge such that the 1-GPU epoch is GE2's 940.0 s (the model is
// linear in it).
func PBGGPUEdgeSeconds() (float64, error) {
	cfg, err := pbgGPUConfig(1, 0)
	if err != nil {
		return 0, err
	}
	zero, err := sim.SimulatePBGGPU(cfg)
	if err != nil {
		return 0, err
	}
	return (pbgGPUPaper[0] - zero.EpochSeconds) / float64(cfg.Dataset.TrainEdges()), nil
}

// PBGGPUSimulate predicts PBG's GPU-mode Twitter epoch on g GPUs.
func PBGGPUSimulate(g int) (sim.MultiGPUReport, error) {
	t, err := PBGGPUEdgeSeconds()
	if err != nil {
		return sim.MultiGPUReport{}, err
	}
	cfg, err := pbgGPUConfig(g, t)
	if err != nil {
		return sim.MultiGPUReport{}, err
	}
	return sim.SimulatePBGGPU(cfg)
}

// MultiGPUSimulate simulates one Twitter epoch of system on g GPUs of the
// ge2-paper machine; edit, when set, changes the profile first.
func MultiGPUSimulate(system string, g int, edit func(*devices.Profile)) (sim.MultiGPUReport, error) {
	prof, err := devices.Preset(MultiGPUProfile)
	if err != nil {
		return sim.MultiGPUReport{}, err
	}
	if edit != nil {
		edit(&prof)
	}
	ds, err := workload.LookupDataset(multiGPUDataset)
	if err != nil {
		return sim.MultiGPUReport{}, err
	}
	sys, err := sim.LookupSystem(system)
	if err != nil {
		return sim.MultiGPUReport{}, err
	}
	cfg := sim.MultiGPUConfig{System: sys, Profile: prof, Dataset: ds, Training: sim.DefaultTraining(ds, multiGPUDim), GPUs: g, HostBW: MultiGPUHostBW}
	if sys.Partitioned {
		if cfg.Plan, err = orderings.Build(sys.Ordering, MultiGPUPartitions, sys.Capacity, orderings.Belady, 0); err != nil {
			return sim.MultiGPUReport{}, err
		}
	}
	r, err := sim.SimulateMultiGPU(cfg)
	if err != nil {
		return sim.MultiGPUReport{}, fmt.Errorf("multigpu %s on %d GPUs: %w", system, g, err)
	}
	return r, nil
}

// multiGPUBusy is the mean GPU compute share and the busiest PCIe link's
// share (either direction) of the epoch.
func multiGPUBusy(r sim.MultiGPUReport) (gpu, pcie float64) {
	for _, u := range r.PerGPU {
		gpu += u.BusySeconds
		pcie = max(pcie, u.H2DBusySeconds, u.D2HBusySeconds)
	}
	return gpu / float64(len(r.PerGPU)) / r.EpochSeconds, pcie / r.EpochSeconds
}

// MultiGPU compares our multi-GPU epochs with GE2's published Twitter
// figures.
func MultiGPU() (experiments.Result, error) {
	r := experiments.Result{
		Name:  "multigpu",
		Title: "GE2's multi-GPU Twitter epochs (41.6M nodes, 1.46B edges, Dot, d=100) on 1, 2, 4 RTX 3090: ours (ge2-paper machine, sim.SimulateMultiGPU) vs the paper; s = seconds",
		Header: []string{"system", "GPUs", "epoch s (ours)", "epoch s (paper)", "ours ÷ paper",
			"speed-up (ours)", "speed-up (paper)", "GPU busy %", "busiest PCIe link %", "CPU busy %", "host cap bound s", "stall s (mean)", "H2D GB"},
	}
	var chart []experiments.Series
	var notes []string
	for _, s := range multiGPUSeriesList() {
		ours, paper := experiments.Series{Name: s.Label + " (ours)"}, experiments.Series{Name: s.Label + " (paper)"}
		var base float64
		var misses []string
		for i, g := range MultiGPUCounts {
			rep, err := s.Simulate(g)
			if err != nil {
				return experiments.Result{}, err
			}
			if i == 0 {
				base = rep.EpochSeconds
			}
			gpuBusy, pcieBusy := multiGPUBusy(rep)
			var stall float64
			for _, u := range rep.PerGPU {
				stall += u.StallSeconds
			}
			stall /= float64(len(rep.PerGPU))
			cpu := "-"
			if rep.CPUBusySeconds > 0 {
				cpu = legendF(rep.CPUBusySeconds/rep.EpochSeconds*100, 1)
			}
			ratio := rep.EpochSeconds / s.Paper[i]
			if ratio < 0.8 || ratio > 1.2 {
				misses = append(misses, fmt.Sprintf("%d GPUs (%.2f)", g, ratio))
			}
			r.Rows = append(r.Rows, []string{s.Label, strconv.Itoa(g), legendF(rep.EpochSeconds, 1), legendF(s.Paper[i], 1), legendF(ratio, 2),
				legendF(base/rep.EpochSeconds, 2), legendF(s.Paper[0]/s.Paper[i], 2),
				legendF(gpuBusy*100, 1), legendF(pcieBusy*100, 1), cpu, legendF(rep.HostCappedSeconds, 1), legendF(stall, 1), legendF(rep.H2DBytes/1e9, 0)})
			ours.X, ours.Y = append(ours.X, float64(g)), append(ours.Y, rep.EpochSeconds)
			paper.X, paper.Y = append(paper.X, float64(g)), append(paper.Y, s.Paper[i])
		}
		chart = append(chart, ours, paper)
		verdict := "every figure within 20% of the paper's"
		if len(misses) > 0 {
			verdict = "outside 20% (ours ÷ paper): " + strings.Join(misses, ", ")
		}
		notes = append(notes, fmt.Sprintf("%s: fitted %s (one number) so that 1 GPU = %.1f s; 2 and 4 GPUs are predictions; %s.", s.Label, s.Fitted, s.Paper[0], verdict))
	}
	r.Charts = []experiments.Chart{{File: "multigpu-epoch", Title: "Twitter epoch on G RTX 3090 GPUs: ours vs GE2's figures", XLabel: "GPUs", YLabel: "epoch (s)", LogY: true, Series: chart}}

	// Mechanism checks from the simulator's own records.
	ge2At4, err := MultiGPUSimulate("ge2", 4, nil)
	if err != nil {
		return experiments.Result{}, err
	}
	fast, err := MultiGPUSimulate("ge2", 4, func(p *devices.Profile) { p.PCIe.H2D, p.PCIe.D2H = 24e9, 24e9 })
	if err != nil {
		return experiments.Result{}, err
	}
	gpuBusy, pcieBusy := multiGPUBusy(ge2At4)
	moved := ge2At4.H2DBytes + ge2At4.D2HBytes
	notes = append(notes,
		"Machine (devices/presets/ge2-paper.yaml): 4× RTX 3090 24 GB (936 GB/s datasheet), 2× Xeon Gold 6226R (64 threads), 378 GB RAM, as given. The 6226R (Cascade Lake) has PCIe 3.0 lanes only, so each card's x16 link is taken as Gen3, 12 GB/s each way (assumption), not the ~24 GB/s of Gen4; every GPU has its own link and all copies together share a host cap of 40 GB/s (assumption, sim.MultiGPUConfig.HostBW).",
		"Fitted, one number per system: GE2 — the RTX 3090's effective flops, 3.274 TFLOP/s (9% of its 35.6 TFLOP/s fp32 peak), so the ge2 system's 1-GPU epoch (p=16, COVER, batches of 50,000 with 1,000 negatives, 90% of edges trained) is 516.3 s; DGL-KE — the whole machine's cpu.batch_edges, 563.1k edges/s, so the dglke system's 1-GPU epoch is 3209.9 s. gather_bandwidth (48 GB/s) and gpu.batch_edges (50M edges/s) are assumptions.",
		"Model (sim.SimulateMultiGPU): ge2 splits COVER's 20 lines (p=16) into 5 rounds, its parallel classes of 4 disjoint lines, dealt evenly to the GPUs; a partition is owned by one GPU at a time (a load waits for the previous holder's copy back; conflicts counted: 0). dglke deals batches round-robin; each GPU's trainer is synchronous (CPU build → H2D rows → GPU → D2H rows), the CPU shared by all trainers (first come, first served, at the whole machine's rate).",
		fmt.Sprintf("GE2 at 4 GPUs: our GPUs compute %.1f%% of the epoch, the busiest PCIe link is busy %.1f%%, the host cap binds %.1f s; with Gen4 links (24 GB/s) the epoch is %.1f s instead of %.1f s. Nothing but compute limits our scaling, so we predict ~%.1f× at 4 GPUs where GE2 reports %.2f×. Could PCIe or host memory explain GE2's %.1f s? Our 4-GPU epoch moves %.0f GB over PCIe (both directions); for transfers to add the missing %.0f s even with no overlap with compute at all, all four GPUs' copies together would have to crawl at %.1f GB/s, below one Gen3 x16 link — so the miss is not PCIe or host-memory sharing as modelled; GE2's real overheads at 4 GPUs (per-round synchronisation, host-side work) are not in our model.",
			gpuBusy*100, pcieBusy*100, ge2At4.HostCappedSeconds, fast.EpochSeconds, ge2At4.EpochSeconds,
			516.3/ge2At4.EpochSeconds, 516.3/181.5, 181.5, moved/1e9, 181.5-ge2At4.EpochSeconds, moved/1e9/(181.5-ge2At4.EpochSeconds)),
		"DGL-KE: with one CPU shared by every GPU's trainer, our epoch at 2 and 4 GPUs is the CPU's batch construction alone (CPU busy ~100%): the CPU side does not get faster with more GPUs. The paper's 2-GPU figure agrees; its 4-GPU 1232 s is faster than our CPU can build the batches, which says DGL-KE's 1-GPU run left the CPU idle part of the time (each trainer process samples with its own threads, so more GPUs brought more CPU) — a fit at 1 GPU to a whole-machine rate cannot see that.",
	)
	pbg1, err := PBGGPUSimulate(1)
	if err != nil {
		return experiments.Result{}, err
	}
	pbg4, err := PBGGPUSimulate(4)
	if err != nil {
		return experiments.Result{}, err
	}
	edgeT, err := PBGGPUEdgeSeconds()
	if err != nil {
		return experiments.Result{}, err
	}
	// The paper's own figures, split Amdahl's way by its 1- and 2-GPU
	// epochs: a serial part s and a part q that halves.
	q := 2 * (pbgGPUPaper[0] - pbgGPUPaper[1])
	serial := pbgGPUPaper[0] - q
	notes = append(notes,
		fmt.Sprintf("PBG (GPU mode, sim.SimulatePBGGPU): every partition in CPU memory, p = %d (assumption), buckets one after another; per bucket the CPU permutes both partitions' rows into sub-partitions and splits the edges into sub-buckets, the GPUs train G×G sub-buckets in G rounds (GPU i on (i, (i+j) mod G)), copying sub-partitions over their PCIe links with the next one prefetched, and the CPU permutes the rows back — as PBG's GPU trainer does. Fitted: one GPU's time per edge, %.3g s (%.2fM edges/s), so 1 GPU = 940.0 s; assumed: the CPU's permutation rate, %.0f GB/s.", PBGGPUPartitions, edgeT, 1/edgeT/1e6, PBGShuffleBW/1e9),
		fmt.Sprintf("PBG's scaling: the CPU's permutations are %.0f s of our 1-GPU epoch (%.0f%%) and do not shrink with G; at 4 GPUs they are %.0f%% of our %.0f s. The paper's 1- and 2-GPU figures split Amdahl's way give a serial %.0f s and a parallel %.0f s, which would make 4 GPUs %.0f s; the paper's %.1f s is slower still, so PBG's serial share grows with G — the host-side work of feeding more GPU processes (each sub-bucket is a message to a worker process, and the CPU and host memory serve every GPU's copies), which our model leaves out. A permutation rate of %.1f GB/s instead of %.0f would give our model the paper's serial %.0f s.",
			pbg1.CPUBusySeconds, 100*pbg1.CPUBusySeconds/pbg1.EpochSeconds, 100*pbg4.CPUBusySeconds/pbg4.EpochSeconds, pbg4.EpochSeconds,
			serial, q, serial+q/4, pbgGPUPaper[2], PBGShuffleBW/1e9*pbg1.CPUBusySeconds/serial, PBGShuffleBW/1e9, serial),
	)
	r.Notes = notes
	return r, nil
}
