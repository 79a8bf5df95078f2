package block

import "syscall"

func init() {
	threadCPU = func() float64 {
		var ru syscall.Rusage
		if err := syscall.Getrusage(1, &ru); err != nil { // RUSAGE_THREAD
			panic(err)
		}
		return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
	}
}
