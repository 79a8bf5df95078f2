package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

func TestCheckpointSummary(t *testing.T) {
	var a, b realrun.Epoch
	a.InsideCheckpoints, a.CheckpointBytes, a.CheckpointWaitSeconds = 2, 3_000_000, 0.5
	b.InsideCheckpoints, b.CheckpointBytes, b.CheckpointWaitSeconds = 1, 1_500_000, 0.25
	assert.Equal(t, "checkpoints inside epochs: 3, 4.5 MB written, training waited 0.8 s for them",
		checkpointSummary(Output{Epochs: []realrun.Epoch{a, b}}))
	assert.Empty(t, checkpointSummary(Output{}), "no line when none was taken")
}

func TestGPUSummary(t *testing.T) {
	var e realrun.Epoch
	assert.Empty(t, gpuSummary(Output{Epochs: []realrun.Epoch{e}}), "no line without a GPU")
	e.GPU = &telemetry.Report{Info: telemetry.Info{Name: "NVIDIA H100 80GB HBM3", Driver: "580.159.03", CUDA: "13.0", GEMM: "cuBLAS 13.1.0 (libcublas.so.13)"}}
	e.TransferSeconds, e.HiddenTransferSeconds = 2.5, 2.25
	assert.Equal(t, "GPU NVIDIA H100 80GB HBM3 (driver 580.159.03, CUDA 13.0); products: cuBLAS 13.1.0 (libcublas.so.13); host↔GPU copies 2.50 s in flight, 2.25 s of it hidden behind training",
		gpuSummary(Output{Epochs: []realrun.Epoch{e}}))
}
