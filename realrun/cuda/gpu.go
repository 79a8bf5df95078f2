package cuda

import (
	"fmt"
	"math"
	"unsafe"

	"github.com/tierflow/tierflow/realrun/telemetry"
)

// ptr is a device address; 0 is NULL.
type ptr uint64

// stream names one of the engine's streams: kernels (and, with --buffer
// host, the rows a batch touches) go on computeStream; whole-partition
// installs and evictions on copyStream and each batch's index upload on
// uploadStream, so that both overlap training. A partition copy can be
// long: the small index uploads have a stream of their own so that they
// never queue behind one.
type stream int

const (
	computeStream stream = iota
	copyStream
	uploadStream
	numStreams
)

// ringSlots is the number of index pieces in flight: the producer samples
// pieces into the pinned slots of a ring while the GPU trains earlier ones.
const ringSlots = 4

// The engine's events, each recorded again and again in place.
const (
	evBucketStart = iota // compute stream, around a bucket (kernel time)
	evBucketEnd
	evStageStart // --buffer host: a batch's rows shipped in ...
	evStageEnd
	evUnstageStart // ... and back
	evUnstageEnd
	evCopyStart // calibration: around one copy
	evCopyEnd
	evUploaded                          // evUploaded+j: index slot j is on the GPU (upload stream)
	evConsumed = evUploaded + ringSlots // evConsumed+j: the kernels reading index slot j are done
	numEvents  = evConsumed + ringSlots
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
	// record marks event ev on s; wait makes s wait for ev's last
	// record; syncEvent blocks the host until it has happened; elapsed
	// waits for event b and returns the seconds from a to b.
	record(ev int, s stream) error
	wait(s stream, ev int) error
	syncEvent(ev int) error
	elapsed(a, b int) (float64, error)
	// capture starts recording the compute stream's work into a graph
	// (nothing runs until the graph is launched); endCapture ends the
	// recording and returns the graph, instantiated; launchGraph runs it
	// on the compute stream; freeGraph releases it.
	capture() error
	endCapture() (graph, error)
	launchGraph(graph) error
	freeGraph(graph)
	// openBLAS opens a strided batched SGEMM for the compute stream
	// (cuBLAS on a GPU), with TF32 tensor-core math when tf32; an error
	// says why there is none (the engine then uses its own kernel).
	openBLAS(tf32 bool) (blas, error)
	info() telemetry.Info
	real() bool // a physical GPU (telemetry applies)
	close()
}

// graph is a recorded sequence of the compute stream's work, ready to run
// (each gpu's own handle).
type graph any

// blas is a library's strided batched SGEMM on the compute stream, with
// cuBLAS's column-major convention: for z < batch,
// C_z = alpha·op(A_z)·op(B_z) + beta·C_z with op(A) m×k and op(B) k×n; C is
// not read when beta is 0. (Engine.gemm maps the engine's row-major
// products onto it.)
type blas interface {
	sgemm(transA, transB bool, m, n, k int, alpha float32, a ptr, lda int, sa int64,
		b ptr, ldb int, sb int64, beta float32, c ptr, ldc int, sc int64, batch int) error
	// describe says which library this is, e.g. "cuBLAS 13.1.0
	// (/path/libcublas.so.13), TF32".
	describe() string
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

// eachSpan is adagrad_each's largest block: the elements of a row one
// block steps (a thread each); narrower rows take a block of their width
// rounded up to whole warps.
const eachSpan = 128

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
