package model

import "golang.org/x/sys/unix"

// threadCPU returns the CPU seconds the calling OS thread has run: on a
// machine shared with other work it does not count time spent descheduled,
// as the wall clock does.
func threadCPU() float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(unix.CLOCK_THREAD_CPUTIME_ID, &ts); err != nil {
		panic(err) // Linux always has this clock
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}
