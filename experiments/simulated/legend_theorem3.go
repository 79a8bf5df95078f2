package simulated

import (
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	experiments.Register(experiments.Experiment{Name: "legend-theorem3", Description: "Legend Theorem 3: when prefetching hides all I/O, swept over graph density |E|/|V|² on a synthetic graph (Legend system, legend-a100, d=100)", Run: LegendTheorem3})
}

// Theorem 3's setting (Legend §4): a GPU buffer of M bytes holding three
// partitions, d = 100, and the synthetic graph's node count, chosen so that
// the theorem's minimum n = 24·|V|·d ÷ M is a whole number (8).
const (
	Theorem3Buffer = 15e9 // M, bytes (§4: M = 15G)
	Theorem3Nodes  = 50_000_000
	Theorem3Dim    = 100
)

// Theorem3Densities are the swept |E|/|V|², about two decades around the
// threshold; LegendTheorem3 adds points at 0.9 and 1.1 times it.
var Theorem3Densities = []float64{3e-8, 5e-8, 1e-7, 2e-7, 3e-7, 5e-7, 7e-7, 1e-6, 2e-6, 3e-6}

// Theorem3Threshold is the density above which Theorem 3 says Legend's
// prefetching hides every exchange:
//
//	|E| ÷ |V|² ≥ 96·d²·(w + r) ÷ (M·w·r·t)
//
// with d the dimension, M the GPU buffer (bytes), w and r the SSD↔GPU write
// and read bandwidths (bytes/s) and t the compute time per edge (s). It
// follows from 2·t·|E|/n² ≥ 2P/w + 2P/r (two buckets cover the write and
// read of a partition of 2P bytes: embeddings plus optimizer state) with
// P = M/6 (three partitions of 2P fill M) and n = 4·|V|·d ÷ P = 24·|V|·d ÷ M.
func Theorem3Threshold(d int, m, w, r, t float64) float64 {
	return 96 * float64(d) * float64(d) * (w + r) / (m * w * r * t)
}

// Theorem3Partitions is the theorem's minimum partition count
// n = 24·|V|·d ÷ M (rounded up).
func Theorem3Partitions(nodes int64, d int, m float64) int {
	return int(math.Ceil(24 * float64(nodes) * float64(d) / m))
}

// Theorem3Point is one simulated density.
type Theorem3Point struct {
	Density float64
	Report  report.Report
	// PerEdge is ComputeSeconds ÷ training edges (the theorem's t).
	PerEdge float64
	// Floor is the stall no density removes: reading the partitions the
	// first bucket needs, and every exchange whose window holds no bucket.
	Floor float64
	// Model is Σ over loads of max(0, transfer − window × bucket time).
	Model float64
}

func theorem3Dataset(density float64) workload.Dataset {
	edges := int64(math.Round(density * float64(Theorem3Nodes) * float64(Theorem3Nodes)))
	return workload.Dataset{Name: fmt.Sprintf("synthetic-%.0e", density), Nodes: Theorem3Nodes, Edges: edges, Relations: 1, TrainFraction: 1, Model: workload.Dot}
}

// LegendTheorem3Point simulates the Legend system on the synthetic graph of
// the given density with p = Theorem3Partitions and Legend's order.
func LegendTheorem3Point(density float64) (Theorem3Point, error) {
	prof, err := devices.Preset(LegendProfile)
	if err != nil {
		return Theorem3Point{}, err
	}
	ds := theorem3Dataset(density)
	p := Theorem3Partitions(Theorem3Nodes, Theorem3Dim, Theorem3Buffer)
	tr := sim.DefaultTraining(ds, Theorem3Dim)
	rep, err := legendSimulateDataset(LegendCase{Dataset: ds.Name, P: p, Ordering: "legend"}, ds, tr)
	if err != nil {
		return Theorem3Point{}, err
	}
	pt := Theorem3Point{Density: density, Report: rep, PerEdge: rep.ComputeSeconds / float64(ds.TrainEdges())}
	pl, err := orderings.Build("legend", p, 3, orderings.Belady, 0)
	if err != nil {
		return Theorem3Point{}, err
	}
	lat := float64(prof.Disk.Latency) / 1e9
	pb := float64(rep.PartitionBytes)
	read := lat + pb/float64(prof.SSDToGPU.Read)
	exchange := read + lat + pb/float64(prof.SSDToGPU.Write)
	bucket := rep.ComputeSeconds / float64(p*p)
	for _, l := range pl.Loads {
		cost := read
		if l.Evicts != orderings.None {
			cost = exchange
		}
		if l.Window() == 0 {
			pt.Floor += cost
		}
		pt.Model += math.Max(0, cost-float64(l.Window())*bucket)
	}
	return pt, nil
}

// LegendTheorem3Sweep simulates every density of the sweep (the fixed grid
// plus 0.9 and 1.1 times the threshold from the measured t) and returns the
// points in increasing density and the threshold.
func LegendTheorem3Sweep() ([]Theorem3Point, float64, error) {
	prof, err := devices.Preset(LegendProfile)
	if err != nil {
		return nil, 0, err
	}
	ref, err := LegendTheorem3Point(1e-6)
	if err != nil {
		return nil, 0, err
	}
	theta := Theorem3Threshold(Theorem3Dim, Theorem3Buffer, float64(prof.SSDToGPU.Write), float64(prof.SSDToGPU.Read), ref.PerEdge)
	grid := append(append([]float64{}, Theorem3Densities...), 0.9*theta, 1.1*theta)
	sort.Float64s(grid)
	pts := make([]Theorem3Point, 0, len(grid))
	for _, d := range grid {
		pt, err := LegendTheorem3Point(d)
		if err != nil {
			return nil, 0, err
		}
		pts = append(pts, pt)
	}
	return pts, theta, nil
}

// LegendTheorem3 sweeps density and sets the simulated stall beside
// Theorem 3's threshold.
func LegendTheorem3() (experiments.Result, error) {
	prof, err := devices.Preset(LegendProfile)
	if err != nil {
		return experiments.Result{}, err
	}
	pts, theta, err := LegendTheorem3Sweep()
	if err != nil {
		return experiments.Result{}, fmt.Errorf("legend-theorem3: %w", err)
	}
	p := Theorem3Partitions(Theorem3Nodes, Theorem3Dim, Theorem3Buffer)
	w, rd := float64(prof.SSDToGPU.Write), float64(prof.SSDToGPU.Read)
	pb := float64(pts[0].Report.PartitionBytes)
	exchange := pb/w + pb/rd
	r := experiments.Result{
		Name: "legend-theorem3",
		Title: fmt.Sprintf("Legend Theorem 3: stall vs density |E|/|V|², synthetic graph |V| = %dM, d = %d, Dot, p = %d, buffer 3 × %.1f GB (legend-a100); s = seconds",
			Theorem3Nodes/1_000_000, Theorem3Dim, p, pb/1e9),
		Header: []string{"density |E|/|V|²", "÷ threshold", "edges M", "t ns/edge", "2-bucket compute s", "exchange s", "covered (theorem)",
			"epoch s", "compute s", "stall s", "stall ÷ epoch", "floor s", "stall − floor s", "per-exchange model s"},
	}
	st := experiments.Series{Name: "stall"}
	res := experiments.Series{Name: "stall − floor"}
	fl := experiments.Series{Name: "floor (fill + window-0 exchanges)"}
	ratio := experiments.Series{Name: "stall ÷ epoch"}
	vanish := math.NaN()
	for i, pt := range pts {
		rep := pt.Report
		two := 2 * rep.ComputeSeconds / float64(p*p)
		covered := "no"
		if pt.Density >= theta {
			covered = "yes"
		}
		resid := rep.StallSeconds - pt.Floor
		r.Rows = append(r.Rows, []string{
			strconv.FormatFloat(pt.Density, 'e', 2, 64), legendF(pt.Density/theta, 2),
			legendF(float64(theorem3Dataset(pt.Density).Edges)/1e6, 0), legendF(pt.PerEdge*1e9, 1),
			legendF(two, 2), legendF(exchange, 2), covered,
			legendF(rep.EpochSeconds, 1), legendF(rep.ComputeSeconds, 1), legendF(rep.StallSeconds, 2),
			legendF(rep.StallSeconds/rep.EpochSeconds, 4), legendF(pt.Floor, 2), legendF(resid, 2), legendF(pt.Model, 2),
		})
		x := math.Log10(pt.Density)
		for _, s := range []struct {
			s *experiments.Series
			y float64
		}{{&st, rep.StallSeconds}, {&res, math.Max(resid, 0)}, {&fl, pt.Floor}, {&ratio, rep.StallSeconds / rep.EpochSeconds}} {
			s.s.X = append(s.s.X, x)
			s.s.Y = append(s.s.Y, s.y)
		}
		if math.IsNaN(vanish) && resid < 0.01 {
			vanish = pt.Density
			for _, q := range pts[i:] {
				if q.Report.StallSeconds-q.Floor >= 0.01 {
					vanish = math.NaN()
				}
			}
		}
	}
	r.Charts = []experiments.Chart{
		{File: "legend-theorem3-stall", Title: fmt.Sprintf("Stall vs density (Theorem 3 threshold %.2e: log10 = %.2f)", theta, math.Log10(theta)),
			XLabel: "log10 |E|/|V|²", YLabel: "stall (s)", Series: []experiments.Series{st, fl, res}},
		{File: "legend-theorem3-ratio", Title: "Stall ÷ epoch vs density",
			XLabel: "log10 |E|/|V|²", YLabel: "stall ÷ epoch", Series: []experiments.Series{ratio}},
	}
	ref := pts[len(pts)-1]
	paperTheta := Theorem3Threshold(100, 15e9, 2e9, 3e9, 1e-7)
	tw, _ := workload.LookupDataset("twitter")
	fm, _ := workload.LookupDataset("freebase86m")
	twD := float64(tw.Edges) / (float64(tw.Nodes) * float64(tw.Nodes))
	fmD := float64(fm.TrainEdges()) / (float64(fm.Nodes) * float64(fm.Nodes))
	vanishNote := "In our sweep the stall beyond the floor never falls below 0.01 s."
	if !math.IsNaN(vanish) {
		vanishNote = fmt.Sprintf("The simulated stall beyond the floor is below 0.01 s from density %.2e (%.2f × the threshold) on, so it vanishes where the theorem says, within the grid's resolution.", vanish, vanish/theta)
	}
	r.Notes = []string{
		"Theorem 3 (Legend §4), reconstructed from the garbled text and its proof: a bucket holds |E|/n² edges and takes t·|E|/n²; a partition is 2P bytes (embeddings P plus optimizer state P); an exchange writes one and reads one, 2P/w + 2P/r; Legend's order leaves at least two buckets to compute during every exchange, so I/O is hidden when 2·t·|E|/n² ≥ 2P/w + 2P/r. Three partitions fill the buffer, 6P = M, and n = 4·|V|·d ÷ P = 24·|V|·d ÷ M. Substituting: |E| ÷ |V|² ≥ 96·d²·(w + r) ÷ (M·w·r·t). The surviving fragment \"96d²\" of the printed bound agrees with this.",
		fmt.Sprintf("With the paper's own constants (t = 1e-7 s, w = 2 GB/s, r = 3 GB/s, M = 15 GB, d = 100) the inequality gives %.2e, not the 1e-7 the paper prints (a factor %.1f); Twitter (%.1e) clears both, Freebase86m (%.1e, training edges) clears neither, and our threshold (%.2e) sits between them too, so the conclusions of §4 and §7.4 do not depend on the discrepancy.", paperTheta, paperTheta/1e-7, twD, fmD, theta),
		fmt.Sprintf("Our threshold uses the profile's w = %.0f GB/s and r = %.0f GB/s (SSD↔GPU), M = 15 GB, and t = %.1f ns/edge measured as ComputeSeconds ÷ edges at density 1e-6 (Dot, batches 50,000, 1,000 negatives): %.3e. t varies by <1%% over the sweep (partial last batches).", w/1e9, rd/1e9, ref.PerEdge*1e9, theta),
		fmt.Sprintf("|V| = 50M makes the theorem's minimum n = 24·|V|·d ÷ M exactly %d and each partition exactly M/3 = %.1f GB, so the simulated buffer is the theorem's.", p, pb/1e9),
		fmt.Sprintf("The stall never vanishes: the floor (%.1f s) is (a) the initial fill — the first bucket needs two partitions before anything can run — and (b) the exchanges whose prefetch window holds no bucket: our replay of Legend's order at n = %d has %d swaps of which %d have a window ≥ 1, and the last ones have a window of 0 (every new bucket of those states touches the partition evicted next). The theorem's \"at least 2 buckets during every exchange\" holds for the other swaps only. Stall ÷ epoch still falls with density because the epoch grows.",
			pts[0].Floor, p, pts[0].Report.Swaps, pts[0].Report.PrefetchableSwaps),
		vanishNote,
		"Why simulation and theorem may still differ: the theorem takes one t for every bucket and equal bucket sizes (ours: uniform buckets, whole batches per bucket), ignores per-request latency (ours: 100 µs per transfer), counts two buckets per exchange while most of our windows hold three or four (those exchanges are hidden below the threshold), and ignores the fill and the end-of-epoch flush (3 partition writes, part of the epoch time, never of the stall). The per-exchange model column, Σ max(0, transfer − window × bucket time), accounts for windows and tracks the simulated stall.",
	}
	return r, nil
}
