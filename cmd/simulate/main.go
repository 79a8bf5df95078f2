// Command simulate predicts the I/O of one training epoch for every
// edge-bucket ordering at a given number of partitions p and buffer
// capacity c: swaps, loads, writes and bytes, against Marius' lower bound.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
)

const prog = "simulate"

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// Result is one ordering's counts; the JSON names are the public contract.
type Result struct {
	Ordering            string  `json:"ordering"`
	Swaps               int     `json:"swaps"`
	SwapsOverLowerBound float64 `json:"swaps_over_lower_bound"`
	Loads               int     `json:"loads"`
	Writes              int     `json:"writes"`
	FinalWrites         int     `json:"final_writes"`
	ReadBytes           int64   `json:"read_bytes"`
	WriteBytes          int64   `json:"write_bytes"`
	PrefetchableSwaps   int     `json:"prefetchable_swaps"`
}

// Skipped is an ordering that is not defined for (p, c).
type Skipped struct {
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// Output is the whole answer of one invocation.
type Output struct {
	P               int       `json:"p"`
	C               int       `json:"c"`
	LowerBoundSwaps int       `json:"lower_bound_swaps"`
	BETAFormula     int       `json:"beta_formula_swaps"`
	Dataset         string    `json:"dataset"`
	Nodes           int64     `json:"nodes"`
	Dim             int       `json:"dim"`
	Policy          string    `json:"policy"`
	Seed            int64     `json:"seed"`
	PartitionBytes  int64     `json:"partition_bytes"`
	Results         []Result  `json:"results"`
	Skipped         []Skipped `json:"skipped"`
}

type options struct {
	p, c, dim         int
	orderings, policy string
	dataset, plan     string
	seed              int64
	asJSON, asCSV     bool
}

func run(args []string, stdout, stderr io.Writer) int {
	return cli.Exit(stderr, prog, simulate(args, stdout))
}

func simulate(args []string, stdout io.Writer) error {
	var o options
	fs := flag.NewFlagSet(prog, flag.ContinueOnError)
	fs.IntVar(&o.p, "p", 32, "number of node partitions")
	fs.IntVar(&o.c, "c", 8, "buffer capacity in partitions (2 ≤ c ≤ p)")
	fs.StringVar(&o.orderings, "orderings", "all", "comma-separated orderings, or all")
	fs.StringVar(&o.policy, "policy", string(orderings.Belady), "eviction policy: belady, lru or fifo")
	fs.StringVar(&o.dataset, "dataset", "freebase86m", "dataset preset that sets the partition size")
	fs.IntVar(&o.dim, "dim", 100, "embedding dimension d")
	fs.Int64Var(&o.seed, "seed", 0, "seed for seeded orderings (beta: 0 is the canonical order)")
	fs.StringVar(&o.plan, "plan", "", "write the Plan JSON of the (single) selected ordering to `FILE`")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON")
	fs.BoolVar(&o.asCSV, "csv", false, "print CSV")
	if err := cli.Parse(fs, args, stdout); err != nil {
		return err
	}
	format, err := cli.PickFormat(o.asJSON, o.asCSV)
	if err != nil {
		return err
	}
	if err := orderings.CheckPC(o.p, o.c); err != nil {
		return cli.Usagef("--p %d --c %d: %v", o.p, o.c, err)
	}
	if o.dim < 1 {
		return cli.Usagef("--dim %d: the dimension must be at least 1", o.dim)
	}
	policy, err := orderings.ParsePolicy(o.policy)
	if err != nil {
		return cli.Usagef("--policy: %v", err)
	}
	ds, err := sim.LookupDataset(o.dataset)
	if err != nil {
		return cli.Usagef("--dataset: %v", err)
	}
	names := orderings.Names()
	if o.orderings != "all" {
		names = cli.SplitList(o.orderings)
		if len(names) == 0 {
			return cli.Usagef("--orderings: empty list")
		}
		for _, n := range names {
			if _, err := orderings.Lookup(n); err != nil {
				return cli.Usagef("--orderings: %v", err)
			}
		}
	}
	if o.plan != "" && len(names) != 1 {
		return cli.Usagef("--plan writes one Plan: select exactly one ordering with --orderings")
	}

	out := Output{
		P: o.p, C: o.c,
		LowerBoundSwaps: orderings.LowerBound(o.p, o.c),
		BETAFormula:     orderings.BETASwaps(o.p, o.c),
		Dataset:         ds.Name, Nodes: ds.Nodes, Dim: o.dim,
		Policy: string(policy), Seed: o.seed,
		PartitionBytes: sim.PartitionBytes(ds.Nodes, o.p, o.dim),
		Results:        []Result{},
		Skipped:        []Skipped{},
	}
	for _, name := range names {
		pl, err := orderings.Build(name, o.p, o.c, policy, o.seed)
		var na *orderings.NotApplicableError
		if errors.As(err, &na) {
			out.Skipped = append(out.Skipped, Skipped{Ordering: name, Reason: na.Reason})
			continue
		}
		if err != nil {
			return err
		}
		if o.plan != "" {
			if err := cli.WriteFileAtomic(o.plan, pl.WriteJSON); err != nil {
				return cli.Usagef("--plan: %v", err)
			}
		}
		out.Results = append(out.Results, resultOf(pl, out.PartitionBytes, out.LowerBoundSwaps))
	}
	return print(stdout, format, out)
}

func resultOf(pl *orderings.Plan, partBytes int64, lb int) Result {
	rd, wr := pl.Counts.Bytes(partBytes)
	ratio := 1.0
	if lb > 0 {
		ratio = float64(pl.Counts.Swaps) / float64(lb)
	}
	return Result{
		Ordering: pl.Ordering, Swaps: pl.Counts.Swaps, SwapsOverLowerBound: ratio,
		Loads: pl.Counts.Loads, Writes: pl.Counts.Writes, FinalWrites: pl.Counts.FinalWrites,
		ReadBytes: rd, WriteBytes: wr, PrefetchableSwaps: pl.Counts.PrefetchableSwaps,
	}
}

func print(w io.Writer, format cli.Format, out Output) error {
	switch format {
	case cli.JSON:
		return cli.PrintJSON(w, out)
	case cli.CSV:
		t := plots.Table{Header: []string{"ordering", "swaps", "swaps_over_lower_bound", "loads", "writes", "final_writes", "read_bytes", "write_bytes", "prefetchable_swaps"}}
		for _, r := range out.Results {
			t.Rows = append(t.Rows, []string{r.Ordering, strconv.Itoa(r.Swaps), strconv.FormatFloat(r.SwapsOverLowerBound, 'f', 4, 64),
				strconv.Itoa(r.Loads), strconv.Itoa(r.Writes), strconv.Itoa(r.FinalWrites),
				strconv.FormatInt(r.ReadBytes, 10), strconv.FormatInt(r.WriteBytes, 10), strconv.Itoa(r.PrefetchableSwaps)})
		}
		return t.CSV(w)
	}
	t := plots.Table{Header: []string{"ordering", "swaps", "÷ lower bound", "loads", "writes", "read GB", "write GB", "prefetchable swaps"}}
	for _, r := range out.Results {
		t.Rows = append(t.Rows, []string{r.Ordering, strconv.Itoa(r.Swaps), fmt.Sprintf("%.2f", r.SwapsOverLowerBound),
			strconv.Itoa(r.Loads), strconv.Itoa(r.Writes), fmt.Sprintf("%.1f", sim.GB(r.ReadBytes)), fmt.Sprintf("%.1f", sim.GB(r.WriteBytes)),
			strconv.Itoa(r.PrefetchableSwaps)})
	}
	if err := t.Render(w); err != nil {
		return err
	}
	fmt.Fprintf(w, "p=%d c=%d policy=%s; lower bound %d swaps (Marius eq. 2), BETA formula %d swaps (eq. 3)\n",
		out.P, out.C, out.Policy, out.LowerBoundSwaps, out.BETAFormula)
	fmt.Fprintf(w, "partition: %.3f GB = ceil(%d nodes / %d) × d=%d × 4 B × 2 (float32 + Adagrad), %s; GB = 10^9 bytes; writes include the %d final flushes\n",
		sim.GB(out.PartitionBytes), out.Nodes, out.P, out.Dim, out.Dataset, out.C)
	for _, s := range out.Skipped {
		fmt.Fprintf(w, "not valid here: %s: %s\n", s.Ordering, s.Reason)
	}
	return nil
}
