//go:build !cgo

package telemetry

import "fmt"

// NVML is unavailable without cgo.
type NVML struct{ Fake }

// OpenNVML always fails in a build without cgo.
func OpenNVML(index int) (*NVML, error) {
	return nil, fmt.Errorf("%w: built without cgo, NVML unavailable", ErrNoGPU)
}
