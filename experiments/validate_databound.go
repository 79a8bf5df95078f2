package experiments

import "github.com/tierflow/tierflow/workload"

func init() {
	register(Experiment{Name: "validate-databound", Description: "Validate the simulator on the disk as it is on two data-bound configurations the validation does not hold (LiveJournal-shaped p=64 and Freebase86m-shaped p=48, d=256, c=4), swap-heavy orderings included; each run predicted three ways (about 12 minutes on 2 cores)", Run: ValidateDataBound, Slow: true})
}

// ValidateDataBoundConfigs are data-bound configurations outside the
// validation, chosen on 2026-11-26 before either was measured, by
// arithmetic alone: BETA at c = 4 swaps about p²/6 times, so an epoch
// moves about (p²/6)·N/p·d·8 bytes each way, against E edges trained at
// roughly 0.7M edges/s at d = 256 with 4 negatives on this machine's two
// cores; with the disk's ~1.2 GB/s that is I/O over compute of about
// 6.6·(p/32)/(E/N) — data-bound for BETA where E/N is below ~6.6·p/32, and
// more so for the orderings that swap two to three times as often.
//
//   - LiveJournal-shaped (14 edges a node, another graph shape than the
//     validation's), 0.02: ~97k nodes, p = 64, c = 4, 3.1 MB partitions:
//     BETA ~0.9 (at the boundary), Hilbert and inside-out ~2.
//   - Freebase86m-shaped, 0.004: ~344k nodes, p = 48, c = 4, 14.7 MB
//     partitions (larger d and p than the validation's): BETA ~2.8.
var ValidateDataBoundConfigs = []ValidateConfig{
	{"livejournal", 0.02, workload.Dot, 256, 4, 1000, 64, 4, "social graph (14 edges a node), d=256, 4 negatives, p=64, c=4: 3.1 MB partitions read many times for little arithmetic; chosen before it was measured"},
	{"freebase86m", 0.004, workload.Dot, 256, 4, 1000, 48, 4, "sparse graph, d=256, 4 negatives, p=48, c=4: 14.7 MB partitions; chosen before it was measured"},
}

// ValidateDataBound runs the validation's method (the disk measured
// before and after every run, each run predicted also with the
// configuration's calibration and with the disk as it ran) on
// ValidateDataBoundConfigs with the throttled validation's orderings.
func ValidateDataBound() (Result, error) {
	o := defaultValidateOptions()
	o.orderings = ValidateThrottledOrderings
	return runValidation("validate-databound", "Predicted vs measured epoch on data-bound configurations the validation does not hold, median of interleaved repeats on this machine", ValidateDataBoundConfigs, o)
}
