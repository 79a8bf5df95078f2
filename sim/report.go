package sim

// Report is one epoch, predicted by the simulator or measured by the real
// engine: the same fields either way, so the two compare field by field.
// Times are seconds, bytes are bytes.
type Report struct {
	System   string `json:"system"`
	Ordering string `json:"ordering"`
	Device   string `json:"device"`
	Dataset  string `json:"dataset"`
	Dim      int    `json:"dim"`
	P        int    `json:"p"`
	C        int    `json:"c"`
	// PartitionBytes is the size of one node partition (parameters and
	// Adagrad state).
	PartitionBytes int64 `json:"partition_bytes"`

	EpochSeconds   float64 `json:"epoch_seconds"`
	ComputeSeconds float64 `json:"compute_seconds"`
	StallSeconds   float64 `json:"stall_seconds"`
	// BoundSeconds is a lower bound no schedule can beat: the larger of the
	// compute and the I/O the lower-bound number of swaps needs.
	BoundSeconds   float64 `json:"bound_seconds"`
	GPUUtilization float64 `json:"gpu_utilization"`

	Swaps             int   `json:"swaps"`
	Loads             int   `json:"loads"`
	Writes            int   `json:"writes"`
	FinalWrites       int   `json:"final_writes"`
	ReadBytes         int64 `json:"read_bytes"`
	WriteBytes        int64 `json:"write_bytes"`
	PrefetchableSwaps int   `json:"prefetchable_swaps"`

	Batches   int             `json:"batches"`
	Events    int             `json:"events"`
	Resources []ResourceUsage `json:"resources"`
	Timeline  []TimelinePoint `json:"timeline,omitempty"`
	Warnings  []string        `json:"warnings,omitempty"`
}

// ResourceUsage is how long one resource was busy in the epoch.
type ResourceUsage struct {
	Name        string  `json:"name"`
	BusySeconds float64 `json:"busy_seconds"`
	Bytes       int64   `json:"bytes,omitempty"`
	Utilization float64 `json:"utilization"`
}

// TimelinePoint is the utilisation of the GPU (or compute stage) and of
// the read and write paths over one slice of the epoch.
type TimelinePoint struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	GPU   float64 `json:"gpu"`
	Read  float64 `json:"read"`
	Write float64 `json:"write"`
}

// Timeline turns busy intervals of the compute stage and of the read and
// write paths into n utilisation points over [0, end).
func Timeline(compute, read, write []Interval, end float64, n int) []TimelinePoint {
	g := utilization(compute, end, n)
	rd := utilization(read, end, n)
	wr := utilization(write, end, n)
	out := make([]TimelinePoint, n)
	for i := range out {
		out[i] = TimelinePoint{Start: end * float64(i) / float64(n), End: end * float64(i+1) / float64(n), GPU: g[i], Read: rd[i], Write: wr[i]}
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
