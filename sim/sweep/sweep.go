// Package sweep ranks whole configurations: it simulates every ordering at
// every (p, c) on every device and orders those whose buffer fits in
// memory by epoch time — the answer `simulate sweep` prints.
package sweep

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/workload"
)

// MaxSimulations caps the simulations one sweep may run.
const MaxSimulations = 20_000

// DefaultCs are the capacities swept when none are given and the system
// does not fix its own.
var DefaultCs = []int{2, 4, 8, 16}

// NearFastest is how close to the fastest epoch a configuration must be
// for the sweep to weigh it by I/O and memory instead: within the noise of
// any real run.
const NearFastest = 0.01

// Grid is what to sweep: partition counts, capacities (nil: DefaultCs, or
// the system's own), devices (presets or profile files) and the share of
// the buffer's memory a configuration may take to fit. InMemory also
// ranks, on every device, the systems that keep every parameter resident
// (sim.InMemorySystems) where the parameters fit that share of their
// memory; the others are LeftOut.
type Grid struct {
	Ps, Cs      []int
	Devices     []string
	MemoryShare float64
	InMemory    bool
}

// Row is one (device, p, c, ordering): its simulated Report plus what the
// sweep adds — the buffer's memory, whether it fits, and its rank. A row
// of a system that keeps every parameter in memory (InMemory) has no p, c
// or ordering, and its buffer is every parameter with its optimizer
// state.
type Row struct {
	report.Report
	InMemory       bool   `json:"in_memory,omitempty"`
	BufferBytes    int64  `json:"buffer_bytes"`
	StagingBuffers int    `json:"staging_buffers"`
	MemoryBytes    int64  `json:"memory_bytes"`
	Memory         string `json:"memory"`
	// Fits: the buffer fits in its memory share and every batch — split
	// into MicroBatches when it must, unless micro-batching is off — fits
	// in the GPU memory left to it.
	Fits bool `json:"fits"`
	// BatchFits is the second half of Fits.
	BatchFits  bool `json:"batch_fits"`
	LowerBound int  `json:"lower_bound_swaps"`
	// IOBytes is read plus written bytes.
	IOBytes int64 `json:"io_bytes"`
	// Rank is the position among the rows that fit (1 = fastest), 0 for a
	// row that does not fit; OverBest is its epoch over the fastest's.
	Rank     int     `json:"rank"`
	OverBest float64 `json:"over_best"`
	// EpochRange is the epoch's range over the device's measured spread
	// (sim.RunRange; absent without one). RankBest and RankWorst are the
	// places among the fitting rows its range allows, and WithinSpread
	// says that the spread can swap it with the row ranked just above
	// (sim.Place); all absent when no device has a spread.
	sim.EpochRange
	RankBest     int  `json:"rank_best,omitempty"`
	RankWorst    int  `json:"rank_worst,omitempty"`
	WithinSpread bool `json:"within_spread_of_above,omitempty"`
}

// LeftOut is a system that keeps every parameter in memory, left out of
// the ranking on a device: its parameters do not fit there, or the device
// cannot run it.
type LeftOut struct {
	System string `json:"system"`
	Device string `json:"device"`
	Reason string `json:"reason"`
	// Bytes are its parameters with their optimizer state, Limit the
	// memory they would live in (0: left out for another reason).
	Bytes int64  `json:"bytes"`
	Limit int64  `json:"limit"`
	Where string `json:"where,omitempty"`
}

// Skipped is an ordering that is not defined at one (p, c).
type Skipped struct {
	P        int    `json:"p"`
	C        int    `json:"c"`
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// Output is the whole answer of one sweep: every row, fitting ones first,
// each group fastest first.
type Output struct {
	System     sim.System        `json:"system"`
	Dataset    string            `json:"dataset"`
	Nodes      int64             `json:"nodes"`
	TrainEdges int64             `json:"train_edges"`
	Dim        int               `json:"dim"`
	Training   workload.Training `json:"training"`
	// MemoryShare is the share of the memory a buffer may take to count
	// as fitting (the rest is for the edges, the OS and the framework).
	MemoryShare float64   `json:"memory_share"`
	Devices     []string  `json:"devices"`
	Ps          []int     `json:"p"`
	Cs          []int     `json:"c"`
	Orderings   []string  `json:"orderings"`
	Rows        []Row     `json:"rows"`
	Skipped     []Skipped `json:"skipped"`
	// Graph is the user's own graph swept (its bucket sizes at every p);
	// nil for a dataset preset.
	Graph *sim.Graph `json:"graph,omitempty"`
	// SkippedP are the p left out because a histogram file holds its
	// buckets at another p only; Notes, lines for the reader.
	SkippedP []int    `json:"skipped_p,omitempty"`
	Notes    []string `json:"notes,omitempty"`
	// InMemory are the systems that keep every parameter in memory the
	// sweep considered (Grid.InMemory), and LeftOut those it left out on
	// a device, with the reason.
	InMemory []string  `json:"in_memory,omitempty"`
	LeftOut  []LeftOut `json:"left_out,omitempty"`
	histP    int
}

type job struct {
	sc       sim.Scenario
	name     string
	fits     sim.BufferMemory
	lb, p, c int
	// resident: a system that keeps every parameter in memory (no Plan).
	resident bool
}

// Run sweeps the grid for the request (its P, C and Device are replaced by
// the grid's). Bad input is an inputerr.Error naming the field ({Ps}). The output
// does not depend on GOMAXPROCS.
func Run(base sim.Request, g Grid) (Output, error) {
	if !(g.MemoryShare > 0 && g.MemoryShare <= 1) {
		return Output{}, inputerr.Errorf("{MemoryShare} %v: must be in (0, 1]", g.MemoryShare)
	}
	sys, err := sim.LookupSystem(base.System)
	if err != nil {
		return Output{}, inputerr.Errorf("{System}: %w", err)
	}
	if !sys.Partitioned {
		return Output{}, inputerr.Errorf("{System} %s keeps every parameter resident: there is no p or c to sweep", sys.Name)
	}
	cs := g.Cs
	switch {
	case sys.Capacity > 0 && cs != nil && !slices.Equal(cs, []int{sys.Capacity}):
		return Output{}, inputerr.Errorf("{Cs} %s: system %s has a buffer of %d partitions by design", joinInts(cs, ","), sys.Name, sys.Capacity)
	case sys.Capacity > 0:
		cs = []int{0}
	case cs == nil:
		cs = DefaultCs
	}
	if len(g.Devices) == 0 {
		return Output{}, inputerr.Errorf("{Devices}: empty list")
	}
	pairs := 0
	for _, p := range g.Ps {
		for _, c := range cs {
			if max(c, sys.Capacity) <= p {
				pairs++
			}
		}
	}
	names, err := orderings.ParseList(base.Orderings)
	if err != nil {
		return Output{}, inputerr.Errorf("{Orderings}: %w", err)
	}
	if n := len(g.Devices) * pairs * len(names); n > MaxSimulations {
		return Output{}, inputerr.Errorf("%d simulations: more than %d; narrow {Ps}, {Cs}, {Devices} or {Orderings}", n, MaxSimulations)
	}
	out := Output{Ps: g.Ps, MemoryShare: g.MemoryShare, Rows: []Row{}, Skipped: []Skipped{}}
	if base.Graph != nil {
		// One pass over the graph's edges counts its buckets at every p.
		if err := base.Graph.Prepare(g.Ps); err != nil {
			return out, inputerr.Errorf("{Graph} %s: %w", base.Graph.Name, err)
		}
	}
	jobs, err := plan(base, g, cs, sys, &out)
	if err != nil {
		return out, err
	}
	if len(out.SkippedP) > 0 {
		kept := slices.DeleteFunc(slices.Clone(out.Ps), func(p int) bool { return slices.Contains(out.SkippedP, p) })
		if len(kept) == 0 {
			return out, inputerr.Errorf("{Edges} %s: histogram has p = %d only, not one of {Ps} %s: give {Ps} %d, or {Graph} WORKDIR for any p", base.Edges, out.histP, joinInts(g.Ps, ","), out.histP)
		}
		out.Notes = append(out.Notes, fmt.Sprintf("p = %s left out: {Edges} %s holds its buckets at p = %d only ({Graph} WORKDIR gives any p)", joinInts(out.SkippedP, ", "), base.Edges, out.histP))
		out.Ps = kept
	}
	if len(jobs) == 0 {
		return out, inputerr.Errorf("{Ps} %s {Cs} %s: no pair with 2 ≤ c ≤ p", joinInts(g.Ps, ","), joinInts(cs, ","))
	}
	if err := simulate(jobs, &out); err != nil {
		return out, err
	}
	rank(&out)
	return out, nil
}

// plan makes one job per (device, p, c, ordering); Request.Assemble
// validates every field.
func plan(base sim.Request, g Grid, cs []int, sys sim.System, out *Output) ([]job, error) {
	var jobs []job
	for _, dev := range g.Devices {
		profile := ""
		for _, p := range g.Ps {
			for _, c := range cs {
				if max(c, sys.Capacity) > p {
					continue
				}
				q := base
				q.Device, q.P, q.C = dev, p, c
				sc, names, err := q.Assemble()
				if hp := (*sim.HistogramPError)(nil); errors.As(err, &hp) {
					if !slices.Contains(out.SkippedP, p) {
						out.SkippedP = append(out.SkippedP, p)
					}
					out.histP = hp.HistP
					continue
				}
				if err != nil {
					return nil, err
				}
				if out.Orderings == nil {
					ds := sc.Data()
					out.System, out.Dataset, out.Nodes, out.TrainEdges = sc.System, ds.Name, ds.Nodes, ds.TrainEdges()
					out.Dim, out.Training, out.Orderings = sc.Training.Dim, sc.Training, names
					out.Graph, out.Notes = sc.Graph, sc.Notes
				}
				profile = sc.Profile.Name
				c = sc.Capacity()
				if !slices.Contains(out.Cs, c) {
					out.Cs = append(out.Cs, c)
				}
				ds := sc.Data()
				part := sc.System.DataPartitionBytes(ds, p, sc.Training.Dim)
				fits := sc.System.Buffer(sc.Profile, c, part).WithResident(sc.System.ResidentTableBytes(ds, sc.Training.Dim))
				for _, name := range names {
					sc.Ordering = name
					jobs = append(jobs, job{sc: sc, name: name, fits: fits, lb: orderings.LowerBound(p, c), p: p, c: c})
				}
			}
		}
		if profile != "" {
			out.Devices = append(out.Devices, profile)
		}
		if g.InMemory && profile != "" {
			more, err := inMemory(base, dev, g.MemoryShare, out)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, more...)
		}
	}
	return jobs, nil
}

// inMemory makes one job per system that keeps every parameter in memory
// whose parameters fit the share of their memory on the device; the
// others are LeftOut.
func inMemory(base sim.Request, dev string, share float64, out *Output) ([]job, error) {
	var jobs []job
	for _, sys := range sim.InMemorySystems() {
		if !slices.Contains(out.InMemory, sys.Name) {
			out.InMemory = append(out.InMemory, sys.Name)
		}
		q := base
		q.System, q.Device, q.P, q.C = sys.Name, dev, 0, 0
		sc, _, err := q.Assemble()
		if err != nil {
			return nil, err
		}
		mem := sc.System.ResidentMemory(sc.Profile, sc.Data().Nodes, sc.Training.Dim)
		if !mem.FitsIn(share) {
			out.LeftOut = append(out.LeftOut, LeftOut{System: sys.Name, Device: sc.Profile.Name, Bytes: mem.Bytes, Limit: mem.Limit, Where: mem.Where,
				Reason: fmt.Sprintf("every parameter with its Adagrad state, %.1f GB, needs more than %.0f%% of the %.1f GB %s memory", sim.GB(mem.Bytes), 100*share, sim.GB(mem.Limit), mem.Where)})
			continue
		}
		jobs = append(jobs, job{sc: sc, name: sys.Name, fits: mem, resident: true})
	}
	return jobs, nil
}

// simulate runs the jobs in parallel; each result lands at its job's
// index, so the output does not depend on scheduling.
func simulate(jobs []job, out *Output) error {
	type result struct {
		rep       report.Report
		rng       sim.EpochRange
		batchFits bool
		skipped   *orderings.Skipped
		err       error
	}
	res := make([]result, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				j := jobs[i]
				var plans []*orderings.Plan
				var skipped []orderings.Skipped
				var err error
				if !j.resident {
					plans, skipped, err = orderings.Select([]string{j.name}, j.p, j.c, j.sc.Policy, j.sc.Seed)
				}
				if len(skipped) > 0 {
					res[i].skipped = &skipped[0]
					continue
				}
				var cfg sim.Config
				if err == nil {
					if !j.resident {
						j.sc.Plan = plans[0]
					}
					cfg, err = j.sc.Config()
				}
				if err == nil {
					cfg.TimelineSlices = 1
					mp, merr := cfg.Micro()
					res[i].batchFits = merr == nil && mp.Fits()
					res[i].rep, res[i].rng, err = sim.RunRange(cfg)
				}
				res[i].err = err
			}
		}()
	}
	for i := range jobs {
		next <- i
	}
	close(next)
	wg.Wait()
	seen := map[Skipped]bool{}
	for i, j := range jobs {
		r := res[i]
		switch {
		case r.skipped != nil:
			// The same ordering is skipped on every device for the same reason.
			s := Skipped{P: j.p, C: j.c, Ordering: j.name, Reason: r.skipped.Reason}
			if !seen[s] {
				seen[s] = true
				out.Skipped = append(out.Skipped, s)
			}
			continue
		case r.err != nil && j.resident && errors.Is(r.err, sim.ErrConfig):
			// The device cannot run it (no GPU, no GPU batch rate).
			out.LeftOut = append(out.LeftOut, LeftOut{System: j.name, Device: j.sc.Profile.Name,
				Reason: strings.TrimPrefix(r.err.Error(), sim.ErrConfig.Error()+": ")})
			continue
		case r.err != nil && j.resident:
			return inputerr.Errorf("%s %s: %w", j.sc.Profile.Name, j.name, r.err)
		case r.err != nil:
			return inputerr.Errorf("%s p=%d c=%d %s: %w", j.sc.Profile.Name, j.p, j.c, j.name, r.err)
		}
		out.Rows = append(out.Rows, Row{
			Report: r.rep, InMemory: j.resident, BufferBytes: j.fits.Bytes, StagingBuffers: j.fits.Staging,
			MemoryBytes: j.fits.Limit, Memory: j.fits.Where, BatchFits: r.batchFits,
			Fits:       j.fits.FitsIn(out.MemoryShare) && r.batchFits,
			LowerBound: j.lb, IOBytes: r.rep.ReadBytes + r.rep.WriteBytes,
			EpochRange: r.rng,
		})
	}
	return nil
}

// rank puts fitting rows first, each group fastest first (ties keep sweep
// order), and numbers the fitting ones; where a device has a spread, it
// places them with what the spread allows (sim.Rank).
func rank(out *Output) {
	slices.SortStableFunc(out.Rows, func(a, b Row) int {
		if a.Fits != b.Fits {
			if a.Fits {
				return -1
			}
			return 1
		}
		switch {
		case a.EpochSeconds < b.EpochSeconds:
			return -1
		case a.EpochSeconds > b.EpochSeconds:
			return 1
		}
		return 0
	})
	for i := range out.Rows {
		r := &out.Rows[i]
		if r.Fits {
			r.Rank = i + 1
		}
		if best := out.Rows[0].EpochSeconds; best > 0 {
			r.OverBest = r.EpochSeconds / best
		}
	}
	if !out.HasSpread() {
		return
	}
	fit := out.Fitting()
	entries := make([]sim.Ranked, len(fit))
	for i, r := range fit {
		entries[i] = sim.Ranked{Median: r.EpochSeconds, Range: r.EpochRange}
	}
	for i, p := range sim.Rank(entries) {
		fit[i].RankBest, fit[i].RankWorst, fit[i].WithinSpread = p.RankBest, p.RankWorst, p.WithinSpread
	}
}

// HasSpread reports whether a swept device had a measured spread (its
// rows then have an epoch range, and the fitting rows their places).
func (o Output) HasSpread() bool {
	return slices.ContainsFunc(o.Rows, func(r Row) bool { return r.EpochRange.Has() })
}

// Place is r's place as sim.Place.
func (r Row) Place() sim.Place {
	return sim.Place{Rank: r.Rank, RankBest: r.RankBest, RankWorst: r.RankWorst, WithinSpread: r.WithinSpread}
}

// Fitting returns the rows whose buffer fits, fastest first.
func (o Output) Fitting() []Row {
	n := 0
	for n < len(o.Rows) && o.Rows[n].Fits {
		n++
	}
	return o.Rows[:n]
}

// NearBest returns the fitting rows whose epoch is within frac of the
// fastest, and among them the one with the least I/O and the one with the
// smallest buffer.
func (o Output) NearBest(frac float64) (near []Row, leastIO, smallest Row) {
	fit := o.Fitting()
	for len(near) < len(fit) && fit[len(near)].EpochSeconds <= fit[0].EpochSeconds*(1+frac) {
		near = fit[:len(near)+1]
	}
	if len(near) == 0 {
		return nil, Row{}, Row{}
	}
	leastIO, smallest = near[0], near[0]
	for _, r := range near {
		if r.IOBytes < leastIO.IOBytes {
			leastIO = r
		}
		if r.BufferBytes < smallest.BufferBytes {
			smallest = r
		}
	}
	return near, leastIO, smallest
}

// SkippedNames lists the orderings skipped somewhere, once each.
func (o Output) SkippedNames() string {
	var names []string
	for _, s := range o.Skipped {
		if !slices.Contains(names, s.Ordering) {
			names = append(names, s.Ordering)
		}
	}
	return strings.Join(names, ", ")
}

// Curve is, for one device and buffer capacity c, the best ordering's
// epoch at each p whose buffer fits (the partitioned system's rows
// alone).
type Curve struct {
	Device       string
	C            int
	P            []int
	EpochSeconds []float64
}

// Curves returns one Curve per (device, c) among the configurations that
// fit, ordered by device and c, each over the swept p in order.
func (o Output) Curves() []Curve {
	type key struct {
		device string
		c      int
	}
	best := map[key]map[int]Row{}
	var keys []key
	for _, r := range o.Fitting() {
		if r.InMemory {
			continue // no p: not a curve over p
		}
		k := key{r.Device, r.C}
		if best[k] == nil {
			best[k] = map[int]Row{}
			keys = append(keys, k)
		}
		if b, ok := best[k][r.P]; !ok || r.EpochSeconds < b.EpochSeconds {
			best[k][r.P] = r
		}
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.device != b.device {
			return strings.Compare(a.device, b.device)
		}
		return a.c - b.c
	})
	var out []Curve
	for _, k := range keys {
		cv := Curve{Device: k.device, C: k.c}
		for _, p := range o.Ps {
			if r, ok := best[k][p]; ok {
				cv.P = append(cv.P, p)
				cv.EpochSeconds = append(cv.EpochSeconds, r.EpochSeconds)
			}
		}
		out = append(out, cv)
	}
	return out
}

func joinInts(xs []int, sep string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, sep)
}

// JoinInts formats a list of integers for a summary line ("8, 16, 32").
func JoinInts(xs []int) string { return joinInts(xs, ", ") }
