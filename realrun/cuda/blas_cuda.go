//go:build cuda

package cuda

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

// cuBLAS's C ABI, declared here so that no cuBLAS header is needed at
// build time: handles and streams are pointers, enums are ints.
typedef int (*cublas_create_t)(void **);
typedef int (*cublas_destroy_t)(void *);
typedef int (*cublas_set_stream_t)(void *, void *);
typedef int (*cublas_set_math_mode_t)(void *, int);
typedef int (*cublas_get_property_t)(int, int *);
typedef int (*cublas_set_workspace_t)(void *, void *, size_t);
typedef int (*cublas_sgemm_sb_t)(void *, int, int, int, int, int, const float *, const float *, int, long long,
                                 const float *, int, long long, const float *, float *, int, long long, int);

static cublas_create_t p_create;
static cublas_destroy_t p_destroy;
static cublas_set_stream_t p_set_stream;
static cublas_set_math_mode_t p_set_math_mode;
static cublas_get_property_t p_get_property;
static cublas_sgemm_sb_t p_sgemm;
static cublas_set_workspace_t p_set_workspace; // optional (cuBLAS 11.4 on)

// blas_open dlopens path (after libcublasLt from the same folder, which it
// needs) and resolves the entry points; on failure *err is set.
static int blas_open(const char *path, const char *lt, const char **err) {
	if (lt != 0) dlopen(lt, RTLD_NOW | RTLD_GLOBAL); // best effort: the library may find it itself
	void *h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	if (h == 0) { *err = dlerror(); return 1; }
	p_create = (cublas_create_t)dlsym(h, "cublasCreate_v2");
	p_destroy = (cublas_destroy_t)dlsym(h, "cublasDestroy_v2");
	p_set_stream = (cublas_set_stream_t)dlsym(h, "cublasSetStream_v2");
	p_set_math_mode = (cublas_set_math_mode_t)dlsym(h, "cublasSetMathMode");
	p_get_property = (cublas_get_property_t)dlsym(h, "cublasGetProperty");
	p_sgemm = (cublas_sgemm_sb_t)dlsym(h, "cublasSgemmStridedBatched");
	p_set_workspace = (cublas_set_workspace_t)dlsym(h, "cublasSetWorkspace_v2");
	if (!p_create || !p_destroy || !p_set_stream || !p_set_math_mode || !p_get_property || !p_sgemm) {
		*err = "a cuBLAS entry point is missing (cublasCreate_v2, cublasSetStream_v2, cublasSetMathMode, cublasGetProperty or cublasSgemmStridedBatched)";
		dlclose(h);
		return 1;
	}
	return 0;
}

static int blas_create(void **h) { return p_create(h); }
static int blas_destroy(void *h) { return p_destroy(h); }
static int blas_set_stream(void *h, void *s) { return p_set_stream(h, s); }
static int blas_set_math_mode(void *h, int m) { return p_set_math_mode(h, m); }
static int blas_get_property(int t, int *v) { return p_get_property(t, v); }
static int blas_set_workspace(void *h, unsigned long long w, size_t n) {
	return p_set_workspace ? p_set_workspace(h, (void *)w, n) : -1;
}
static int blas_sgemm(void *h, int ta, int tb, int m, int n, int k, float alpha, unsigned long long a, int lda,
                      long long sa, unsigned long long b, int ldb, long long sb, float beta, unsigned long long c,
                      int ldc, long long sc, int batch) {
	return p_sgemm(h, ta, tb, m, n, k, &alpha, (const float *)a, lda, sa, (const float *)b, ldb, sb, &beta,
	               (float *)c, ldc, sc, batch);
}
*/
import "C"

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"github.com/tierflow/tierflow/realrun/cuda/cublas"
)

// cuBLAS's enums the engine uses.
const (
	cublasOpN             = 0
	cublasOpT             = 1
	cublasDefaultMath     = 0
	cublasTF32TensorMath  = 3
	propMajor, propMinor  = 0, 1
	propPatch             = 2
	cublasStatusSuccess   = 0
	cublasNotInitialized  = 1
	cublasArchMismatch    = 8
	cublasExecutionFailed = 13
)

var (
	blasOnce sync.Once
	blasPath string // the library loaded, once per process
	blasErr  error
)

// loadCuBLAS opens cuBLAS once per process, searching as cublas.Load says.
func loadCuBLAS() (string, error) {
	blasOnce.Do(func() {
		blasPath, blasErr = cublas.Load(cublas.OS, func(c string) error {
			cs := C.CString(c)
			defer C.free(unsafe.Pointer(cs))
			var lt *C.char
			if filepath.IsAbs(c) {
				lt = C.CString(strings.Replace(c, "libcublas.so", "libcublasLt.so", 1))
				defer C.free(unsafe.Pointer(lt))
			}
			var msg *C.char
			if C.blas_open(cs, lt, &msg) != 0 {
				return errors.New(C.GoString(msg))
			}
			return nil
		})
	})
	return blasPath, blasErr
}

func blasStatus(what string, r C.int) error {
	if r == cublasStatusSuccess {
		return nil
	}
	names := map[C.int]string{cublasNotInitialized: "CUBLAS_STATUS_NOT_INITIALIZED", cublasArchMismatch: "CUBLAS_STATUS_ARCH_MISMATCH",
		cublasExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED"}
	if n, ok := names[r]; ok {
		return fmt.Errorf("%s: %s", what, n)
	}
	return fmt.Errorf("%s: cuBLAS status %d", what, int(r))
}

// blasWorkspace is the device memory given to cuBLAS as its workspace.
const blasWorkspace = 32 << 20

// cublasBLAS is a cuBLAS handle bound to the compute stream, with its
// workspace (0: cuBLAS's own).
type cublasBLAS struct {
	h    unsafe.Pointer
	ws   ptr
	g    *cudaGPU
	desc string
}

func (g *cudaGPU) openBLAS(tf32 bool) (blas, error) {
	path, err := loadCuBLAS()
	if err != nil {
		return nil, err
	}
	b := &cublasBLAS{g: g}
	if err := blasStatus("cublasCreate", C.blas_create(&b.h)); err != nil {
		return nil, err
	}
	mode := C.int(cublasDefaultMath)
	if tf32 {
		mode = cublasTF32TensorMath
	}
	if err := blasStatus("cublasSetStream", C.blas_set_stream(b.h, handle(&g.streams[computeStream]))); err != nil {
		b.close()
		return nil, err
	}
	if err := blasStatus("cublasSetMathMode", C.blas_set_math_mode(b.h, mode)); err != nil {
		b.close()
		return nil, err
	}
	// A workspace of its own, so that cuBLAS allocates nothing while the
	// engine records its launches into a CUDA graph.
	if ws, err := g.alloc(blasWorkspace); err == nil {
		if C.blas_set_workspace(b.h, C.ulonglong(ws), C.size_t(blasWorkspace)) == cublasStatusSuccess {
			b.ws = ws
		} else {
			g.free(ws)
		}
	}
	var v [3]C.int
	for i, prop := range []C.int{propMajor, propMinor, propPatch} {
		C.blas_get_property(prop, &v[i])
	}
	b.desc = fmt.Sprintf("cuBLAS %d.%d.%d (%s)", v[0], v[1], v[2], path)
	if tf32 {
		b.desc += ", TF32 tensor-core math"
	}
	return b, nil
}

func (b *cublasBLAS) describe() string { return b.desc }

func (b *cublasBLAS) close() {
	if b.h != nil {
		C.blas_destroy(b.h)
		b.h = nil
	}
	if b.ws != 0 {
		b.g.free(b.ws)
		b.ws = 0
	}
}

func (b *cublasBLAS) sgemm(ta, tb bool, m, n, k int, alpha float32, pa ptr, lda int, sa int64,
	pb ptr, ldb int, sb int64, beta float32, pc ptr, ldc int, sc int64, batch int) error {
	op := func(t bool) C.int {
		if t {
			return cublasOpT
		}
		return cublasOpN
	}
	return blasStatus("cublasSgemmStridedBatched", C.blas_sgemm(b.h, op(ta), op(tb), C.int(m), C.int(n), C.int(k), C.float(alpha),
		C.ulonglong(pa), C.int(lda), C.longlong(sa), C.ulonglong(pb), C.int(ldb), C.longlong(sb), C.float(beta),
		C.ulonglong(pc), C.int(ldc), C.longlong(sc), C.int(batch)))
}
