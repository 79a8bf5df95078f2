//go:build !race

package memory

const raceOn = false
