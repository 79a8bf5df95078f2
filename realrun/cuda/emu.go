package cuda

import (
	"fmt"
	"math"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

// emuGPU runs the engine's launches on the CPU, one thread index after
// another, with the kernels of kernels/train.cu transcribed to Go and
// their parameters decoded from the same 8-byte launch encoding. It is
// slow and exists so that the engine's orchestration (buffers, offsets,
// launch parameters, copies, both buffer modes) is tested on machines
// without a GPU. The Go transcription is the fallback: where a C++
// compiler is present, the tests run the CUDA C source itself on the CPU
// (srcgpu_test.go: train.cu compiled with kernels/cpu/cuda_cpu.h and
// launch.cc, launched on this emulator's memory), and on a GPU with -tags
// cuda. Every device access is bounds-checked against its allocation.
//
// A device address is the real address of the first byte of its Go
// buffer (so compiled kernels can use it), and every allocation is
// followed by guardBytes of a NaN pattern that nothing may write: reads
// past the end give NaN, and the tests check the guards after every
// launch of the compiled kernels (srcGPU).
type emuGPU struct {
	mu    sync.Mutex
	mem   map[ptr][]byte
	bases []ptr // sorted
	host  map[unsafe.Pointer][]byte
	t     [numEvents]time.Time
	// noBLAS makes openBLAS fail, so that the engine uses its own SGEMM
	// kernel (the path of a machine without cuBLAS).
	noBLAS bool
}

func newEmu() *emuGPU {
	return &emuGPU{mem: map[ptr][]byte{}, host: map[unsafe.Pointer][]byte{}}
}

// NewEmulated is the engine on the emulated GPU (tests, documentation).
func NewEmulated(o realrun.EngineOptions) (*Engine, error) { return newEngine(o, newEmu()) }

func (g *emuGPU) bind() (func(), error) { return func() {}, nil }

// guardBytes follow every allocation, filled with guardWord.
const (
	guardBytes = 256
	guardWord  = 0x7fc0dead // a quiet NaN as float32
)

func (g *emuGPU) alloc(n int64) (ptr, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	full := make([]byte, n+guardBytes)
	guard := unsafe.Slice((*uint32)(unsafe.Pointer(&full[n])), guardBytes/4)
	for i := range guard {
		guard[i] = guardWord
	}
	p := ptr(uintptr(unsafe.Pointer(unsafe.SliceData(full))))
	g.mem[p] = full[:n] // keeps the buffer, guard included, reachable
	i := sort.Search(len(g.bases), func(i int) bool { return g.bases[i] > p })
	g.bases = append(g.bases, 0)
	copy(g.bases[i+1:], g.bases[i:])
	g.bases[i] = p
	return p, nil
}

func (g *emuGPU) free(p ptr) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.mem, p)
	i := sort.Search(len(g.bases), func(i int) bool { return g.bases[i] >= p })
	if i < len(g.bases) && g.bases[i] == p {
		g.bases = append(g.bases[:i], g.bases[i+1:]...)
	}
}

// bytes is device memory from p to the end of its allocation (the guard
// after it is not part of it).
func (g *emuGPU) bytes(p ptr) ([]byte, error) {
	i := sort.Search(len(g.bases), func(i int) bool { return g.bases[i] > p }) - 1
	if i < 0 {
		return nil, fmt.Errorf("emulated GPU: address %#x is not allocated", uint64(p))
	}
	b := g.mem[g.bases[i]]
	off := int64(p - g.bases[i])
	if off > int64(len(b)) {
		return nil, fmt.Errorf("emulated GPU: address %#x is past its allocation", uint64(p))
	}
	return b[off:len(b):len(b)], nil
}

func (g *emuGPU) hostAlloc(n int64) (unsafe.Pointer, error) {
	b := make([]byte, n)
	p := unsafe.Pointer(unsafe.SliceData(b))
	g.mu.Lock()
	g.host[p] = b
	g.mu.Unlock()
	return p, nil
}

func (g *emuGPU) hostFree(p unsafe.Pointer) {
	g.mu.Lock()
	delete(g.host, p)
	g.mu.Unlock()
}

func (g *emuGPU) register([]byte) error   { return nil }
func (g *emuGPU) unregister([]byte) error { return nil }

// span is n bytes of device memory at p.
func (g *emuGPU) span(p ptr, n int64, what string) ([]byte, error) {
	b, err := g.bytes(p)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) < n {
		return nil, fmt.Errorf("emulated GPU: %s of %d bytes at %#x overruns its allocation", what, n, uint64(p))
	}
	return b[:n], nil
}

func (g *emuGPU) htod(dst ptr, src unsafe.Pointer, n int64, _ stream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := g.span(dst, n, "copy")
	if err == nil {
		copy(b, unsafe.Slice((*byte)(src), n))
	}
	return err
}

func (g *emuGPU) dtoh(dst unsafe.Pointer, src ptr, n int64, _ stream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := g.span(src, n, "copy")
	if err == nil {
		copy(unsafe.Slice((*byte)(dst), n), b)
	}
	return err
}

func (g *emuGPU) memset32(dst ptr, v uint32, n int64, _ stream) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	b, err := g.span(dst, 4*n, "memset")
	if err != nil {
		return err
	}
	w := unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(b))), n)
	for i := range w {
		w[i] = v
	}
	return nil
}

func (g *emuGPU) sync(stream) error { return nil }

func (g *emuGPU) record(ev int, _ stream) error {
	g.t[ev] = time.Now()
	return nil
}

// wait and syncEvent have nothing to wait for: the emulator runs every
// copy and launch to completion when it is issued.
func (g *emuGPU) wait(stream, int) error { return nil }
func (g *emuGPU) syncEvent(int) error    { return nil }

func (g *emuGPU) elapsed(a, b int) (float64, error) { return g.t[b].Sub(g.t[a]).Seconds(), nil }

func (g *emuGPU) info() telemetry.Info {
	return telemetry.Info{Name: "emulated GPU (CPU, tests only)", Driver: "none", CUDA: "none"}
}

func (g *emuGPU) real() bool { return false }
func (g *emuGPU) close()     {}

// launch decodes the parameters as the kernel declares them and runs
// every thread of the grid in turn.
func (g *emuGPU) launch(_ stream, name string, grid [3]int, block [2]int, params []uint64) (err error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("emulated %s: %v", name, r)
		}
	}()
	a := &args{g: g, p: params}
	threads := int64(grid[0]) * int64(block[0]) // the 1-D kernels
	switch name {
	case "gather_rows":
		emuGather(a, threads)
	case "make_query":
		emuMakeQuery(a, threads)
	case "query_back":
		emuQueryBack(a, threads)
	case "row_dot":
		emuRowDot(a, threads)
	case "sgemm_batched":
		emuSgemm(a, grid, block)
	case "softmax_loss":
		emuSoftmax(a, threads)
	case "pos_grad":
		emuPosGrad(a, threads)
	case "scatter_add":
		emuScatter(a, threads)
	case "adagrad_rows":
		emuAdagrad(a, threads)
	default:
		return fmt.Errorf("emulated GPU: no kernel %q", name)
	}
	if len(a.p) != a.i {
		return fmt.Errorf("emulated %s: %d parameters passed, the kernel takes %d", name, len(a.p), a.i)
	}
	return a.err
}

// args decodes launch parameters in order, as the driver would.
type args struct {
	g   *emuGPU
	p   []uint64
	i   int
	err error
}

func (a *args) next() uint64 {
	if a.i >= len(a.p) {
		panic(fmt.Sprintf("kernel takes more than the %d parameters passed", len(a.p)))
	}
	a.i++
	return a.p[a.i-1]
}

func (a *args) int() int       { return int(int32(uint32(a.next()))) }
func (a *args) long() int64    { return int64(a.next()) }
func (a *args) float() float32 { return math.Float32frombits(uint32(a.next())) }
func (a *args) floats() []float32 {
	return a.view(a.next(), 4, func(b []byte) any { return unsafeFloats(b) }).([]float32)
}
func (a *args) ints() []int32 {
	return a.view(a.next(), 4, func(b []byte) any { return unsafeInts(b) }).([]int32)
}
func (a *args) double() []float64 {
	return a.view(a.next(), 8, func(b []byte) any {
		return unsafe.Slice((*float64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	}).([]float64)
}

// view maps a device pointer (NULL → nil) to a typed slice reaching the
// end of its allocation.
func (a *args) view(v uint64, _ int, f func([]byte) any) any {
	if v == 0 {
		return f(nil)
	}
	b, err := a.g.bytes(ptr(v))
	if err != nil {
		panic(err)
	}
	return f(b)
}

func unsafeFloats(b []byte) []float32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

func unsafeInts(b []byte) []int32 {
	if len(b) < 4 {
		return nil
	}
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/4)
}

func emuGather(a *args, threads int64) {
	pa, pb, rows, sel, out := a.floats(), a.floats(), a.ints(), a.ints(), a.floats()
	count, d := a.int(), a.int()
	for t := int64(0); t < threads && t < int64(count)*int64(d); t++ {
		i, k := t/int64(d), t%int64(d)
		base := pa
		if sel != nil && sel[i] != 0 {
			base = pb
		}
		out[t] = base[int64(rows[i])*int64(d)+k]
	}
}

// queryIndex is query_index of train.cu: the element(s) of thread t.
func queryIndex(mode, rows, d int, t int64) (re, im int64, ok bool) {
	if mode == 0 {
		return t, 0, t < int64(rows)*int64(d)
	}
	h := int64(d / 2)
	re = (t/h)*int64(d) + t%h
	return re, re + h, t < int64(rows)*h
}

func emuMakeQuery(a *args, threads int64) {
	mode, rows, d := a.int(), a.int(), a.int()
	pa, r, q := a.floats(), a.floats(), a.floats()
	for t := int64(0); t < threads; t++ {
		re, im, ok := queryIndex(mode, rows, d, t)
		if !ok {
			break
		}
		switch mode {
		case 0:
			q[re] = pa[re] * r[re]
		case 1:
			sa, sb, c, e := pa[re], pa[im], r[re], r[im]
			q[re] = sa*c - sb*e
			q[im] = sa*e + sb*c
		default:
			c, e, u, v := r[re], r[im], pa[re], pa[im]
			q[re] = c*u + e*v
			q[im] = c*v - e*u
		}
	}
}

func emuQueryBack(a *args, threads int64) {
	mode, rows, d := a.int(), a.int(), a.int()
	pa, r, gq, ga, gr := a.floats(), a.floats(), a.floats(), a.floats(), a.floats()
	for t := int64(0); t < threads; t++ {
		re, im, ok := queryIndex(mode, rows, d, t)
		if !ok {
			break
		}
		if mode == 0 {
			ga[re] += gq[re] * r[re]
			gr[re] += gq[re] * pa[re]
			continue
		}
		x, y := gq[re], gq[im]
		if mode == 1 {
			sa, sb, c, e := pa[re], pa[im], r[re], r[im]
			ga[re] += x*c + y*e
			ga[im] += y*c - x*e
			gr[re] += x*sa + y*sb
			gr[im] += y*sa - x*sb
		} else {
			c, e, u, v := r[re], r[im], pa[re], pa[im]
			gr[re] += x*u + y*v
			gr[im] += x*v - y*u
			ga[re] += x*c - y*e
			ga[im] += x*e + y*c
		}
	}
}

func emuRowDot(a *args, threads int64) {
	rows, d := a.int(), a.int()
	q, x, pos := a.floats(), a.floats(), a.floats()
	for i := 0; int64(i) < threads && i < rows; i++ {
		var s float32
		for k := 0; k < d; k++ {
			s += q[i*d+k] * x[i*d+k]
		}
		pos[i] = s
	}
}

func emuSgemm(a *args, grid [3]int, block [2]int) {
	ta, tb, M, N, K := a.int(), a.int(), a.int(), a.int(), a.int()
	alpha := a.float()
	A, lda, sA := a.floats(), a.int(), a.long()
	B, ldb, sB := a.floats(), a.int(), a.long()
	beta := a.float()
	C, ldc, sC := a.floats(), a.int(), a.long()
	const tile = 16
	if block != [2]int{tile, tile} {
		panic(fmt.Sprintf("sgemm_batched needs %dx%d blocks, got %v", tile, tile, block))
	}
	for z := 0; z < grid[2]; z++ {
		Az, Bz, Cz := A[int64(z)*sA:], B[int64(z)*sB:], C[int64(z)*sC:]
		for row := 0; row < grid[1]*tile; row++ {
			for col := 0; col < grid[0]*tile; col++ {
				if row >= M || col >= N {
					continue
				}
				var acc float32
				for k := 0; k < K; k++ {
					var av, bv float32
					if ta != 0 {
						av = Az[k*lda+row]
					} else {
						av = Az[row*lda+k]
					}
					if tb != 0 {
						bv = Bz[col*ldb+k]
					} else {
						bv = Bz[k*ldb+col]
					}
					acc += av * bv
				}
				o := row*ldc + col
				if beta == 0 {
					Cz[o] = alpha * acc
				} else {
					Cz[o] = alpha*acc + beta*Cz[o]
				}
			}
		}
	}
}

func expf(x float32) float32 { return float32(math.Exp(float64(x))) }

func emuSoftmax(a *args, threads int64) {
	rows, m := a.int(), a.int()
	pos, t, gp, loss := a.floats(), a.floats(), a.floats(), a.double()
	for w := 0; int64(w) < threads/32 && w < rows; w++ {
		row := t[w*m : w*m+m]
		p := pos[w]
		mx := p
		for _, v := range row {
			mx = max(mx, v)
		}
		var z float32
		for j, v := range row {
			e := expf(v - mx)
			row[j] = e
			z += e
		}
		ep := expf(p - mx)
		z += ep
		inv := 1 / z
		for j := range row {
			row[j] *= inv
		}
		gp[w] = ep*inv - 1
		loss[0] += float64(mx) + math.Log(float64(z)) - float64(p)
	}
}

func emuPosGrad(a *args, threads int64) {
	rows, d := a.int(), a.int()
	gp, q, x, gq, gx := a.floats(), a.floats(), a.floats(), a.floats(), a.floats()
	for t := int64(0); t < threads && t < int64(rows)*int64(d); t++ {
		g := gp[t/int64(d)]
		gq[t] += g * x[t]
		gx[t] += g * q[t]
	}
}

func emuScatter(a *args, threads int64) {
	g, rows, sel := a.floats(), a.ints(), a.ints()
	count, d := a.int(), a.int()
	accA, flagA, listA, countA := a.floats(), a.ints(), a.ints(), a.ints()
	accB, flagB, listB, countB := a.floats(), a.ints(), a.ints(), a.ints()
	for t := int64(0); t < threads && t < int64(count)*int64(d); t++ {
		i, k := t/int64(d), t%int64(d)
		b := sel != nil && sel[i] != 0
		acc, flag, list, cnt := accA, flagA, listA, countA
		if b {
			acc, flag, list, cnt = accB, flagB, listB, countB
		}
		r := int64(rows[i])
		acc[r*int64(d)+k] += g[t]
		if k == 0 && flag[r] == 0 {
			flag[r] = 1
			list[cnt[0]] = int32(r)
			cnt[0]++
		}
	}
}

func emuAdagrad(a *args, threads int64) {
	emb, state, acc, flag, list, count := a.floats(), a.floats(), a.floats(), a.ints(), a.ints(), a.ints()
	maxRows, d := a.int(), a.int()
	lr, eps := a.float(), a.float()
	n := min(int(count[0]), maxRows)
	for t := int64(0); t < threads && t < int64(n)*int64(d); t++ {
		j, k := t/int64(d), t%int64(d)
		o := int64(list[j])*int64(d) + k
		g := acc[o]
		s := state[o] + g*g
		state[o] = s
		emb[o] -= lr * g / (float32(math.Sqrt(float64(s))) + eps)
		acc[o] = 0
		if k == 0 {
			flag[list[j]] = 0
		}
	}
}

// openBLAS is the emulated cuBLAS: Go SGEMM with cuBLAS's column-major
// semantics, so that the engine's mapping of its row-major products onto
// cuBLAS is tested without a GPU.
func (g *emuGPU) openBLAS(tf32 bool) (blas, error) {
	if g.noBLAS {
		return nil, fmt.Errorf("cuBLAS: not found (emulated GPU without cuBLAS)")
	}
	return emuBLAS{g: g, tf32: tf32}, nil
}

type emuBLAS struct {
	g    *emuGPU
	tf32 bool
}

func (b emuBLAS) describe() string {
	if b.tf32 {
		return "emulated cuBLAS (Go, column-major), TF32 requested (computed in FP32)"
	}
	return "emulated cuBLAS (Go, column-major)"
}

func (emuBLAS) close() {}

// sgemm is cublasSgemmStridedBatched on column-major matrices: element
// (i, j) of an ld-strided matrix X is X[i + j·ld].
func (b emuBLAS) sgemm(ta, tb bool, m, n, k int, alpha float32, pa ptr, lda int, sa int64,
	pb ptr, ldb int, sb int64, beta float32, pc ptr, ldc int, sc int64, batch int) (err error) {
	g := b.g
	g.mu.Lock()
	defer g.mu.Unlock()
	defer func() {
		if r := recover(); r != nil { // an operand read past its allocation
			err = fmt.Errorf("emulated cuBLAS: %v", r)
		}
	}()
	view := func(p ptr) ([]float32, error) {
		raw, err := g.bytes(p)
		return unsafeFloats(raw), err
	}
	for z := 0; z < batch; z++ {
		A, err := view(pa + ptr(4*int64(z)*sa))
		if err != nil {
			return err
		}
		B, err := view(pb + ptr(4*int64(z)*sb))
		if err != nil {
			return err
		}
		C, err := view(pc + ptr(4*int64(z)*sc))
		if err != nil {
			return err
		}
		at := func(i, l int) float32 {
			if ta {
				return A[l+i*lda]
			}
			return A[i+l*lda]
		}
		bt := func(l, j int) float32 {
			if tb {
				return B[j+l*ldb]
			}
			return B[l+j*ldb]
		}
		if need := (n-1)*ldc + m; len(C) < need {
			return fmt.Errorf("emulated cuBLAS: C of %d floats, the product needs %d", len(C), need)
		}
		for j := 0; j < n; j++ {
			for i := 0; i < m; i++ {
				var acc float32
				for l := 0; l < k; l++ {
					acc += at(i, l) * bt(l, j)
				}
				o := i + j*ldc
				if beta == 0 {
					C[o] = alpha * acc
				} else {
					C[o] = alpha*acc + beta*C[o]
				}
			}
		}
	}
	return nil
}
