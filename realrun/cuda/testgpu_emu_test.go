//go:build !cuda

package cuda

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
)

// newTestGPU is the emulator launching train.cu itself compiled for the
// CPU (srcgpu_test.go) where a C++ compiler is found, else launching the
// Go transcription of the kernels; an error if the source fails to build.
// noBLAS: the products run the engine's SGEMM kernel, not the emulated
// cuBLAS.
func newTestGPU(noBLAS bool) (gpu, error) {
	lib, err := sourceKernels()
	if err != nil {
		return nil, err
	}
	if lib == nil {
		g := newEmu()
		g.noBLAS = noBLAS
		return g, nil
	}
	g := newSrcGPU(lib)
	g.noBLAS = noBLAS
	return g, nil
}

func testEngine(o realrun.EngineOptions) (*Engine, error) {
	g, err := newTestGPU(false)
	if err != nil {
		return nil, err
	}
	return newEngine(o, g)
}

func testGPU(t *testing.T) gpu {
	g, err := newTestGPU(false)
	require.NoError(t, err)
	return g
}

// kernelGPU is the GPU of the kernel checks (checkKernels): the test GPU
// without cuBLAS, so that the products run the SGEMM kernel.
func kernelGPU(t *testing.T) gpu {
	g, err := newTestGPU(true)
	require.NoError(t, err)
	return g
}

// timedEngine is testEngine for a synctest bubble, whose fake clock stands
// still while the CPU emulates a kernel: there every launch takes 1 ms of
// the bubble's time, so the kernel time measured between the engine's
// events is positive, as on a GPU.
func timedEngine(o realrun.EngineOptions) (*Engine, error) {
	g, err := newTestGPU(false)
	if err != nil {
		return nil, err
	}
	return newEngine(o, timedGPU{g})
}

// timedGPU is the emulated GPU whose kernels take time.
type timedGPU struct{ gpu }

func (g timedGPU) launch(s stream, name string, grid [3]int, block [2]int, params []uint64) error {
	time.Sleep(time.Millisecond) // the kernel's duration (fake time in a bubble)
	return g.gpu.launch(s, name, grid, block, params)
}
