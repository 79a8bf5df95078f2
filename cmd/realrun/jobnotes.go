package main

import (
	"slices"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/calibrate"
)

// resumeArgs are a command line's arguments with --resume added (once),
// quoted for a shell where they need it.
func resumeArgs(args []string) string {
	out := append([]string(nil), args...)
	if !slices.Contains(out, "--resume") && !slices.Contains(out, "-resume") {
		out = append(out, "--resume")
	}
	for i, a := range out {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}

// renderOutput renders the notes a training run's output carries for the
// user (each GPU epoch's GEMM note names fields: {TF32}) before it is
// printed or encoded.
func renderOutput(out *Output) {
	for i := range out.Epochs {
		if g := out.Epochs[i].GPU; g != nil {
			g.GEMM = cli.Render(g.GEMM)
		}
	}
}

// renderCalibration renders the notes a calibration carries for the user
// (NoGPU: why no GPU was measured, naming {Engine}) before the profile's
// header is written or the calibration printed.
func renderCalibration(cal *calibrate.Calibration) {
	cal.NoGPU = cli.Render(cal.NoGPU)
}
