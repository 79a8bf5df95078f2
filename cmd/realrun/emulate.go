//go:build !cuda

package main

import (
	"os"

	"github.com/tierflow/tierflow/realrun/cuda"
)

// EmulateGPUEnv, set to 1 in the default build (no -tags cuda), registers
// the CUDA engine as --engine cuda on the emulated GPU (cuda.NewEmulated)
// and the emulator as `realrun calibrate`'s GPU. The emulator runs every
// kernel thread by thread in Go, thousands of times slower than a GPU: it
// is for tests and for the GPU bundle's stand-in on machines without a GPU
// (make gpu-bundle; scripts/gpu-bundle/run.sh), never for measurements.
// A build with -tags cuda ignores the variable and links the real engine.
const EmulateGPUEnv = "TIERFLOW_EMULATE_GPU"

func init() {
	if os.Getenv(EmulateGPUEnv) == "1" {
		cuda.RegisterEmulated()
	}
}
