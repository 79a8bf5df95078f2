//go:build cuda

package cuda

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun"
)

func testEngine(o realrun.EngineOptions) (*Engine, error) { return New(o) }

func testGPU(t *testing.T) gpu {
	g, err := openCUDA(0)
	require.NoError(t, err)
	return g
}

// timedEngine is testEngine: on a GPU the kernels take time of their own.
func timedEngine(o realrun.EngineOptions) (*Engine, error) { return New(o) }

// kernelGPU is the GPU of the kernel checks (checkKernels).
func kernelGPU(t *testing.T) gpu { return testGPU(t) }
