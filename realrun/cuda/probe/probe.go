//go:build cuda

// Package probe stops a cuda-tagged binary cleanly when there is no usable
// GPU, before gorgonia.org/cu is initialised (its init exits with status 1
// and a driver message when cuInit fails).
//
// Go initialises packages in import-path order among those whose imports
// are already initialised (the spec's rule since Go 1.21). This package
// imports only packages gorgonia.org/cu imports too ("C", fmt, os) and its
// path sorts before "gorgonia.org/cu", so its init always runs first. In a
// test binary it prints a SKIP line and exits 0 instead of 2, so that
// `go test -tags cuda ./...` passes visibly on a machine without a GPU.
package probe

/*
#cgo LDFLAGS: -lcuda
#include <cuda.h>

static int probe_devices(int *count) {
	CUresult r = cuInit(0);
	if (r != CUDA_SUCCESS) return (int)r;
	return (int)cuDeviceGetCount(count);
}

static const char *probe_error_name(int r) {
	const char *s = 0;
	if (cuGetErrorName((CUresult)r, &s) != CUDA_SUCCESS || s == 0) return "CUDA_ERROR_UNKNOWN";
	return s;
}
*/
import "C"

import (
	"fmt"
	"os"
)

// Devices is the number of CUDA devices found (at least 1 once init ran).
var Devices int

func init() {
	var n C.int
	r := C.probe_devices(&n)
	if r == 0 && n > 0 {
		Devices = int(n)
		return
	}
	reason := "no CUDA device"
	if r != 0 {
		reason = "cuInit: " + ErrorName(int(r))
	}
	if testBinary() {
		fmt.Printf("--- SKIP: %s: no usable CUDA GPU (%s); the cuda-tagged tests need one\n", os.Args[0], reason)
		os.Exit(0)
	}
	fmt.Fprintf(os.Stderr, "realrun: no usable CUDA GPU (%s): this binary was built with -tags cuda and needs an NVIDIA GPU and driver; run the default build (make build) on this machine\n", reason)
	os.Exit(2)
}

// ErrorName is the CUresult r's name, e.g. CUDA_ERROR_NO_DEVICE.
func ErrorName(r int) string { return C.GoString(C.probe_error_name(C.int(r))) }

// testBinary reports whether this process is a `go test` binary (it is
// given -test.* flags). No strings import: see the package comment.
func testBinary() bool {
	for _, a := range os.Args[1:] {
		if len(a) > 6 && a[:6] == "-test." {
			return true
		}
	}
	return false
}
