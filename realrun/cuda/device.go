//go:build cuda

package cuda

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>
#include <stdlib.h>

static int host_alloc(void **p, size_t n) { return (int)cuMemHostAlloc(p, n, CU_MEMHOSTALLOC_PORTABLE); }
static int host_register(void *p, size_t n) { return (int)cuMemHostRegister(p, n, CU_MEMHOSTREGISTER_PORTABLE); }
static int host_unregister(void *p) { return (int)cuMemHostUnregister(p); }
static int stream_destroy(void *s) { return (int)cuStreamDestroy((CUstream)s); }
static const char *err_name(int r) {
	const char *s = 0;
	if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS || s == 0) return "CUDA_ERROR_UNKNOWN";
	return s;
}
*/
import "C"

import (
	"fmt"
	"math"
	"unsafe"

	"gorgonia.org/cu"

	_ "github.com/tierflow/tierflow/realrun/cuda/probe" // must initialise before gorgonia.org/cu
)

func cerr(what string, r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", what, C.GoString(C.err_name(r)))
}

// pinned is page-locked host memory from cuMemHostAlloc.
type pinned struct {
	p unsafe.Pointer
	n int64
}

func allocPinned(n int64) (pinned, error) {
	var p unsafe.Pointer
	if err := cerr("cuMemHostAlloc", C.host_alloc(&p, C.size_t(n))); err != nil {
		return pinned{}, fmt.Errorf("%d bytes: %w", n, err)
	}
	return pinned{p: p, n: n}, nil
}

func (h *pinned) free() {
	if h.p != nil {
		cu.MemFreeHost(h.p)
		h.p, h.n = nil, 0
	}
}

func (h pinned) int32s() []int32 { return unsafe.Slice((*int32)(h.p), h.n/4) }
func (h pinned) floats() []float32 {
	return unsafe.Slice((*float32)(h.p), h.n/4)
}

func registerHost(b []byte) error {
	return cerr("cuMemHostRegister", C.host_register(unsafe.Pointer(unsafe.SliceData(b)), C.size_t(len(b))))
}

func unregisterHost(b []byte) error {
	return cerr("cuMemHostUnregister", C.host_unregister(unsafe.Pointer(unsafe.SliceData(b))))
}

func destroyStream(s *cu.Stream) {
	// cu.Stream is a struct holding the CUstream handle only.
	C.stream_destroy(*(*unsafe.Pointer)(unsafe.Pointer(s)))
	*s = cu.Stream{}
}

// dev is device memory of n bytes.
type dev struct {
	p cu.DevicePtr
	n int64
}

func allocDev(n int64) (dev, error) {
	if n <= 0 {
		n = 4
	}
	p, err := cu.MemAlloc(n)
	if err != nil {
		return dev{}, fmt.Errorf("cuMemAlloc %d bytes: %w", n, err)
	}
	return dev{p: p, n: n}, nil
}

func (d *dev) free() {
	if d.p != 0 {
		cu.MemFree(d.p)
		d.p, d.n = 0, 0
	}
}

// at is the address of the float32 or int32 element i.
func (d dev) at(i int64) cu.DevicePtr { return d.p + cu.DevicePtr(4*i) }

// launcher launches the module's functions. Every kernel parameter is
// passed as 8 bytes (cu.Function.Launch copies 8 bytes per parameter; the
// driver reads the parameter's own width, so 4-byte int and float
// parameters take the low half, little-endian).
type launcher struct {
	mod cu.Module
	fn  map[string]cu.Function
}

func loadKernels(ptx string, names []string) (*launcher, error) {
	mod, err := cu.LoadData(ptx)
	if err != nil {
		return nil, fmt.Errorf("load PTX module: %w", err)
	}
	k := &launcher{mod: mod, fn: map[string]cu.Function{}}
	for _, n := range names {
		f, err := mod.Function(n)
		if err != nil {
			return nil, fmt.Errorf("kernel %s: %w", n, err)
		}
		k.fn[n] = f
	}
	return k, nil
}

func param(a any) uint64 {
	switch v := a.(type) {
	case cu.DevicePtr:
		return uint64(v)
	case int:
		return uint64(int64(v))
	case int64:
		return uint64(v)
	case float32:
		return uint64(math.Float32bits(v))
	case bool:
		if v {
			return 1
		}
		return 0
	}
	panic(fmt.Sprintf("cuda: unsupported kernel parameter %T", a))
}

const blockSize = 256

// launch1D runs name over threads threads in blocks of 256.
func (k *launcher) launch1D(s cu.Stream, name string, threads int64, args ...any) error {
	if threads <= 0 {
		return nil
	}
	return k.launch(s, name, int((threads+blockSize-1)/blockSize), 1, 1, blockSize, 1, args...)
}

func (k *launcher) launch(s cu.Stream, name string, gx, gy, gz, bx, by int, args ...any) error {
	vals := make([]uint64, len(args))
	ptrs := make([]unsafe.Pointer, len(args))
	for i, a := range args {
		vals[i] = param(a)
		ptrs[i] = unsafe.Pointer(&vals[i])
	}
	if err := k.fn[name].Launch(gx, gy, gz, bx, by, 1, 0, s, ptrs); err != nil {
		return fmt.Errorf("launch %s: %w", name, err)
	}
	return nil
}
