package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
)

// maxSweep caps the simulations one sweep may run.
const maxSweep = 20_000

// SweepRow is one (device, p, c, ordering) of a sweep; the JSON names are
// the public contract (fields may be added, none renamed).
type SweepRow struct {
	Device         string  `json:"device"`
	P              int     `json:"p"`
	C              int     `json:"c"`
	Ordering       string  `json:"ordering"`
	PartitionBytes int64   `json:"partition_bytes"`
	BufferBytes    int64   `json:"buffer_bytes"`
	StagingBuffers int     `json:"staging_buffers"`
	MemoryBytes    int64   `json:"memory_bytes"`
	Memory         string  `json:"memory"`
	Fits           bool    `json:"fits"`
	Swaps          int     `json:"swaps"`
	LowerBound     int     `json:"lower_bound_swaps"`
	ReadBytes      int64   `json:"read_bytes"`
	WriteBytes     int64   `json:"write_bytes"`
	EpochSeconds   float64 `json:"epoch_seconds"`
	StallSeconds   float64 `json:"stall_seconds"`
	ComputeSeconds float64 `json:"compute_seconds"`
	BoundSeconds   float64 `json:"bound_seconds"`
	EpochOverBound float64 `json:"epoch_over_bound"`
}

// SweepSkipped is an ordering that is not defined at one (p, c).
type SweepSkipped struct {
	P        int    `json:"p"`
	C        int    `json:"c"`
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// SweepOutput is the whole answer of one sweep: every row, fitting ones
// first, each group fastest first.
type SweepOutput struct {
	System     sim.System   `json:"system"`
	Dataset    string       `json:"dataset"`
	Nodes      int64        `json:"nodes"`
	TrainEdges int64        `json:"train_edges"`
	Dim        int          `json:"dim"`
	Training   sim.Training `json:"training"`
	// MemoryShare is the share of the memory a buffer may take to count
	// as fitting (the rest is for the edges, the OS and the framework).
	MemoryShare float64        `json:"memory_share"`
	Devices     []string       `json:"devices"`
	Ps          []int          `json:"p"`
	Cs          []int          `json:"c"`
	Orderings   []string       `json:"orderings"`
	Rows        []SweepRow     `json:"rows"`
	Skipped     []SweepSkipped `json:"skipped"`
}

// sweep runs `simulate sweep`: every ordering at every (p, c) on every
// device, ranked by epoch time among the buffers that fit in memory.
func sweep(args []string, stdout io.Writer) error {
	var o options
	var ps, cs, devs, plotPath string
	var top int
	var share float64
	fs := flag.NewFlagSet(prog+" sweep", flag.ContinueOnError)
	fs.StringVar(&ps, "p", "8,16,32,64", "partition counts: a comma-separated `LIST` of numbers and ranges a-b")
	fs.StringVar(&cs, "c", "", "buffer capacities, a `LIST` like --p; c > p is skipped (default 2,4,8,16, or the system's own)")
	fs.StringVar(&devs, "device", "p3.2xlarge", "comma-separated device `LIST`: presets ("+strings.Join(devices.PresetNames(), ", ")+") or YAML files")
	fs.IntVar(&top, "top", 10, "rows of the human table (all rows with --json and --csv)")
	fs.StringVar(&plotPath, "plot", "", "draw, per device and c, the best ordering's epoch time against p (buffers that fit) to `FILE`.png or .svg")
	fs.Float64Var(&share, "memory-share", 0.8, "share of the buffer's memory (CPU, or GPU for GPU buffers) that c partitions plus staging buffers may take")
	addScenarioFlags(fs, &o)
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	if top < 1 {
		return cli.Usagef("--top %d: must be at least 1", top)
	}
	if !(share > 0 && share <= 1) {
		return cli.Usagef("--memory-share %v: must be in (0, 1]", share)
	}
	pList, err := cli.IntList(ps)
	if err != nil {
		return cli.Usagef("--p: %v", err)
	}
	sys, err := sim.LookupSystem(o.system)
	if err != nil {
		return cli.Usagef("--system: %v", err)
	}
	if !sys.Partitioned {
		return cli.Usagef("--system %s keeps every parameter resident: there is no p or c to sweep", sys.Name)
	}
	cList := []int{0}
	if sys.Capacity == 0 && cs == "" {
		cs = "2,4,8,16"
	}
	if cs != "" {
		if cList, err = cli.IntList(cs); err != nil {
			return cli.Usagef("--c: %v", err)
		}
	}
	if sys.Capacity > 0 {
		if cs != "" && !slices.Equal(cList, []int{sys.Capacity}) {
			return cli.Usagef("--c %s: system %s has a buffer of %d partitions by design", cs, sys.Name, sys.Capacity)
		}
		cList = []int{0}
	}
	devList := cli.SplitList(devs)
	if len(devList) == 0 {
		return cli.Usagef("--device: empty list")
	}

	pairs := 0
	for _, p := range pList {
		for _, c := range cList {
			if max(c, sys.Capacity) <= p {
				pairs++
			}
		}
	}
	nord := len(orderings.Names())
	if o.orderings != "all" {
		nord = len(cli.SplitList(o.orderings))
	}
	if n := len(devList) * pairs * nord; n > maxSweep {
		return cli.Usagef("%d simulations: more than %d; narrow --p, --c, --device or --orderings", n, maxSweep)
	}

	// One Scenario per (device, p, c): scenario() validates every flag.
	type job struct {
		sc       sim.Scenario
		name     string
		fits     sim.BufferMemory
		lb, p, c int
	}
	var jobs []job
	out := SweepOutput{Ps: pList, MemoryShare: share, Rows: []SweepRow{}, Skipped: []SweepSkipped{}}
	for _, dev := range devList {
		profile := ""
		for _, p := range pList {
			for _, c := range cList {
				if max(c, sys.Capacity) > p {
					continue
				}
				o.device, o.p, o.c = dev, p, c
				sc, names, err := scenario(o)
				if err != nil {
					return err
				}
				if out.Orderings == nil {
					out.System, out.Dataset, out.Nodes, out.TrainEdges = sc.System, sc.Dataset.Name, sc.Dataset.Nodes, sc.Dataset.TrainEdges()
					out.Dim, out.Training, out.Orderings = o.dim, sc.Training, names
				}
				profile = sc.Profile.Name
				c = sc.Capacity()
				if !slices.Contains(out.Cs, c) {
					out.Cs = append(out.Cs, c)
				}
				part := sc.System.PartitionBytes(sc.Dataset.Nodes, p, o.dim)
				for _, name := range names {
					sc.Ordering = name
					jobs = append(jobs, job{sc: sc, name: name, fits: sc.System.Buffer(sc.Profile, c, part), lb: orderings.LowerBound(p, c), p: p, c: c})
				}
			}
		}
		if profile != "" {
			out.Devices = append(out.Devices, profile)
		}
	}
	if len(jobs) == 0 {
		return cli.Usagef("--p %s --c %s: no pair with 2 ≤ c ≤ p", ps, cs)
	}

	// Simulate in parallel; each result lands at its job's index, so the
	// output does not depend on scheduling.
	type result struct {
		rep sim.Report
		na  *orderings.NotApplicableError
		err error
	}
	res := make([]result, len(jobs))
	var wg sync.WaitGroup
	next := make(chan int)
	for w := 0; w < runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				cfg, err := jobs[i].sc.Config()
				if errors.As(err, &res[i].na) {
					continue
				}
				if err == nil {
					cfg.TimelineSlices = 1
					res[i].rep, err = sim.Run(cfg)
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
	for i, j := range jobs {
		r := res[i]
		switch {
		case r.na != nil:
			out.Skipped = append(out.Skipped, SweepSkipped{P: j.p, C: j.c, Ordering: j.name, Reason: r.na.Reason})
			continue
		case r.err != nil:
			return cli.Usagef("%s p=%d c=%d %s: %v", j.sc.Profile.Name, j.p, j.c, j.name, r.err)
		}
		row := SweepRow{
			Device: j.sc.Profile.Name, P: j.p, C: j.c, Ordering: j.name,
			PartitionBytes: r.rep.PartitionBytes, BufferBytes: j.fits.Bytes, StagingBuffers: j.fits.Staging,
			MemoryBytes: j.fits.Limit, Memory: j.fits.Where, Fits: float64(j.fits.Bytes) <= share*float64(j.fits.Limit),
			Swaps: r.rep.Swaps, LowerBound: j.lb, ReadBytes: r.rep.ReadBytes, WriteBytes: r.rep.WriteBytes,
			EpochSeconds: r.rep.EpochSeconds, StallSeconds: r.rep.StallSeconds, ComputeSeconds: r.rep.ComputeSeconds,
			BoundSeconds: r.rep.BoundSeconds,
		}
		if row.BoundSeconds > 0 {
			row.EpochOverBound = row.EpochSeconds / row.BoundSeconds
		}
		out.Rows = append(out.Rows, row)
	}
	out.Skipped = dedupeSkipped(out.Skipped)
	// Fitting rows first, each group fastest first; ties keep sweep order.
	slices.SortStableFunc(out.Rows, func(a, b SweepRow) int {
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
	if plotPath != "" {
		if err := plotSweep(plotPath, out); err != nil {
			return cli.Usagef("--plot: %v", err)
		}
	}
	return printSweep(stdout, format, out, top)
}

// plotSweep draws one line per (device, c): the epoch time of the best
// ordering at each p whose buffer fits.
func plotSweep(path string, out SweepOutput) error {
	type key struct {
		device string
		c      int
	}
	best := map[key]map[int]SweepRow{}
	var keys []key
	for _, r := range out.Rows {
		if !r.Fits {
			continue
		}
		k := key{r.Device, r.C}
		if best[k] == nil {
			best[k] = map[int]SweepRow{}
			keys = append(keys, k)
		}
		if b, ok := best[k][r.P]; !ok || r.EpochSeconds < b.EpochSeconds {
			best[k][r.P] = r
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("nothing to plot: no configuration fits in memory")
	}
	slices.SortFunc(keys, func(a, b key) int {
		if a.device != b.device {
			return strings.Compare(a.device, b.device)
		}
		return a.c - b.c
	})
	chart := plots.LineChart{
		Title:  fmt.Sprintf("Best ordering's epoch: %s, %s d=%d", out.System.Name, out.Dataset, out.Dim),
		XLabel: "partitions p", YLabel: "epoch (minutes)",
	}
	for _, k := range keys {
		name := fmt.Sprintf("c=%d", k.c)
		if len(out.Devices) > 1 {
			name = k.device + " " + name
		}
		s := plots.Series{Name: name}
		for _, p := range out.Ps {
			if r, ok := best[k][p]; ok {
				s.X = append(s.X, float64(p))
				s.Y = append(s.Y, r.EpochSeconds/60)
			}
		}
		chart.Series = append(chart.Series, s)
	}
	return chart.Save(path)
}

// dedupeSkipped keeps one entry per (p, c, ordering): the same ordering is
// skipped on every device for the same reason.
func dedupeSkipped(in []SweepSkipped) []SweepSkipped {
	out := []SweepSkipped{}
	seen := map[SweepSkipped]bool{}
	for _, s := range in {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func printSweep(w io.Writer, format cli.Format, out SweepOutput, top int) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		t := plots.Table{Header: []string{"device", "p", "c", "ordering", "partition_bytes", "buffer_bytes", "staging_buffers", "memory_bytes", "memory", "fits",
			"swaps", "lower_bound_swaps", "read_bytes", "write_bytes", "epoch_seconds", "stall_seconds", "compute_seconds", "bound_seconds", "epoch_over_bound"}}
		for _, r := range out.Rows {
			t.Rows = append(t.Rows, []string{r.Device, strconv.Itoa(r.P), strconv.Itoa(r.C), r.Ordering,
				strconv.FormatInt(r.PartitionBytes, 10), strconv.FormatInt(r.BufferBytes, 10), strconv.Itoa(r.StagingBuffers),
				strconv.FormatInt(r.MemoryBytes, 10), r.Memory, strconv.FormatBool(r.Fits),
				strconv.Itoa(r.Swaps), strconv.Itoa(r.LowerBound), strconv.FormatInt(r.ReadBytes, 10), strconv.FormatInt(r.WriteBytes, 10),
				f64(r.EpochSeconds, 3), f64(r.StallSeconds, 3), f64(r.ComputeSeconds, 3), f64(r.BoundSeconds, 3), f64(r.EpochOverBound, 4)})
		}
		return t.CSV(w)
	}
	fits := 0
	for _, r := range out.Rows {
		if r.Fits {
			fits++
		}
	}
	multi := len(out.Devices) > 1
	header := []string{"rank", "p", "c", "ordering", "buffer GB", "swaps", "I/O GB", "epoch min", "stall min", "÷ bound", "÷ best"}
	if multi {
		header = slices.Insert(header, 1, "device")
	}
	t := plots.Table{Header: header}
	for i, r := range out.Rows[:min(top, fits)] {
		row := []string{strconv.Itoa(i + 1), strconv.Itoa(r.P), strconv.Itoa(r.C), r.Ordering, f64(sim.GB(r.BufferBytes), 1),
			strconv.Itoa(r.Swaps), f64(sim.GB(r.ReadBytes+r.WriteBytes), 1), f64(r.EpochSeconds/60, 1), f64(r.StallSeconds/60, 1),
			f64(r.EpochOverBound, 2), f64(r.EpochSeconds/out.Rows[0].EpochSeconds, 2)}
		if multi {
			row = slices.Insert(row, 1, r.Device)
		}
		t.Rows = append(t.Rows, row)
	}
	if fits > 0 {
		if err := t.Render(w); err != nil {
			return err
		}
	}
	tr := out.Training
	fmt.Fprintf(w, "%s; %s: %d train edges, d=%d, %s, batch %d, %d negatives; on %s\n",
		out.System.Name, out.Dataset, out.TrainEdges, out.Dim, tr.Model, tr.Batch, tr.Negatives, strings.Join(out.Devices, ", "))
	fmt.Fprintf(w, "swept p ∈ {%s}, c ∈ {%s}, %d orderings: %d configurations, %d fit in memory",
		joinInts(out.Ps), joinInts(out.Cs), len(out.Orderings), len(out.Rows), fits)
	if fits < len(out.Rows) {
		fmt.Fprintf(w, " (the other %d need more than %.0f%% of the %s memory for c partitions plus staging buffers)", len(out.Rows)-fits, 100*out.MemoryShare, out.Rows[len(out.Rows)-1].Memory)
	}
	fmt.Fprintln(w)
	if fits == 0 {
		fmt.Fprintln(w, "no configuration fits in memory: try a larger p or a smaller c (--json lists them all)")
	} else {
		b := out.Rows[0]
		fmt.Fprintf(w, "fastest: %s at p=%d c=%d on %s, %.1f min per epoch (%.2f× its bound); buffer %.1f GB of %.1f GB %s memory\n",
			b.Ordering, b.P, b.C, b.Device, b.EpochSeconds/60, b.EpochOverBound, sim.GB(b.BufferBytes), sim.GB(b.MemoryBytes), b.Memory)
		near := nearFastest(out.Rows[:fits], NearFastest)
		if len(near) > 1 {
			io, mem := near[0], near[0]
			for _, r := range near {
				if r.ReadBytes+r.WriteBytes < io.ReadBytes+io.WriteBytes {
					io = r
				}
				if r.BufferBytes < mem.BufferBytes {
					mem = r
				}
			}
			fmt.Fprintf(w, "within %.0f%% of it: %d configurations; the least I/O among them: %s at p=%d c=%d on %s (%.1f GB); the smallest buffer: %s at p=%d c=%d on %s (%.1f GB)\n",
				100*NearFastest, len(near), io.Ordering, io.P, io.C, io.Device, sim.GB(io.ReadBytes+io.WriteBytes),
				mem.Ordering, mem.P, mem.C, mem.Device, sim.GB(mem.BufferBytes))
		}
	}
	if n := len(out.Skipped); n > 0 {
		fmt.Fprintf(w, "not valid at some (p, c): %s (%d pairs; --json gives the reasons)\n", skippedNames(out.Skipped), n)
	}
	fmt.Fprintln(w, "buffer GB: c partitions plus the system's staging buffers (prefetch, async write); ÷ bound: epoch over a bound no schedule beats")
	return nil
}

// NearFastest is how close to the fastest epoch a configuration must be
// for the sweep to weigh it by I/O and memory instead: within the noise of
// any real run.
const NearFastest = 0.01

// nearFastest returns the leading rows (sorted fastest first) whose epoch
// is within frac of the first.
func nearFastest(rows []SweepRow, frac float64) []SweepRow {
	n := 0
	for n < len(rows) && rows[n].EpochSeconds <= rows[0].EpochSeconds*(1+frac) {
		n++
	}
	return rows[:n]
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}

func skippedNames(sk []SweepSkipped) string {
	var names []string
	for _, s := range sk {
		if !slices.Contains(names, s.Ordering) {
			names = append(names, s.Ordering)
		}
	}
	return strings.Join(names, ", ")
}
