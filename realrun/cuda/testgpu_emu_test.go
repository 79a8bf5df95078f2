//go:build !cuda

package cuda

import (
	"testing"
	"time"

	"github.com/tierflow/tierflow/realrun"
)

func testEngine(o realrun.EngineOptions) (*Engine, error) { return NewEmulated(o) }

func testGPU(*testing.T) gpu { return newEmu() }

// timedEngine is testEngine for a synctest bubble, whose fake clock stands
// still while the CPU emulates a kernel: there every launch takes 1 ms of
// the bubble's time, so the kernel time measured between the engine's
// events is positive, as on a GPU.
func timedEngine(o realrun.EngineOptions) (*Engine, error) {
	return newEngine(o, timedEmu{newEmu()})
}

// timedEmu is the emulated GPU whose kernels take time.
type timedEmu struct{ *emuGPU }

func (g timedEmu) launch(s stream, name string, grid [3]int, block [2]int, params []uint64) error {
	time.Sleep(time.Millisecond) // the kernel's duration (fake time in a bubble)
	return g.emuGPU.launch(s, name, grid, block, params)
}
