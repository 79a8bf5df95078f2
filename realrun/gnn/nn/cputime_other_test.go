//go:build !linux

package nn

import "time"

var start = time.Now()

// threadCPU falls back to the wall clock.
func threadCPU() float64 { return time.Since(start).Seconds() }

// processCPU falls back to the wall clock.
func processCPU() float64 { return time.Since(start).Seconds() }
