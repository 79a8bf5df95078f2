// Package calibrate measures this machine into a device profile the
// simulator reads: the disk with partition-sized O_DIRECT transfers (alone,
// both directions at once, latency) and the checksum rate, the CPU engine's
// training cost fitted to synthetic buckets (or at one run's exact shape),
// how training and partition I/O slow each other, and — in a build with
// the CUDA engine — the GPU. It never looks at a training run.
package calibrate
