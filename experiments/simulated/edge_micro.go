package simulated

import (
	"fmt"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "edge-micro-fig12", Description: "Edge-batch micro-batching after Betty Figure 12 / Table 6: peak memory and epoch time as micro-batches grow — Marius and DGL-KE on p3.2xlarge, Freebase86m, d = 100…800 (simulated)", Run: EdgeMicroFig12})
}

// edgeMicroTable6 is Betty Table 6 (micro-batch columns): 2-layer GraphSAGE
// with the mean aggregator on ogbn-products — first-layer input nodes,
// training time per epoch (s) and CUDA memory (GB) by number of batches.
var edgeMicroTable6 = map[int]struct{ inputs, seconds, gb float64 }{
	1: {1_829_066, 0.49, 6.38}, 2: {2_277_172, 0.5841, 3.56}, 4: {2_964_874, 0.7551, 2.12},
	8: {4_061_037, 0.8535, 1.27}, 16: {4_980_601, 1.2219, 0.71}, 32: {6_335_635, 1.6699, 0.46}, 64: {7_820_693, 2.5511, 0.29},
}

// gb formats bytes as GB (10⁹ bytes), as edge-micro-fig16 does.
func gb(b int64) string { return fmt.Sprintf("%.3f", float64(b)/1e9) }

// EdgeMicroFig12 simulates one epoch with every batch split into 1…64
// micro-batches: the peak GPU memory of a (micro-)batch and the epoch.
func EdgeMicroFig12() (experiments.Result, error) {
	prof, err := devices.Preset("p3.2xlarge")
	if err != nil {
		return experiments.Result{}, err
	}
	ds, err := workload.LookupDataset("freebase86m")
	if err != nil {
		return experiments.Result{}, err
	}
	r := experiments.Result{Name: "edge-micro-fig12", Title: "Edge-batch micro-batching after Betty Fig. 12 / Table 6: peak memory and epoch time against micro-batches (Freebase86m, p3.2xlarge, simulated)",
		Header: []string{"system", "d", "micro-batches", "peak GB", "epoch min", "extra transfer GB", "duplicated rows", "paper GB", "paper s"}}
	ks := []int{1, 2, 4, 8, 16, 32, 64}
	var charts []experiments.Chart
	for _, name := range []string{"marius", "dglke"} {
		sys, err := sim.LookupSystem(name)
		if err != nil {
			return r, err
		}
		mem := experiments.Chart{File: "edge-micro-fig12-" + name + "-memory", Title: name + ": peak batch memory", XLabel: "micro-batches", YLabel: "GB"}
		ep := experiments.Chart{File: "edge-micro-fig12-" + name + "-epoch", Title: name + ": epoch", XLabel: "micro-batches", YLabel: "minutes"}
		for _, d := range experiments.EdgeMicroDims {
			ms := experiments.Series{Name: "d=" + strconv.Itoa(d)}
			es := experiments.Series{Name: ms.Name}
			for _, k := range ks {
				sc := sim.Scenario{System: sys, Profile: prof, Dataset: ds, Training: sim.DefaultTraining(ds, d), P: 32, C: 8, Policy: orderings.Belady}
				cfg, err := sc.Config()
				if err != nil {
					return r, err
				}
				cfg.MicroBatches = k
				mp, err := cfg.Micro()
				if err != nil {
					return r, err
				}
				rep, err := sim.Run(cfg)
				if err != nil {
					return r, err
				}
				p := edgeMicroTable6[k]
				r.Rows = append(r.Rows, []string{name, strconv.Itoa(d), strconv.Itoa(k), gb(mp.Peak), fmt.Sprintf("%.1f", rep.EpochSeconds/60),
					gb(rep.ExtraTransferBytes), strconv.FormatInt(rep.DuplicatedRows, 10), fmt.Sprintf("%.2f", p.gb), fmt.Sprintf("%.2f", p.seconds)})
				ms.X, ms.Y = append(ms.X, float64(k)), append(ms.Y, float64(mp.Peak)/1e9)
				es.X, es.Y = append(es.X, float64(k)), append(es.Y, rep.EpochSeconds/60)
			}
			mem.Series = append(mem.Series, ms)
			ep.Series = append(ep.Series, es)
		}
		charts = append(charts, mem, ep)
	}
	r.Charts = charts
	r.Notes = []string{
		"Paper columns: Betty Table 6 (2-layer GraphSAGE, mean aggregator, ogbn-products): CUDA memory and time per epoch by number of micro-batches; their memory falls 22× from 1 to 64 micro-batches while time grows 5.2×, from redundant input nodes (4.3× at 64) and lower GPU utilisation.",
		"Ours: peak memory falls with micro-batches until the per-chunk working sets dominate, and the epoch grows only by moving duplicated rows (rows drawn uniformly from the bucket's two partitions: few repeat, so little is added). Marius is disk-bound at p = 32, so even that is hidden; DGL-KE's synchronous batches show it. The simulator has no per-kernel launch or utilisation cost, which is most of the paper's time growth: our epoch times are a lower bound for many micro-batches.",
	}
	return r, nil
}
