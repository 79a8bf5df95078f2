// Package report is the one record of an epoch that the simulator predicts
// and the engines measure: the same fields and the same resource names
// either way, so that a prediction and a measurement compare field by
// field.
package report

import (
	"sort"

	"github.com/tierflow/tierflow/orderings"
)

// Report is one epoch, predicted by the simulator or measured by the real
// engine: the same fields either way, so the two compare field by field.
// Times are seconds, bytes are bytes.
type Report struct {
	System   string `json:"system"`
	Ordering string `json:"ordering"`
	// OrderingSeed is the seed the Plan's ordering was built with (0 for
	// the orderings that take none): an ordering's name and seed name one
	// Plan in simulate, realrun and --compare-sim alike.
	OrderingSeed int64  `json:"ordering_seed"`
	Device       string `json:"device"`
	Dataset      string `json:"dataset"`
	Dim          int    `json:"dim"`
	P            int    `json:"p"`
	C            int    `json:"c"`
	// PartitionBytes is the size of one node partition (parameters and
	// Adagrad state).
	PartitionBytes int64 `json:"partition_bytes"`
	// ResidentBytes is the resident table of a typed graph's
	// unpartitioned entity types (their rows and Adagrad state), held in
	// memory beside the buffer for the whole epoch, read once at its
	// start and written once at its end — both in ReadBytes and
	// WriteBytes — and with every checkpoint (CheckpointBytes); 0: none.
	ResidentBytes int64 `json:"resident_bytes,omitempty"`
	// DiskReadLimit and DiskWriteLimit, in bytes/s, are the kernel limits
	// a real run's disk I/O ran under (realrun --disk-read, --disk-write,
	// --emulate-disk); 0: none.
	DiskReadLimit  float64 `json:"disk_read_limit_bytes_per_s,omitempty"`
	DiskWriteLimit float64 `json:"disk_write_limit_bytes_per_s,omitempty"`

	EpochSeconds   float64 `json:"epoch_seconds"`
	ComputeSeconds float64 `json:"compute_seconds"`
	StallSeconds   float64 `json:"stall_seconds"`
	// BoundSeconds is a lower bound no schedule can beat: the larger of the
	// compute and the I/O the lower-bound number of swaps needs.
	BoundSeconds float64 `json:"bound_seconds"`
	// EpochOverBound is EpochSeconds ÷ BoundSeconds (0 without a bound).
	EpochOverBound float64 `json:"epoch_over_bound"`
	GPUUtilization float64 `json:"gpu_utilization"`
	// TransferSeconds is the time host↔GPU copies of partitions or rows
	// were in flight (the union of their spans), and HiddenTransferSeconds
	// the part of it during which the GPU trained a bucket: the copy time
	// that overlap hid. Zero where nothing crosses PCIe.
	TransferSeconds       float64 `json:"transfer_seconds,omitempty"`
	HiddenTransferSeconds float64 `json:"hidden_transfer_seconds,omitempty"`

	// Counts are the epoch's partition loads, swaps and writes: the Plan's
	// in a prediction, the ones the engine performed in a measurement.
	orderings.Counts
	ReadBytes  int64 `json:"read_bytes"`
	WriteBytes int64 `json:"write_bytes"`

	// InsideCheckpoints are the checkpoints taken inside the epoch
	// (--checkpoint-every), CheckpointBytes what they wrote and
	// CheckpointWaitSeconds how long training waited for them (part of
	// EpochSeconds).
	InsideCheckpoints     int     `json:"inside_checkpoints,omitempty"`
	CheckpointBytes       int64   `json:"checkpoint_bytes,omitempty"`
	CheckpointWaitSeconds float64 `json:"checkpoint_wait_seconds,omitempty"`
	// MicroBatches is the micro-batches each batch is split into when it
	// does not fit in the GPU memory left to it (absent: it fits, or the
	// system trains on the CPU); BatchPeakBytes is then the estimated peak
	// of the largest micro-batch and BatchBudgetBytes that memory.
	// DuplicatedRows are the rows gathered more than once in the epoch
	// because of the split, and ExtraTransferBytes what moving them in and
	// their gradients out costs (included in the epoch).
	MicroBatches       int   `json:"micro_batches,omitempty"`
	BatchPeakBytes     int64 `json:"batch_peak_bytes,omitempty"`
	BatchBudgetBytes   int64 `json:"batch_budget_bytes,omitempty"`
	DuplicatedRows     int64 `json:"duplicated_rows,omitempty"`
	ExtraTransferBytes int64 `json:"extra_transfer_bytes,omitempty"`

	Batches   int             `json:"batches"`
	Events    int             `json:"events"`
	Resources []ResourceUsage `json:"resources"`
	Timeline  []TimelinePoint `json:"timeline,omitempty"`
	Warnings  []string        `json:"warnings,omitempty"`
	// Trace is the epoch as a timeline of events, when it was recorded
	// (written as its own file: --trace).
	Trace *Trace `json:"-"`
}

// RelativeError is a prediction's error against a measurement of the same
// Plan, field by field: (predicted − measured) ÷ measured, except the stall,
// which is often near zero and is taken relative to the measured epoch. A
// field whose measurement is zero has error 0 when the prediction is zero
// too, and 1 (entirely wrong) otherwise.
type RelativeError struct {
	EpochSeconds   float64 `json:"epoch_seconds"`
	ComputeSeconds float64 `json:"compute_seconds"`
	StallSeconds   float64 `json:"stall_seconds"`
	ReadBytes      float64 `json:"read_bytes"`
	WriteBytes     float64 `json:"write_bytes"`
	Swaps          float64 `json:"swaps"`
}

// Errors returns the prediction's relative error against measured.
func (predicted Report) Errors(measured Report) RelativeError {
	rel := func(p, m float64) float64 {
		switch {
		case m != 0:
			return (p - m) / m
		case p == 0:
			return 0
		}
		return 1
	}
	e := RelativeError{
		EpochSeconds:   rel(predicted.EpochSeconds, measured.EpochSeconds),
		ComputeSeconds: rel(predicted.ComputeSeconds, measured.ComputeSeconds),
		ReadBytes:      rel(float64(predicted.ReadBytes), float64(measured.ReadBytes)),
		WriteBytes:     rel(float64(predicted.WriteBytes), float64(measured.WriteBytes)),
		Swaps:          rel(float64(predicted.Swaps), float64(measured.Swaps)),
	}
	if measured.EpochSeconds > 0 {
		e.StallSeconds = (predicted.StallSeconds - measured.StallSeconds) / measured.EpochSeconds
	}
	return e
}

// The resources a Report names: the same names in a prediction and a
// measurement.
const (
	// CPU is the CPU's training or batch-building work.
	CPU = "cpu"
	// GPU is the GPU's work.
	GPU = "gpu"
	// DiskRead and DiskWrite are partition reads and writes on the disk
	// that holds the partitions.
	DiskRead  = "disk read"
	DiskWrite = "disk write"
	// CheckLoad and CheckWrite are a checksumming engine's checks of the
	// partitions it reads (after the transfer) and writes (before it):
	// trace tracks of their own, beside the disk's.
	CheckLoad  = "checksum (loader)"
	CheckWrite = "checksum (writer)"
	// PCIeH2D and PCIeD2H are the two directions of the host–GPU link.
	PCIeH2D = "pcie h2d"
	PCIeD2H = "pcie d2h"
	// SSDGPU is the direct path between an NVMe drive and the GPU
	// (Legend), reads and writes together.
	SSDGPU = "ssd↔gpu"
)

// ResourceUsage is how long one resource was busy in the epoch.
type ResourceUsage struct {
	Name        string  `json:"name"`
	BusySeconds float64 `json:"busy_seconds"`
	Bytes       int64   `json:"bytes,omitempty"`
	Utilization float64 `json:"utilization"`
}

// TimelinePoint is the utilisation of the compute stage, of the GPU and of
// the read and write paths over one slice of the epoch. Compute is whatever
// trains (the GPU in the papers' systems, the CPU in tierflow's CPU engine);
// GPU is the GPU alone, zero where no GPU is used.
type TimelinePoint struct {
	Start   float64 `json:"start"`
	End     float64 `json:"end"`
	Compute float64 `json:"compute"`
	GPU     float64 `json:"gpu"`
	Read    float64 `json:"read"`
	Write   float64 `json:"write"`
}

// Interval is a span of time in seconds (virtual in a prediction).
type Interval struct{ Start, End float64 }

// Busy is the time covered by at least one of spans.
func Busy(spans []Interval) float64 {
	var t float64
	for _, s := range union(spans) {
		t += s.End - s.Start
	}
	return t
}

// Overlap is the time covered both by one of a and by one of b.
func Overlap(a, b []Interval) float64 {
	ua, ub := union(a), union(b)
	var t float64
	for i, j := 0, 0; i < len(ua) && j < len(ub); {
		lo, hi := max(ua[i].Start, ub[j].Start), min(ua[i].End, ub[j].End)
		if hi > lo {
			t += hi - lo
		}
		if ua[i].End < ub[j].End {
			i++
		} else {
			j++
		}
	}
	return t
}

// union is spans merged into disjoint intervals in time order.
func union(spans []Interval) []Interval {
	s := append([]Interval(nil), spans...)
	sort.Slice(s, func(i, j int) bool { return s[i].Start < s[j].Start })
	var out []Interval
	for _, x := range s {
		if x.End <= x.Start {
			continue
		}
		if n := len(out); n > 0 && x.Start <= out[n-1].End {
			out[n-1].End = max(out[n-1].End, x.End)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Timeline turns busy intervals of the compute stage, the GPU and the read
// and write paths into n utilisation points over [0, end).
func Timeline(compute, gpu, read, write []Interval, end float64, n int) []TimelinePoint {
	c := utilization(compute, end, n)
	g := utilization(gpu, end, n)
	rd := utilization(read, end, n)
	wr := utilization(write, end, n)
	out := make([]TimelinePoint, n)
	for i := range out {
		out[i] = TimelinePoint{Start: end * float64(i) / float64(n), End: end * float64(i+1) / float64(n), Compute: c[i], GPU: g[i], Read: rd[i], Write: wr[i]}
	}
	return out
}

// utilization returns the fraction of each of n equal slices of [0, end)
// covered by spans.
func utilization(spans []Interval, end float64, n int) []float64 {
	out := make([]float64, n)
	if end <= 0 || n == 0 {
		return out
	}
	w := end / float64(n)
	for _, s := range spans {
		for i := int(s.Start / w); i < n && float64(i)*w < s.End; i++ {
			lo, hi := float64(i)*w, float64(i+1)*w
			if s.Start > lo {
				lo = s.Start
			}
			if s.End < hi {
				hi = s.End
			}
			if hi > lo {
				out[i] += (hi - lo) / w
			}
		}
	}
	for i := range out {
		if out[i] > 1 {
			out[i] = 1
		}
	}
	return out
}
