package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

func TestResumeArgs(t *testing.T) {
	assert.Equal(t, "--dataset twitter --resume", resumeArgs([]string{"--dataset", "twitter"}))
	assert.Equal(t, "--resume --p 4", resumeArgs([]string{"--resume", "--p", "4"}), "added once")
	assert.Equal(t, "--edges 'my file.tsv' --resume", resumeArgs([]string{"--edges", "my file.tsv"}), "quoted for a shell")
}

// A GPU epoch's GEMM note and a calibration's reason for no GPU reach
// the user (the table, --json, the profile's header) naming flags.
func TestRenderNotes(t *testing.T) {
	out := Output{Epochs: []realrun.Epoch{{Epoch: 1}, {Epoch: 2, GPU: &telemetry.Report{Info: telemetry.Info{GEMM: "built-in sgemm_batched kernel (no cuBLAS); {TF32} has no effect without cuBLAS"}}}}}
	renderOutput(&out)
	assert.Equal(t, "built-in sgemm_batched kernel (no cuBLAS); --tf32 has no effect without cuBLAS", out.Epochs[1].GPU.GEMM)

	cal := calibrate.Calibration{NoGPU: (&realrun.EngineUnavailable{Name: "cuda", Hint: "GPU calibration needs a build with -tags cuda (make build-cuda)"}).Error()}
	renderCalibration(&cal)
	assert.Equal(t, "--engine cuda: not in this build; GPU calibration needs a build with -tags cuda (make build-cuda)", cal.NoGPU,
		"as results/scale's profiles say it")
}
