package clitest

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

// oneCPU runs start (which starts a child process and waits for it) on a
// thread allowed a single CPU, so that the child's runtime.NumCPU is 1
// (the affinity is inherited); where this process has one already, start
// runs as it is.
func oneCPU(start func() ([]byte, error)) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var was unix.CPUSet
	if err := unix.SchedGetaffinity(0, &was); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	if was.Count() < 2 {
		return start()
	}
	var one unix.CPUSet
	for cpu := 0; cpu < len(was)*64; cpu++ {
		if was.IsSet(cpu) {
			one.Set(cpu)
			break
		}
	}
	if err := unix.SchedSetaffinity(0, &one); err != nil {
		return nil, fmt.Errorf("sched_setaffinity: %w", err)
	}
	defer unix.SchedSetaffinity(0, &was)
	return start()
}
