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
static int event_destroy(void *e) { return (int)cuEventDestroy((CUevent)e); }

// capture_begin records stream s into a graph (relaxed: other threads'
// driver calls, such as the copy stream's, go on as usual).
static int capture_begin(void *s) { return (int)cuStreamBeginCapture((CUstream)s, CU_STREAM_CAPTURE_MODE_RELAXED); }

// capture_end ends the recording of s and instantiates the graph.
static int capture_end(void *s, void **exec) {
	CUgraph g;
	int r = (int)cuStreamEndCapture((CUstream)s, &g);
	if (r != 0) return r;
	CUgraphExec e;
	r = (int)cuGraphInstantiateWithFlags(&e, g, 0);
	cuGraphDestroy(g);
	if (r == 0) *exec = e;
	return r;
}

static int graph_launch(void *e, void *s) { return (int)cuGraphLaunch((CUgraphExec)e, (CUstream)s); }
static int graph_free(void *e) { return (int)cuGraphExecDestroy((CUgraphExec)e); }

// launch_kernel launches f with its n parameters, each an 8-byte slot of
// params (one cgo call a launch, no allocation).
static int launch_kernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, void *stream,
                         unsigned long long *params, int n) {
	void *args[32];
	if (n > 32) return (int)CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < n; i++) args[i] = &params[i];
	return (int)cuLaunchKernel((CUfunction)f, gx, gy, gz, bx, by, 1, 0, (CUstream)stream, args, 0);
}
*/
import "C"

import (
	"fmt"
	"runtime"
	"unsafe"

	"gorgonia.org/cu"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/cuda/kernels"
	"github.com/tierflow/tierflow/realrun/cuda/probe" // must initialise before gorgonia.org/cu
	"github.com/tierflow/tierflow/realrun/telemetry"
)

func init() {
	realrun.RegisterEngine("cuda", func(o realrun.EngineOptions) (realrun.Engine, error) { return New(o) })
	calibrate.RegisterGPUCalibrator(func(pb int64, h realrun.Hyper, rows, bucket int64) (calibrate.GPUCalibration, error) {
		return Calibrate(func() (gpu, error) { return openCUDA(0) }, pb, h, rows, bucket)
	})
}

// New opens GPU o.Device and allocates the engine for the store's shape.
func New(o realrun.EngineOptions) (*Engine, error) {
	g, err := openCUDA(o.Device)
	if err != nil {
		return nil, err
	}
	return newEngine(o, g)
}

func cerr(what string, r C.int) error {
	if r == 0 {
		return nil
	}
	return fmt.Errorf("%s: %s", what, probe.ErrorName(int(r)))
}

// cudaGPU is the gpu of the CUDA driver API (gorgonia.org/cu).
type cudaGPU struct {
	device  cu.Device
	ctx     cu.CUContext
	mod     cu.Module
	fn      map[string]cu.Function
	streams [numStreams]cu.Stream
	events  [numEvents]cu.Event
}

func openCUDA(index int) (*cudaGPU, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	g := &cudaGPU{fn: map[string]cu.Function{}}
	var err error
	if g.device, err = cu.GetDevice(index); err != nil {
		return nil, fmt.Errorf("cuda device %d: %w", index, err)
	}
	if g.ctx, err = g.device.RetainPrimaryCtx(); err != nil {
		return nil, fmt.Errorf("cuda context: %w", err)
	}
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		return nil, err
	}
	if g.mod, err = cu.LoadData(kernels.TrainPTX); err != nil {
		return nil, fmt.Errorf("load PTX module: %w", err)
	}
	for _, n := range kernels.Train {
		if g.fn[n], err = g.mod.Function(n); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", n, err)
		}
	}
	for i := range g.streams {
		if g.streams[i], err = cu.MakeStream(cu.NonBlocking); err != nil {
			return nil, err
		}
	}
	for i := range g.events {
		if g.events[i], err = cu.MakeEvent(cu.DefaultEvent); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (g *cudaGPU) bind() (func(), error) {
	runtime.LockOSThread()
	if err := cu.SetCurrentContext(g.ctx); err != nil {
		runtime.UnlockOSThread()
		return nil, err
	}
	return runtime.UnlockOSThread, nil
}

func (g *cudaGPU) alloc(n int64) (ptr, error) {
	p, err := cu.MemAlloc(n)
	return ptr(p), err
}

func (g *cudaGPU) free(p ptr) { cu.MemFree(cu.DevicePtr(p)) }

func (g *cudaGPU) hostAlloc(n int64) (unsafe.Pointer, error) {
	var p unsafe.Pointer
	if err := cerr("cuMemHostAlloc", C.host_alloc(&p, C.size_t(n))); err != nil {
		return nil, err
	}
	return p, nil
}

func (g *cudaGPU) hostFree(p unsafe.Pointer) { cu.MemFreeHost(p) }

func (g *cudaGPU) register(b []byte) error {
	return cerr("cuMemHostRegister", C.host_register(unsafe.Pointer(unsafe.SliceData(b)), C.size_t(len(b))))
}

func (g *cudaGPU) unregister(b []byte) error {
	return cerr("cuMemHostUnregister", C.host_unregister(unsafe.Pointer(unsafe.SliceData(b))))
}

func (g *cudaGPU) htod(dst ptr, src unsafe.Pointer, n int64, s stream) error {
	return cu.MemcpyHtoDAsync(cu.DevicePtr(dst), src, n, g.streams[s])
}

func (g *cudaGPU) dtoh(dst unsafe.Pointer, src ptr, n int64, s stream) error {
	return cu.MemcpyDtoHAsync(dst, cu.DevicePtr(src), n, g.streams[s])
}

func (g *cudaGPU) memset32(dst ptr, v uint32, n int64, s stream) error {
	return cu.MemsetD32Async(cu.DevicePtr(dst), uint(v), n, g.streams[s])
}

// launch runs kernel name through launch_kernel: every parameter an
// 8-byte slot, the launch one cgo call.
func (g *cudaGPU) launch(s stream, name string, grid [3]int, block [2]int, params []uint64) error {
	fn, ok := g.fn[name]
	if !ok {
		return fmt.Errorf("no kernel %s", name)
	}
	var p *C.ulonglong
	if len(params) > 0 {
		p = (*C.ulonglong)(unsafe.Pointer(&params[0]))
	}
	return cerr("cuLaunchKernel", C.launch_kernel(handle(&fn), C.uint(grid[0]), C.uint(grid[1]), C.uint(grid[2]),
		C.uint(block[0]), C.uint(block[1]), handle(&g.streams[s]), p, C.int(len(params))))
}

func (g *cudaGPU) capture() error {
	return cerr("cuStreamBeginCapture", C.capture_begin(handle(&g.streams[computeStream])))
}

// cudaGraph is an instantiated CUDA graph (CUgraphExec).
type cudaGraph struct{ exec unsafe.Pointer }

func (g *cudaGPU) endCapture() (graph, error) {
	var e unsafe.Pointer
	if err := cerr("cuStreamEndCapture", C.capture_end(handle(&g.streams[computeStream]), &e)); err != nil {
		return nil, err
	}
	return cudaGraph{e}, nil
}

func (g *cudaGPU) launchGraph(gr graph) error {
	return cerr("cuGraphLaunch", C.graph_launch(gr.(cudaGraph).exec, handle(&g.streams[computeStream])))
}

func (g *cudaGPU) freeGraph(gr graph) { C.graph_free(gr.(cudaGraph).exec) }

func (g *cudaGPU) sync(s stream) error { return g.streams[s].Synchronize() }

func (g *cudaGPU) record(ev int, s stream) error { return g.events[ev].Record(g.streams[s]) }

func (g *cudaGPU) wait(s stream, ev int) error { return g.streams[s].Wait(g.events[ev], 0) }

func (g *cudaGPU) syncEvent(ev int) error { return g.events[ev].Synchronize() }

func (g *cudaGPU) elapsed(a, b int) (float64, error) {
	if err := g.events[b].Synchronize(); err != nil {
		return 0, err
	}
	ms, err := g.events[a].Elapsed(g.events[b])
	return ms / 1000, err
}

// handle is a cu.Stream's, cu.Event's or cu.Function's CUDA handle (each
// a struct holding the handle only).
func handle[T cu.Stream | cu.Event | cu.Function](x *T) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(x))
}

func (g *cudaGPU) info() telemetry.Info {
	in := telemetry.Info{Driver: "unknown (no NVML)"}
	in.Name, _ = g.device.Name()
	in.MemoryBytes, _ = g.device.TotalMem()
	if v := cu.Version(); v > 0 {
		in.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	return in
}

func (g *cudaGPU) real() bool { return true }

func (g *cudaGPU) close() {
	done, err := g.bind()
	if err != nil {
		return
	}
	defer done()
	for i := range g.streams {
		C.stream_destroy(handle(&g.streams[i]))
	}
	for i := range g.events {
		C.event_destroy(handle(&g.events[i]))
	}
	g.mod.Unload()
	g.device.ReleasePrimaryCtx()
}
