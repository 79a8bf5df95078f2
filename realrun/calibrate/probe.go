package calibrate

import "fmt"

// ProbeRun is one ordering's probe: the first Buckets of its Plan run by
// the engine and predicted on the calibrated profile, and how much faster
// the run's reads, writes and training moved than the prediction's
// (validate.Decomposition's ratios, over the probe: validate.Probe).
type ProbeRun struct {
	Ordering         string  `json:"ordering"`
	Buckets          int     `json:"buckets"`
	Of               int     `json:"of_buckets"`
	Seconds          float64 `json:"seconds"`
	PredictedSeconds float64 `json:"predicted_seconds"`
	ReadRatio        float64 `json:"read_rate_ratio"`
	WriteRatio       float64 `json:"write_rate_ratio"`
	// EngineRatio is the engine's: over the probe's quiet buckets (no
	// partition I/O beside them; QuietBuckets of them, QuietShare of its
	// compute) where there were enough, else over all of its buckets,
	// AllEngineRatio, which also holds how far the calibrated
	// interference missed.
	EngineRatio    float64 `json:"engine_rate_ratio"`
	AllEngineRatio float64 `json:"all_buckets_engine_rate_ratio,omitempty"`
	QuietBuckets   int     `json:"quiet_buckets,omitempty"`
	QuietShare     float64 `json:"quiet_share,omitempty"`
}

// ProbeResult is what Probe measured and applied: every ordering's probe,
// the read and write ratios applied to the disk and the compute ratio
// applied to every engine rate (the probes' medians; 0: none applied),
// and how long the probes took.
type ProbeResult struct {
	Runs        []ProbeRun `json:"runs"`
	ReadRatio   float64    `json:"read_rate_ratio"`
	WriteRatio  float64    `json:"write_rate_ratio"`
	EngineRatio float64    `json:"engine_rate_ratio,omitempty"`
	Seconds     float64    `json:"seconds"`
}

// Applied says in words what the probes changed: the disk's read and
// write rates and the engine's (the probes' medians).
func (p ProbeResult) Applied() string {
	s := fmt.Sprintf("the disk's reads %.2f× and writes %.2f×", p.ReadRatio, p.WriteRatio)
	if p.EngineRatio > 0 {
		s += fmt.Sprintf(", every engine rate %.2f×", p.EngineRatio)
	}
	return s + " (the probes' medians)"
}

// EngineWords says in words the engine's ratio and what it was read
// from: "engine 0.73× over its 9 buckets with no I/O beside them (41% of
// its training; 0.70× over all)", or over all of its buckets when too few
// ran quiet.
func (r ProbeRun) EngineWords() string {
	if r.QuietBuckets > 0 && r.QuietShare > 0 {
		return fmt.Sprintf("engine %.2f× over its %d buckets with no I/O beside them (%.0f%% of its training; %.2f× over all)", r.EngineRatio, r.QuietBuckets, 100*r.QuietShare, r.AllEngineRatio)
	}
	return fmt.Sprintf("engine %.2f× over all its buckets (%d with no I/O beside them, too few)", r.EngineRatio, r.QuietBuckets)
}
