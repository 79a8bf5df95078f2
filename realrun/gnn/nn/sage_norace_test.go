//go:build !race

package nn

// sageRace is whether the race detector is on.
const sageRace = false
