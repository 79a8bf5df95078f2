//go:build !linux

package model

import "time"

var start = time.Now()

// threadCPU falls back to the wall clock where there is no per-thread CPU
// clock.
func threadCPU() float64 { return time.Since(start).Seconds() }
