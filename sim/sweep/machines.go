package sweep

import (
	"sort"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/sim"
)

// MachinesRow is one (machines, p) of PyTorch-BigGraph: its time for the
// reported epochs and what the trainers did in a steady epoch.
type MachinesRow struct {
	Machines int `json:"machines"`
	P        int `json:"p"`
	// Seconds is the time of the reported epochs; SpeedUp is the fastest
	// one-machine row's time over it (0 when no one-machine row was
	// swept); MachineHours is Seconds × Machines ÷ 3600, the cost.
	Seconds      float64 `json:"seconds"`
	SpeedUp      float64 `json:"speed_up"`
	MachineHours float64 `json:"machine_hours"`
	// Occupancy, WaitBucketSeconds and TransferSeconds are the trainers'
	// means over a steady epoch.
	Occupancy         float64 `json:"occupancy"`
	WaitBucketSeconds float64 `json:"wait_bucket_s"`
	TransferSeconds   float64 `json:"transfer_s"`
	NetworkBytes      float64 `json:"network_bytes"`
	PeakMemoryBytes   int64   `json:"peak_memory_bytes"`
	// Fits: the peak memory fits the machine's; Rank orders the rows
	// that fit by time (1 = fastest), 0 for one that does not.
	Fits     bool     `json:"fits"`
	Rank     int      `json:"rank"`
	Warnings []string `json:"warnings,omitempty"`
}

// MachinesOutput is `simulate sweep --machines`.
type MachinesOutput struct {
	Dataset        string         `json:"dataset"`
	Device         string         `json:"device"`
	Dim            int            `json:"dim"`
	EpochsReported int            `json:"epochs_reported"`
	MemoryBytes    int64          `json:"memory_bytes"`
	Rows           []MachinesRow  `json:"rows"`
	Skipped        []MachinesSkip `json:"skipped"`
}

// MachinesSkip is a (machines, p) the sweep leaves out.
type MachinesSkip struct {
	Machines int    `json:"machines"`
	P        int    `json:"p"`
	Reason   string `json:"reason"`
}

// RunMachines simulates base at every machine count and partition count
// and ranks the configurations whose peak memory fits, fastest first. A
// configuration with more machines than P/2 is skipped (it only adds
// waiting trainers). The output does not depend on GOMAXPROCS.
func RunMachines(base sim.PBGRequest, machines, ps []int) (MachinesOutput, error) {
	if len(machines) == 0 || len(ps) == 0 {
		return MachinesOutput{}, inputerr.Errorf("{Machines} and {Ps}: give at least one of each")
	}
	if len(machines)*len(ps) > MaxSimulations {
		return MachinesOutput{}, inputerr.Errorf("%d configurations: more than %d", len(machines)*len(ps), MaxSimulations)
	}
	out := MachinesOutput{Rows: []MachinesRow{}, Skipped: []MachinesSkip{}}
	if base.Graph != nil {
		// One pass over the graph's edges counts its buckets at every p.
		if err := base.Graph.Prepare(ps); err != nil {
			return out, inputerr.Errorf("{Graph} %s: %w", base.Graph.Name, err)
		}
	}
	for _, m := range machines {
		for _, p := range ps {
			q := base
			q.Machines, q.P = m, p
			if m > 1 && m > max(p/2, 1) {
				out.Skipped = append(out.Skipped, MachinesSkip{Machines: m, P: p, Reason: "more machines than P/2: the extra trainers only wait"})
				continue
			}
			pr, err := q.Predict()
			if err != nil {
				return MachinesOutput{}, err
			}
			out.Dataset, out.Device, out.Dim, out.EpochsReported = pr.Dataset, pr.Device, pr.Training.Dim, pr.EpochsReported
			st := pr.Steady()
			row := MachinesRow{Machines: m, P: p, Seconds: pr.Seconds, MachineHours: pr.Seconds * float64(m) / 3600,
				NetworkBytes: st.NetworkBytes, PeakMemoryBytes: pr.PeakMemoryBytes, Warnings: pr.Warnings}
			for _, tr := range st.Trainers {
				n := float64(len(st.Trainers))
				row.Occupancy += tr.Occupancy / n
				row.WaitBucketSeconds += tr.WaitBucketSeconds / n
				row.TransferSeconds += tr.TransferSeconds / n
			}
			out.Rows = append(out.Rows, row)
		}
	}
	if len(out.Rows) == 0 {
		return out, inputerr.Errorf("{Machines} and {Ps}: every configuration has more machines than P/2")
	}
	base1 := 0.0
	for _, r := range out.Rows {
		if r.Machines == 1 && (base1 == 0 || r.Seconds < base1) {
			base1 = r.Seconds
		}
	}
	for i := range out.Rows {
		r := &out.Rows[i]
		if base1 > 0 {
			r.SpeedUp = base1 / r.Seconds
		}
	}
	return out, nil
}

// RankMachines marks the rows whose peak memory fits in memory bytes and
// sorts them fastest first, ties by fewer machines then smaller p; the
// rest follow in the same order.
func RankMachines(out *MachinesOutput, memory int64) {
	out.MemoryBytes = memory
	for i := range out.Rows {
		out.Rows[i].Fits = out.Rows[i].PeakMemoryBytes <= memory
	}
	sort.SliceStable(out.Rows, func(i, j int) bool {
		a, b := out.Rows[i], out.Rows[j]
		if a.Fits != b.Fits {
			return a.Fits
		}
		if a.Seconds != b.Seconds {
			return a.Seconds < b.Seconds
		}
		if a.Machines != b.Machines {
			return a.Machines < b.Machines
		}
		return a.P < b.P
	})
	rank := 0
	for i := range out.Rows {
		if out.Rows[i].Fits {
			rank++
			out.Rows[i].Rank = rank
		}
	}
}
