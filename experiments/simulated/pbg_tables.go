package simulated

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "pbg-table3", Description: "PyTorch-BigGraph Table 3: full Freebase, 10 epochs — one machine with 1/4/8/16 partitions and 2/4/8 machines with 2M partitions: time, speed-up and peak memory (pbg-paper machine, CPU trainer)", Run: PBGTable3})
	experiments.Register(experiments.Experiment{Name: "pbg-table4", Description: "PyTorch-BigGraph Table 4: Twitter, 10 epochs — one machine with 1/4/8/16 partitions and 2/4/8 machines with 2M partitions: time, speed-up and peak memory (pbg-paper machine, CPU trainer)", Run: PBGTable4})
}

// PBGProfile is the machine PBG's tables ran on (devices/presets).
const PBGProfile = "pbg-paper"

// pbgCell is one cell pair of PBG Table 3 or 4: a setting and the paper's
// figures (zero hours: the paper leaves the cell empty).
type pbgCell struct {
	machines, p int
	mrr, hits10 float64
	hours, memG float64
}

// pbgTable3Paper is PBG Table 3: full Freebase, d=100, 10 epochs; left
// one machine, right 2M partitions on M machines (the 1-machine row of the
// right half is the left's p = 1 row).
var pbgTable3Paper = []pbgCell{
	{1, 1, 0.170, 0.285, 30, 59.6},
	{1, 4, 0.174, 0.286, 31, 30.4},
	{1, 8, 0.172, 0.288, 33, 15.5},
	{1, 16, 0.174, 0.290, 40, 6.8},
	{2, 4, 0.170, 0.280, 23, 64.4},
	{4, 8, 0.171, 0.285, 13, 30.5},
	{8, 16, 0.163, 0.276, 7.7, 15.0},
}

// pbgTable4Paper is PBG Table 4: Twitter, 10 epochs. The 2-machine cell
// is empty in the paper (MRR and Hits@10 only).
var pbgTable4Paper = []pbgCell{
	{1, 1, 0.136, 0.233, 18.0, 95.1},
	{1, 4, 0.137, 0.235, 16.8, 43.4},
	{1, 8, 0.137, 0.237, 19.1, 20.7},
	{1, 16, 0.136, 0.235, 23.8, 10.2},
	{2, 4, 0.137, 0.235, 0, 0},
	{4, 8, 0.137, 0.235, 6.5, 40.5},
	{8, 16, 0.137, 0.235, 3.4, 20.4},
}

// PBGTable3 regenerates PBG Table 3 (both halves).
func PBGTable3() (experiments.Result, error) {
	return pbgTable("pbg-table3", "freebase", "PyTorch-BigGraph Table 3: full Freebase (121M nodes, 2.73B edges, 25,291 relations), ComplEx, d=100, 10 epochs", pbgTable3Paper)
}

// PBGTable4 regenerates PBG Table 4 (both halves).
func PBGTable4() (experiments.Result, error) {
	return pbgTable("pbg-table4", "twitter", "PyTorch-BigGraph Table 4: Twitter (41.6M nodes, 1.46B edges, one relation), d=100, 10 epochs", pbgTable4Paper)
}

// PBGPoint simulates one cell: 10 epochs of dataset on the pbg-paper
// machine with p partitions on m machines, at dimension d, with the
// machine's disk and network rates optionally replaced (0: the preset's).
func PBGPoint(dataset string, m, p, d int, moveRate float64) (sim.PBGReport, error) {
	return pbgPoint(dataset, m, p, d, moveRate, 1)
}

// pbgPoint is PBGPoint with the trainer's compute rates scaled by
// compute (1: the preset's).
func pbgPoint(dataset string, m, p, d int, moveRate, compute float64) (sim.PBGReport, error) {
	prof, err := devices.Preset(PBGProfile)
	if err != nil {
		return sim.PBGReport{}, err
	}
	if compute != 1 {
		prof = prof.ScaleCompute(compute)
	}
	if moveRate > 0 {
		prof.Disk.Read, prof.Disk.Write = devices.Bandwidth(moveRate), devices.Bandwidth(moveRate)
		prof.Network.Bandwidth = devices.Bandwidth(moveRate)
	}
	ds, err := workload.LookupDataset(dataset)
	if err != nil {
		return sim.PBGReport{}, err
	}
	return sim.SimulatePBG(sim.PBGConfig{Profile: prof, Dataset: ds, Training: sim.PBGTraining(ds, d), P: p, Machines: m})
}

// impliedMoveRate is the rate at which partitions (and edges) would have
// to move — the disk on one machine, each machine's link on several — for
// our 10-epoch time to equal the paper's: bisection in log space between
// 10 MB/s and 100 GB/s. It is the single thing the model would have to
// change to meet the cell; it is reported, never used as a prediction.
func impliedMoveRate(dataset string, m, p int, hours float64) (float64, error) {
	return crossing(10e6, 100e9, hours, func(rate float64) (sim.PBGReport, error) { return PBGPoint(dataset, m, p, 100, rate) })
}

// impliedCompute is the share of the one-machine training rate at which
// the trainers would have to train for our time to equal the paper's,
// everything else unchanged (bisection in log space between 0.05 and 2);
// an explanation, never a prediction.
func impliedCompute(dataset string, m, p int, hours float64) (float64, error) {
	return crossing(0.05, 2, hours, func(f float64) (sim.PBGReport, error) { return pbgPoint(dataset, m, p, 100, 0, f) })
}

// crossing finds, by bisection in log space over [lo, hi], the value x
// at which the 10-epoch time of simulate(x) — falling as x grows —
// crosses hours. The time jumps where the lock server's choices change,
// so the answer is the crossing, not an exact match; NaN when no x in the
// range reaches it.
func crossing(lo, hi, hours float64, simulate func(x float64) (sim.PBGReport, error)) (float64, error) {
	a, b := math.Log(lo), math.Log(hi)
	for range 40 {
		mid := (a + b) / 2
		r, err := simulate(math.Exp(mid))
		if err != nil {
			return 0, err
		}
		if r.Seconds(10)/3600 > hours {
			a = mid // too slow: more of x
		} else {
			b = mid
		}
	}
	if b >= math.Log(hi)-0.01 || a <= math.Log(lo)+0.01 {
		return math.NaN(), nil
	}
	return math.Exp(b), nil
}

func pbgTable(name, dataset, title string, paper []pbgCell) (experiments.Result, error) {
	r := experiments.Result{
		Name:  name,
		Title: title + "; ours: the pbg-paper machine (CPU trainer, 40 HOGWILD threads), h = hours for 10 epochs, GB = 10^9 B",
		Header: []string{"machines", "p", "10 epochs h (ours)", "10 epochs h (paper)", "ours ÷ paper",
			"speed-up (ours)", "speed-up (paper)", "speed-up ours ÷ paper",
			"peak memory GB (ours)", "peak memory GB (paper)", "memory ours ÷ paper",
			"occupancy", "wait for bucket s", "transfer s", "partition loads", "network GB",
			"move rate to match MB/s", "compute to match (× one machine)", "MRR (paper)", "Hits@10 (paper)"},
	}
	var base float64
	tOne, tOnePaper := experiments.Series{Name: "ours"}, experiments.Series{Name: "paper"}
	tMany, tManyPaper := experiments.Series{Name: "ours"}, experiments.Series{Name: "paper"}
	mOurs, mPaper := experiments.Series{Name: "ours, one machine"}, experiments.Series{Name: "paper, one machine"}
	mOursD, mPaperD := experiments.Series{Name: "ours, 2M partitions on M machines"}, experiments.Series{Name: "paper, 2M partitions on M machines"}
	var warn []string
	var implied []string
	var gots []pbgGot
	var computes []float64
	for _, cell := range paper {
		rep, err := PBGPoint(dataset, cell.machines, cell.p, 100, 0)
		if err != nil {
			return experiments.Result{}, fmt.Errorf("%s machines=%d p=%d: %w", name, cell.machines, cell.p, err)
		}
		h := rep.Seconds(10) / 3600
		if cell.machines == 1 && cell.p == 1 {
			base = h
		}
		st := rep.Steady()
		var occ, wait, xfer, loads float64
		for _, tr := range st.Trainers {
			occ += tr.Occupancy
			wait += tr.WaitBucketSeconds
			xfer += tr.TransferSeconds
			loads += float64(tr.Loads)
		}
		n := float64(len(st.Trainers))
		var train float64
		for _, tr := range st.Trainers {
			train += tr.TrainSeconds
		}
		gots = append(gots, pbgGot{cell: cell, h: h, memG: sim.GB(rep.PeakMemoryBytes), train: train / n, others: (wait + xfer) / n, loads: loads})
		paperH, paperRatio, paperSpeed, speedRatio, memRatio, paperMem := "—", "—", "—", "—", "—", "—"
		rate, compute := "—", "—"
		if cell.hours > 0 && cell.machines > 1 {
			f, err := impliedCompute(dataset, cell.machines, cell.p, cell.hours)
			if err != nil {
				return experiments.Result{}, err
			}
			if !math.IsNaN(f) {
				compute = legendF(f, 2)
				computes = append(computes, f)
			}
		}
		if cell.hours > 0 {
			paperH = legendF(cell.hours, 1)
			paperRatio = legendF(h/cell.hours, 2)
			ps := paper[0].hours / cell.hours
			paperSpeed = legendF(ps, 2)
			speedRatio = legendF(base/h/ps, 2)
			if !(cell.machines == 1 && cell.p == 1) {
				ir, err := impliedMoveRate(dataset, cell.machines, cell.p, cell.hours)
				if err != nil {
					return experiments.Result{}, err
				}
				if !math.IsNaN(ir) {
					rate = legendF(ir/1e6, 0)
					implied = append(implied, fmt.Sprintf("%d×%d: %.0f", cell.machines, cell.p, ir/1e6))
				}
			}
		}
		if cell.memG > 0 {
			paperMem = legendF(cell.memG, 1)
			memRatio = legendF(sim.GB(rep.PeakMemoryBytes)/cell.memG, 2)
		}
		r.Rows = append(r.Rows, []string{
			strconv.Itoa(cell.machines), strconv.Itoa(cell.p), legendF(h, 1), paperH, paperRatio,
			legendF(base/h, 2), paperSpeed, speedRatio,
			legendF(sim.GB(rep.PeakMemoryBytes), 1), paperMem, memRatio,
			legendF(occ/n, 2), legendF(wait/n, 0), legendF(xfer/n, 0), legendF(loads, 0), legendF(st.NetworkBytes/1e9, 0),
			rate, compute, legendF(cell.mrr, 3), legendF(cell.hits10, 3),
		})
		x := float64(cell.p)
		if cell.machines == 1 {
			tOne.X, tOne.Y = append(tOne.X, x), append(tOne.Y, h)
			tOnePaper.X, tOnePaper.Y = append(tOnePaper.X, x), append(tOnePaper.Y, cell.hours)
			mOurs.X, mOurs.Y = append(mOurs.X, x), append(mOurs.Y, sim.GB(rep.PeakMemoryBytes))
			mPaper.X, mPaper.Y = append(mPaper.X, x), append(mPaper.Y, cell.memG)
		}
		if cell.machines > 1 || cell.p == 1 {
			mx := float64(cell.machines)
			tMany.X, tMany.Y = append(tMany.X, mx), append(tMany.Y, h)
			if cell.hours > 0 {
				tManyPaper.X, tManyPaper.Y = append(tManyPaper.X, mx), append(tManyPaper.Y, cell.hours)
			}
			if cell.machines > 1 {
				mOursD.X, mOursD.Y = append(mOursD.X, x), append(mOursD.Y, sim.GB(rep.PeakMemoryBytes))
				if cell.memG > 0 {
					mPaperD.X, mPaperD.Y = append(mPaperD.X, x), append(mPaperD.Y, cell.memG)
				}
			}
		}
		for _, w := range rep.Warnings {
			warn = append(warn, fmt.Sprintf("%d machines, p=%d: %s", cell.machines, cell.p, w))
		}
	}
	r.Charts = []experiments.Chart{
		{File: name + "-one-machine", Title: "One machine: 10 epochs against partitions", XLabel: "partitions p", YLabel: "hours for 10 epochs", Series: []experiments.Series{tOne, tOnePaper}},
		{File: name + "-machines", Title: "2M partitions on M machines: 10 epochs", XLabel: "machines M", YLabel: "hours for 10 epochs", LogY: true, Series: []experiments.Series{tMany, tManyPaper}},
		{File: name + "-memory", Title: "Peak memory per machine", XLabel: "partitions p", YLabel: "GB", LogY: true, Series: []experiments.Series{mOurs, mPaper, mOursD, mPaperD}},
	}
	prof, err := devices.Preset(PBGProfile)
	if err != nil {
		return experiments.Result{}, err
	}
	ds, err := workload.LookupDataset(dataset)
	if err != nil {
		return experiments.Result{}, err
	}
	t := sim.PBGTraining(ds, 100)
	r.Notes = append([]string{
		fmt.Sprintf("Machine: %s (devices/presets/%s.yaml); every figure there states its source. Fitted: only the CPU trainer's edge rate, to Table 3's Freebase p = 1 row (30 h); every other cell of both tables is predicted. Assumed (PBG does not state them): the disk (%.0f MB/s), the shared filesystem (%.0f GB/s), the parameter sync interval (%v).",
			prof.Name, prof.Name, float64(prof.Disk.Read)/1e6, float64(prof.Network.SharedFS)/1e9, prof.Network.SyncInterval),
		fmt.Sprintf("Training: PBG's default shape (batches of %d edges in chunks of %d, %d negatives a chunk), d = 100, row-wise Adagrad (d + 1 floats a row); edges stored as %d B each; 10 epochs = the first epoch (the lock server's initialisation rule) + 9 × the second.", t.Batch, t.Chunk(), t.Negatives, sim.EdgeBytes(ds)),
		"One machine (machines = 1): PBG's inside-out bucket order, the trainer holds its bucket's two partitions, saves those the next bucket does not use to disk and loads the missing ones, then the bucket's edges — one after another, as PBG's trainer loop does. p = 1: the model is one unpartitioned table kept in memory and written at each pass's checkpoint; PBG's max_edges_per_chunk (10^9) splits an epoch into passes when a bucket has more edges.",
		"Several machines: one trainer per machine, buckets from the lock server (orderings/lockserver, PBG §4.2), partition i on machine i mod M's partition server, moved over 1 GB/s links shared max-min fairly; edges from the shared filesystem; a trainer with no bucket saves and releases its partitions and asks again every second. Occupancy is training ÷ epoch; wait for bucket includes the wait at the epoch's barrier; transfer s and partition loads are per trainer (mean) and per epoch (sum); network GB includes the parameter sync.",
		"Peak memory (ours) is the largest machine's: the trainer's partitions and the bucket's edges, plus, on several machines, its partition server's partitions and its share of the shared parameters; the paper reports peak RSS.",
		"Move rate to match: the rate at which partitions and edges would have to move (the disk on one machine, each machine's link on several) for our time to equal the paper's, everything else unchanged. It is an explanation, not a prediction. Here: " + strings.Join(implied, ", ") + " MB/s.",
		"Compute to match (several machines): the share of the one-machine training rate at which every trainer would have to train for our time to equal the paper's, everything else unchanged; an explanation, not a prediction.",
	}, pbgSummary(dataset, gots, computes)...)
	r.Notes = append(r.Notes, warn...)
	return r, nil
}

// pbgGot is one simulated cell beside the paper's.
type pbgGot struct {
	cell          pbgCell
	h, memG       float64
	train, others float64 // per trainer per epoch: training, and waits plus transfers
	loads         float64
}

// pbgSummary states, with the numbers, how the table compares: the cells
// within the bounds, and what the model leaves out where not.
func pbgSummary(dataset string, gs []pbgGot, computes []float64) []string {
	var notes []string
	var tIn, tN, sIn, sN, mIn, mN int
	base, paperBase := gs[0].h, gs[0].cell.hours
	for _, g := range gs {
		if g.cell.hours > 0 {
			tN++
			if math.Abs(g.h/g.cell.hours-1) <= 0.2 {
				tIn++
			}
			if g.cell.machines > 1 {
				sN++
				if math.Abs((base/g.h)/(paperBase/g.cell.hours)-1) <= 0.15 {
					sIn++
				}
			}
		}
		if g.cell.memG > 0 {
			mN++
			if math.Abs(g.memG/g.cell.memG-1) <= 0.2 {
				mIn++
			}
		}
	}
	notes = append(notes, fmt.Sprintf("Within bounds: %d of %d times within 20%% of the paper's, %d of %d speed-ups (1 machine ÷ M machines) within 15%%, %d of %d peak memories within 20%%.", tIn, tN, sIn, sN, mIn, mN))
	// One machine: the paper's cost of partitioning, per epoch over p = 1,
	// against ours, and per partition load.
	var one []string
	for _, g := range gs {
		if g.cell.machines == 1 && g.cell.p > 1 && g.loads > 0 {
			paperExtra := (g.cell.hours - paperBase) * 360 // s per epoch
			ours := (g.h - base) * 360
			one = append(one, fmt.Sprintf("p = %d: paper %+.0f s, ours %+.0f s, %.0f loads (paper's extra ÷ loads %.0f s)", g.cell.p, paperExtra, ours, g.loads, paperExtra/g.loads))
		}
	}
	notes = append(notes, "One machine, what partitioning costs per epoch over p = 1: "+strings.Join(one, ", ")+". Our swaps move partitions at the assumed disk's speed; where the paper's cost per load stays high as partitions shrink, the missing cost is per swap rather than per byte (PBG writes each partition with its optimizer state through its checkpoint storage and rebuilds the optimizer on each load), which the model leaves out.")
	var many []string
	for _, g := range gs {
		if g.cell.machines > 1 && g.cell.hours > 0 {
			paperEpoch := g.cell.hours * 360
			many = append(many, fmt.Sprintf("%d machines: paper %.0f s an epoch, of which ours trains %.0f s and waits or moves data %.0f s — %.0f s unaccounted", g.cell.machines, paperEpoch, g.train, g.others, paperEpoch-g.train-g.others))
		}
	}
	if len(many) > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, f := range computes {
			lo, hi = min(lo, f), max(hi, f)
		}
		notes = append(notes, "Several machines, per trainer: "+strings.Join(many, "; ")+". The lock server's occupancy and the partition traffic at 1 GB/s account for little of the paper's overhead, and no one partition-move rate explains every row (the move-rate column differs from row to row).")
		if len(computes) > 0 {
			notes = append(notes, fmt.Sprintf("One factor does explain every several-machine row: trainers training at %.2f–%.2f of the one-machine rate (the compute-to-match column). So in the paper's distributed runs each machine trained about a third slower than the one-machine run did, beyond any I/O or waiting. What the model leaves out and could cause it: each machine also runs a partition server and a parameter-server shard beside its 40 HOGWILD threads, torch.distributed's TCP transfers cost CPU on both ends, and PBG §5.4.2 trained the several-machine runs with one consistent set of hyper-parameters rather than each single-machine run's best; the paper gives no figure to separate them.", lo, hi))
		}
	}
	if dataset == "twitter" && len(gs) > 1 && gs[1].cell.hours < gs[0].cell.hours {
		notes = append(notes, fmt.Sprintf("The paper's Twitter run with p = %d (%.1f h) is %.0f%% faster than its p = 1 run (%.1f h) although it does strictly more work: the paper's own run-to-run spread is at least that large.",
			gs[1].cell.p, gs[1].cell.hours, 100*(1-gs[1].cell.hours/gs[0].cell.hours), gs[0].cell.hours))
	}
	if dataset == "twitter" {
		best, bestErr := 0, math.Inf(1)
		var bestRatios []string
		for d := 100; d <= 800; d += 50 {
			worst := 0.0
			var ratios []string
			for _, g := range gs {
				if g.cell.memG == 0 {
					continue
				}
				rep, err := PBGPoint(dataset, g.cell.machines, g.cell.p, d, 0)
				if err != nil {
					return notes
				}
				q := sim.GB(rep.PeakMemoryBytes) / g.cell.memG
				worst = max(worst, math.Abs(math.Log(q)))
				ratios = append(ratios, fmt.Sprintf("%d×%d %.2f", g.cell.machines, g.cell.p, q))
			}
			if worst < bestErr {
				best, bestErr, bestRatios = d, worst, ratios
			}
		}
		var times []string
		var base500 float64
		var within, withinN, speedIn, speedN int
		for _, g := range gs {
			rep, err := PBGPoint(dataset, g.cell.machines, g.cell.p, best, 0)
			if err != nil {
				return notes
			}
			h := rep.Seconds(10) / 3600
			if g.cell.machines == 1 && g.cell.p == 1 {
				base500 = h
			}
			if g.cell.hours > 0 {
				withinN++
				if math.Abs(h/g.cell.hours-1) <= 0.2 {
					within++
				}
				if g.cell.machines > 1 {
					speedN++
					if math.Abs((base500/h)/(gs[0].cell.hours/g.cell.hours)-1) <= 0.15 {
						speedIn++
					}
				}
				times = append(times, fmt.Sprintf("%d×%d %.1f h (%.2f; speed-up %.2f against %.2f)", g.cell.machines, g.cell.p, h, h/g.cell.hours, base500/h, gs[0].cell.hours/g.cell.hours))
			} else {
				times = append(times, fmt.Sprintf("%d×%d %.1f h (no paper figure)", g.cell.machines, g.cell.p, h))
			}
		}
		notes = append(notes, fmt.Sprintf("Twitter's memory: at d = 100 our peaks are 0.21–0.29 of the paper's, while Freebase's are 0.82–1.15. The paper does not state Twitter's dimension; its peaks fall as 1/p like the parameters do, and at d = %d every one of ours is within %.0f%% of it (ours ÷ paper: %s), so the paper's Twitter runs most likely used a larger d than the d = 100 we simulate. We keep d = 100 (Marius's and GE2's Twitter setting) and report the miss.", best, (math.Exp(bestErr)-1)*100, strings.Join(bestRatios, ", ")))
		notes = append(notes, fmt.Sprintf("Twitter at d = %d, everything else as above (an explanation, not our prediction; ours ÷ paper in brackets): %s — %d of %d times within 20%% and %d of %d speed-ups within 15%%, with the model fitted on Freebase's p = 1 row alone, which supports the inference.", best, strings.Join(times, ", "), within, withinN, speedIn, speedN))
	}
	return notes
}
