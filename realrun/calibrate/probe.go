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
	EngineRatio      float64 `json:"engine_rate_ratio"`
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
