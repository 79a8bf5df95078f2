package nn

import "golang.org/x/sys/unix"

// cpuClock returns the CPU seconds of clock (a thread's or the whole
// process's): on a machine shared with other work they do not count time
// spent descheduled, as the wall clock does.
func cpuClock(clock int32) float64 {
	var ts unix.Timespec
	if err := unix.ClockGettime(clock, &ts); err != nil {
		panic(err) // Linux always has these clocks
	}
	return float64(ts.Sec) + float64(ts.Nsec)/1e9
}

// threadCPU is the calling thread's CPU seconds.
func threadCPU() float64 { return cpuClock(unix.CLOCK_THREAD_CPUTIME_ID) }

// processCPU is the process's CPU seconds, every thread together.
func processCPU() float64 { return cpuClock(unix.CLOCK_PROCESS_CPUTIME_ID) }
