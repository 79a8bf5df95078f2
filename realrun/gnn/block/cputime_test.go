package block

import "time"

// threadCPU returns the calling thread's CPU time in seconds (Linux;
// elsewhere the wall clock).
var threadCPU = func() float64 { return float64(time.Now().UnixNano()) / 1e9 }
