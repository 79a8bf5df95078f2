//go:build !cuda

package cuda

import (
	"testing"

	"github.com/tierflow/tierflow/realrun"
)

func testEngine(o realrun.EngineOptions) (*Engine, error) { return NewEmulated(o) }

func testGPU(*testing.T) gpu { return newEmu() }
