//go:build race

package nn

// sageRace is whether the race detector is on (sync.Pool then drops
// items at random, so steady-state allocation counts mean nothing).
const sageRace = true
