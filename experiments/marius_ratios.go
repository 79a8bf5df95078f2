package experiments

import (
	"fmt"
	"math"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/validate"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "marius-ratios", Description: "Marius Figures 10-11's claim for real: BETA, Hilbert-symmetric and Hilbert trained on a Freebase86m-shaped graph (ComplEx d=100, p=32, c=8) on a disk held by a kernel limit to p3.2xlarge's I/O-to-compute ratio; runtime ratios beside I/O ratios, measured and predicted (root; about 10 minutes on 2 cores)", Run: MariusRatios, Slow: true})
}

// MariusProfile is the machine of Marius's single-GPU experiments (§5
// Setup).
const MariusProfile = "p3.2xlarge"

// MariusOrderings are the edge-bucket orderings Marius §5.3 compares, in
// the paper's order.
var MariusOrderings = []string{"beta", "hilbert", "hilbert-symmetric"}

// MariusLabel is how the paper names each ordering in its figures.
var MariusLabel = map[string]string{"beta": "BETA", "hilbert": "Hilbert", "hilbert-symmetric": "Hilbert-sym"}

// MariusRatiosConfig is Marius Figure 10's d=100 configuration (ComplEx,
// p=32, c=8, batches of 50,000 edges sharing 1,000 negatives per chunk)
// on a Freebase86m-shaped graph small enough for a few minutes of epochs
// on 2 cores.
var MariusRatiosConfig = ValidateConfig{"freebase86m", 0.002, workload.ComplEx, 100, 1000, 50_000, 32, 8,
	"Marius Figure 10's d=100 configuration (ComplEx, 1,000 negatives, p=32, c=8) on a Freebase86m-shaped graph, the disk held to p3.2xlarge's I/O-to-compute ratio"}

// MariusRatios trains BETA, Hilbert-symmetric and Hilbert for real on
// MariusRatiosConfig with this machine's disk held (diskcap) to the speed
// at which BETA's I/O takes, beside this machine's compute, what it takes
// beside a V100's on p3.2xlarge's EBS volume, and sets their epoch ratios
// beside their I/O ratios, measured and predicted.
//
// The scaling: on p3.2xlarge (simulated, marius-fig10) BETA at d=100
// moves its bytes in ρ times its compute time, at the profile's disk
// rates; here the limit L is chosen so that BETA's bytes, each direction
// held to L, take ρ times this machine's compute for the same epoch (the
// calibrated engine at the configuration's shape, through the same
// simulator): L = max(read, write bytes) ÷ (ρ × compute). The two
// machines then stand in the same relation of disk to compute, which is
// what decides how much the orderings' I/O shows in their epochs;
// --emulate-disk p3.2xlarge itself (400 MB/s) would leave this machine's
// 2-core compute, ~10× slower than a V100 at this shape, nothing to wait
// for.
func MariusRatios() (Result, error) {
	vc := MariusRatiosConfig
	paper := map[string]float64{}
	var rho float64
	prof, err := devices.Preset(MariusProfile)
	if err != nil {
		return Result{}, err
	}
	for _, o := range MariusOrderings {
		// Marius §5.3 on p3.2xlarge: the simulated epochs of marius-fig10.
		pe := validate.PresetEpoch{System: "marius", Dataset: "freebase86m", Dim: vc.Dim, P: 32, C: 8, Ordering: o, Profile: prof}
		rep, err := validate.SimulatePreset(pe)
		if err != nil {
			return Result{}, fmt.Errorf("marius-ratios: %s %s d=%d p=%d c=%d %s: %w", pe.System, pe.Dataset, pe.Dim, pe.P, pe.C, o, err)
		}
		paper[o] = rep.EpochSeconds
		if o == "beta" {
			rho = ioSeconds(prof.Disk, float64(rep.ReadBytes), float64(rep.WriteBytes)) / rep.ComputeSeconds
		}
	}
	lim, note, err := mariusRatiosLimit(vc, rho)
	if err != nil {
		return Result{}, fmt.Errorf("marius-ratios: %w", err)
	}
	o := validateOptions{orderings: MariusOrderings, tolerance: ValidateThrottledTolerance, looser: ValidateTolerance,
		looserWhat: "the criterion of the validation on the disk as it is", limits: []diskcap.Limits{lim},
		extra: func(label string, runs []orderingRuns) []string { return mariusRatioNotes(label, runs, paper) }}
	r, err := runValidation("marius-ratios", "Marius Figures 10–11 for real: epoch ratios beside I/O ratios on a disk held to p3.2xlarge's I/O-to-compute ratio, median of interleaved repeats on this machine", []ValidateConfig{vc}, o)
	r.Notes = append([]string{note}, r.Notes...)
	return r, err
}

// ioSeconds is the time a disk needs for read and write bytes at its own
// rates: each direction alone, or both through the combined rate when
// the device shares it.
func ioSeconds(d devices.Disk, read, write float64) float64 {
	t := math.Max(read/float64(d.Read), write/float64(d.Write))
	if !d.FullDuplex && d.Combined > 0 {
		t = math.Max(t, (read+write)/float64(d.Combined))
	}
	return t
}

// mariusRatiosLimit prepares vc's graph, calibrates the engine at its
// shape and predicts BETA's compute on this machine, and returns the
// limit that puts BETA's I/O at rho times that compute, with a note
// saying how it was set.
func mariusRatiosLimit(vc ValidateConfig, rho float64) (diskcap.Limits, string, error) {
	dir, err := os.MkdirTemp("", "tierflow-marius-ratios-*")
	if err != nil {
		return diskcap.Limits{}, "", err
	}
	defer os.RemoveAll(dir)
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: vc.Dataset, Scale: vc.Scale, Seed: 1, P: vc.P, Dim: vc.Dim, Model: string(vc.Model), Workdir: filepath.Join(dir, "w")})
	if err != nil {
		return diskcap.Limits{}, "", err
	}
	h := validateHyper(vc)
	cal, err := calibrate.ShapeProfile(st, h, dir)
	if err != nil {
		return diskcap.Limits{}, "", err
	}
	plans, _, err := orderings.Select([]string{"beta"}, vc.P, vc.C, orderings.Belady, 0)
	if err != nil {
		return diskcap.Limits{}, "", err
	}
	rep, err := validate.Predict(st, plans[0], h, true, cal.Profile)
	if err != nil {
		return diskcap.Limits{}, "", err
	}
	// Rounded to 0.1 MB/s: the kernel takes whole bytes per second.
	l := devices.Bandwidth(math.Round(float64(max(rep.ReadBytes, rep.WriteBytes))/(rho*rep.ComputeSeconds)/1e5) * 1e5)
	note := fmt.Sprintf("The disk limit, %.1f MB/s each way, keeps p3.2xlarge's proportion: there (simulated, marius-fig10) BETA at d=%d, p=%d, c=%d moves its bytes in %.2f× its compute time at the EBS volume's rates; here BETA's %.0f MB read and %.0f MB written take %.2f× this machine's %.2f s of compute (the engine calibrated at this shape, %.0f edges/s) at %.1f MB/s each way.",
		float64(l)/1e6, vc.Dim, vc.P, vc.C, rho, float64(rep.ReadBytes)/1e6, float64(rep.WriteBytes)/1e6, rho, rep.ComputeSeconds, float64(cal.Profile.CPU.Train.ComplEx.Edges), float64(l)/1e6)
	return diskcap.Limits{Read: l, Write: l}, note, nil
}

// mariusRatioNotes sets each ordering's epoch ÷ BETA's beside its I/O ÷
// BETA's, measured and predicted, and the ratios on p3.2xlarge.
func mariusRatioNotes(label string, runs []orderingRuns, paper map[string]float64) []string {
	var beta *orderingRuns
	for i := range runs {
		if runs[i].name == "beta" {
			beta = &runs[i]
		}
	}
	if beta == nil {
		return nil
	}
	b := beta.cmps[beta.median()]
	var notes []string
	for _, rn := range runs {
		if rn.name == "beta" {
			continue
		}
		c := rn.cmps[rn.median()]
		lo, hi := rn.span(func(c validate.Comparison) float64 { return c.Measured.EpochSeconds })
		blo, bhi := beta.span(func(c validate.Comparison) float64 { return c.Measured.EpochSeconds })
		io := float64(c.Measured.ReadBytes+c.Measured.WriteBytes) / float64(b.Measured.ReadBytes+b.Measured.WriteBytes)
		notes = append(notes, fmt.Sprintf("%s: %s ÷ BETA — I/O %.2f×; epoch measured %.2f× (%.2f–%.2f over the repeats' ranges), predicted %.2f×; on p3.2xlarge (simulated) %.2f×.",
			label, MariusLabel[rn.name], io, c.Measured.EpochSeconds/b.Measured.EpochSeconds, lo/bhi, hi/blo,
			c.Predicted.EpochSeconds/b.Predicted.EpochSeconds, paper[rn.name]/paper["beta"]))
	}
	return notes
}
