//go:build race

package memory

// raceOn is whether the race detector is on: sync.Pool then drops items
// at random, so the GEMM pool's buffers do not settle and Measure's
// count is not the step's own.
const raceOn = true
