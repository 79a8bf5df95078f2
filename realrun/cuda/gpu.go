package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/tierflow/tierflow/realrun/telemetry"
)

// ptr is a device address; 0 is NULL.
type ptr uint64

// stream names one of the engine's two streams: kernels and per-batch
// copies go on computeStream, partition installs and evictions on
// copyStream so that they overlap training.
type stream int

const (
	computeStream stream = iota
	copyStream
)

// gpu is what the engine needs of a device: the CUDA driver in builds with
// -tags cuda (cuda.go), or the pure-Go emulator (emu.go) that runs the
// same launches sequentially so that the engine's orchestration is tested
// on machines without a GPU.
type gpu interface {
	// bind makes the device current on this goroutine's OS thread; call
	// the returned function when done.
	bind() (func(), error)
	alloc(n int64) (ptr, error)
	free(p ptr)
	hostAlloc(n int64) (unsafe.Pointer, error) // page-locked
	hostFree(p unsafe.Pointer)
	register(b []byte) error // page-lock existing host memory
	unregister(b []byte) error
	htod(dst ptr, src unsafe.Pointer, n int64, s stream) error
	dtoh(dst unsafe.Pointer, src ptr, n int64, s stream) error
	memset32(dst ptr, v uint32, n int64, s stream) error
	// launch runs kernel name; every parameter is passed as 8 bytes.
	launch(s stream, name string, grid [3]int, block [2]int, params []uint64) error
	sync(s stream) error
	// record marks event ev (0 start, 1 stop) on s; elapsed waits for
	// event 1 and returns the seconds between them.
	record(ev int, s stream) error
	elapsed() (float64, error)
	info() telemetry.Info
	real() bool // a physical GPU (telemetry applies)
	close()
}

// param encodes a kernel argument as the 8 bytes the launch passes; the
// kernel reads its own width (4-byte int and float take the low half,
// little-endian).
func param(a any) (uint64, error) {
	switch v := a.(type) {
	case ptr:
		return uint64(v), nil
	case int:
		return uint64(int64(v)), nil
	case int64:
		return uint64(v), nil
	case float32:
		return uint64(math.Float32bits(v)), nil
	}
	return 0, fmt.Errorf("cuda: unsupported kernel parameter %T", a)
}

const blockSize = 256

// launch1D runs name over threads threads in blocks of 256.
func (e *Engine) launch1D(s stream, name string, threads int64, args ...any) error {
	if threads <= 0 {
		return nil
	}
	return e.launch(s, name, int((threads+blockSize-1)/blockSize), 1, 1, blockSize, 1, args...)
}

func (e *Engine) launch(s stream, name string, gx, gy, gz, bx, by int, args ...any) error {
	vals := make([]uint64, len(args))
	for i, a := range args {
		v, err := param(a)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if err := e.g.launch(s, name, [3]int{gx, gy, gz}, [2]int{bx, by}, vals); err != nil {
		return fmt.Errorf("launch %s: %w", name, err)
	}
	return nil
}
