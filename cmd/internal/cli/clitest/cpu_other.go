//go:build !linux

package clitest

// oneCPU runs start as it is: only Linux lets a child be started on fewer
// CPUs here, so elsewhere the check varies the temp dir alone.
func oneCPU(start func() ([]byte, error)) ([]byte, error) { return start() }
