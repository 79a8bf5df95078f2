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
	// While capturing, launches, memsets and products are recorded into
	// rec instead of run; graphs holds the recordings by handle, as a
	// CUDA graph holds its nodes, to be replayed by launchGraph.
	capturing bool
	rec       []func() error
	graphs    map[int][]func() error
	nextGraph int
}

// recording records f while capturing (true) and otherwise leaves it to
// the caller to run now (false).
func (g *emuGPU) recording(f func() error) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.capturing {
		return false
	}
	g.rec = append(g.rec, f)
	return true
}

func (g *emuGPU) capture() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.capturing {
		return fmt.Errorf("emulated GPU: already capturing")
	}
	g.capturing, g.rec = true, nil
	return nil
}

func (g *emuGPU) endCapture() (graph, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.capturing {
		return nil, fmt.Errorf("emulated GPU: not capturing")
	}
	if g.graphs == nil {
		g.graphs = map[int][]func() error{}
	}
	g.nextGraph++
	g.graphs[g.nextGraph], g.capturing, g.rec = g.rec, false, nil
	return g.nextGraph, nil
}

func (g *emuGPU) launchGraph(gr graph) error {
	g.mu.Lock()
	id, _ := gr.(int)
	steps, ok := g.graphs[id]
	g.mu.Unlock()
	if !ok {
		return fmt.Errorf("emulated GPU: no graph %v", gr)
	}
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

func (g *emuGPU) freeGraph(gr graph) {
	id, _ := gr.(int)
	g.mu.Lock()
	delete(g.graphs, id)
	g.mu.Unlock()
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

func (g *emuGPU) memset32(dst ptr, v uint32, n int64, s stream) error {
	if g.recording(func() error { return g.memset32(dst, v, n, s) }) {
		return nil
	}
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
func (g *emuGPU) launch(s stream, name string, grid [3]int, block [2]int, params []uint64) (err error) {
	if p := append([]uint64(nil), params...); g.recording(func() error { return g.launch(s, name, grid, block, p) }) {
		return nil
	}
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
	case "chunk_prep":
		emuChunkPrep(a, threads)
	case "sgemm_batched":
		emuSgemm(a, grid, block)
	case "pair_scores":
		emuPairScores(a, grid)
	case "pair_grads":
		emuPairGrads(a, threads)
	case "chunk_softmax":
		emuChunkSoftmax(a, threads)
	case "chunk_back":
		emuChunkBack(a, threads)
	case "adagrad_sum":
		emuAdagradSum(a, grid, block)
	case "adagrad_each":
		emuAdagradEach(a, grid, block)
	case "each_clear":
		emuEachClear(a, grid, block)
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

// The kernels of train.cu, transcribed: each warp-level kernel runs its
// warps (items) in turn, a warp's lanes as one loop over the row.

// emuAcc is one table's Acc, read from the descriptors at accs.
type emuAcc struct {
	acc                    []float32
	flag, list, head, next []int32
}

func (a *args) accs() [3]emuAcc {
	words := a.view(a.next(), 8, func(b []byte) any {
		return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(b))), len(b)/8)
	}).([]uint64)
	var out [3]emuAcc
	ints := func(v uint64) []int32 { return a.view(v, 4, func(b []byte) any { return unsafeInts(b) }).([]int32) }
	for t := range out {
		w := words[5*t : 5*t+5]
		out[t] = emuAcc{acc: a.view(w[0], 4, func(b []byte) any { return unsafeFloats(b) }).([]float32),
			flag: ints(w[1]), list: ints(w[2]), head: ints(w[3]), next: ints(w[4])}
	}
	return out
}

// emuPiece is an index piece: its header's tables and its chunk blocks.
type emuPiece struct {
	embA, stateA, embB, stateB []float32
	same                       bool
	ints                       []int32
	L                          int64
}

// piece reads the piece at the next parameter (L: its blocks' length).
func (a *args) piece(L int) emuPiece {
	v := a.next()
	raw := a.view(v, 4, func(b []byte) any { return b }).([]byte)
	w := unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(raw))), pieceInts/2)
	f := func(x uint64) []float32 {
		return a.view(x, 4, func(b []byte) any { return unsafeFloats(b) }).([]float32)
	}
	return emuPiece{embA: f(w[0]), stateA: f(w[1]), embB: f(w[2]), stateB: f(w[3]), same: w[4]&0xffffffff != 0,
		ints: unsafeInts(raw)[pieceInts:], L: int64(L)}
}

// block is chunk c's block: its count, then its indices.
func (p emuPiece) block(c int64) []int32 { return p.ints[c*p.L:] }

func (x emuAcc) touch(count []int32, r int32) {
	if x.flag[r] == 0 {
		x.flag[r] = 1
		x.list[count[0]] = r
		count[0]++
	}
}

func (x emuAcc) link(r, s int32) {
	x.next[s] = x.head[r]
	x.head[r] = s
}

func emuChunkPrep(a *args, threads int64) {
	model, g, nc, m, d, L := a.int(), a.int(), a.int(), a.int(), a.int(), a.int()
	pc := a.piece(L)
	c0 := int64(a.int())
	rel, Q, N, pos := a.floats(), a.floats(), a.floats(), a.floats()
	qn, nn, bn, counts := a.floats(), a.floats(), a.floats(), a.ints()
	cmp := emuCmp(model)
	if a.int() != 0 && threads > 0 {
		counts[0], counts[1], counts[2] = 0, 0, 0
	}
	edges := int64(g) * int64(nc)
	D, NC := int64(d), int64(nc)
	for w := int64(0); w < threads/32 && w < edges+int64(g)*int64(m); w++ {
		if w >= edges {
			v := w - edges
			j, k := v/int64(m), v%int64(m)
			ci := pc.block(c0 + j)[1+3*NC:]
			src := pc.embA
			if ci[int64(m)+k] != 0 {
				src = pc.embB
			}
			copy(N[v*D:(v+1)*D], src[int64(ci[k])*D:int64(ci[k]+1)*D])
			if emuNormed(cmp) {
				nn[v], bn[v] = emuDot(N[v*D:(v+1)*D], N[v*D:(v+1)*D]), 0
			}
			continue
		}
		j, i := w/NC, w%NC
		q1 := Q[(j*2*NC+i)*D:]
		q2 := q1[NC*D:]
		p := pos[j*2*NC+i:]
		ci := pc.block(c0 + j)
		if i >= int64(ci[0]) {
			clear(q1[:D])
			clear(q2[:D])
			p[0], p[nc] = 0, 0
			if emuNormed(cmp) {
				qn[j*2*NC+i], qn[j*2*NC+i+NC] = 0, 0
			}
			continue
		}
		ci = ci[1:]
		s, t := pc.embA[int64(ci[i])*D:], pc.embB[int64(ci[NC+i])*D:]
		if model > 2 {
			op, pair := emuOp(model), emuPair(model)
			rg := s
			if op != opNone {
				rg = rel[int64(ci[2*NC+i])*int64(emuRelWidth(model, d)):]
			}
			rh := rg
			if pair {
				rh = rg[emuOpWidth(op, d):]
			}
			emuOpForward(op, false, d, s, rg, q1[:D])
			emuOpForward(op, !pair, d, t, rh, q2[:D])
			a, b := emuCmpSums(cmp, d, q1, t), emuCmpSums(cmp, d, q2, s)
			p[0], p[nc] = emuCmpScore(cmp, a), emuCmpScore(cmp, b)
			if emuNormed(cmp) {
				qn[j*2*NC+i], qn[j*2*NC+i+NC] = a.qq, b.qq
			}
			continue
		}
		r := s
		if model != 0 {
			r = rel[int64(ci[2*NC+i])*D:]
		}
		var p1, p2 float32
		if model == 2 {
			h := D / 2
			for x := int64(0); x < h; x++ {
				sa, sb, c, e, u, v := s[x], s[x+h], r[x], r[x+h], t[x], t[x+h]
				ar, ai := sa*c-sb*e, sa*e+sb*c
				br, bi := c*u+e*v, c*v-e*u
				q1[x], q1[x+h], q2[x], q2[x+h] = ar, ai, br, bi
				p1 += ar*u + ai*v
				p2 += br*sa + bi*sb
			}
		} else {
			for x := int64(0); x < D; x++ {
				sv, tv, rv := s[x], t[x], float32(1)
				if model == 1 {
					rv = r[x]
				}
				q1[x], q2[x] = sv*rv, tv*rv
				p1 += q1[x] * tv
				p2 += q2[x] * sv
			}
		}
		p[0], p[nc] = p1, p2
	}
}

func emuChunkSoftmax(a *args, threads int64) {
	g, nc, m, L := a.int(), a.int(), a.int(), a.int()
	pc := a.piece(L)
	c0 := int64(a.int())
	pos, T, gp, loss := a.floats(), a.floats(), a.floats(), a.double()
	lossCode, cmp, margin, adv := a.int(), a.int(), a.float(), a.float()
	qn, nn, aq, bn := a.floats(), a.floats(), a.floats(), a.floats()
	rows := int64(g) * 2 * int64(nc)
	for w := int64(0); w < threads/32 && w < rows; w++ {
		j, i := w/(2*int64(nc)), w%(2*int64(nc))
		if i >= int64(nc) {
			i -= int64(nc)
		}
		row := T[w*int64(m) : (w+1)*int64(m)]
		if i >= int64(pc.block(c0 + j)[0]) {
			clear(row)
			gp[w] = 0
			continue
		}
		if lossCode != lossSoftmax || emuNormed(cmp) {
			var qq float32
			if emuNormed(cmp) {
				qq = qn[w]
			}
			M := int64(m)
			emuRowLoss(lossCode, cmp, margin, adv, pos[w], row, qq, nn[j*M:(j+1)*M], bn[j*M:(j+1)*M], gp[w:], aq[w:], loss[w%lossParts:])
			continue
		}
		p := pos[w]
		mx := p
		for _, v := range row {
			mx = max(mx, v)
		}
		var z float32
		for x, v := range row {
			e := expf(v - mx)
			row[x] = e
			z += e
		}
		ep := expf(p - mx)
		z += ep
		inv := 1 / z
		for x := range row {
			row[x] *= inv
		}
		gp[w] = ep*inv - 1
		loss[w%lossParts] += float64(mx) + math.Log(float64(z)) - float64(p)
	}
}

func emuChunkBack(a *args, threads int64) {
	model, rule, g, nc, m, d, L := a.int(), a.int(), a.int(), a.int(), a.int(), a.int(), a.int()
	pc := a.piece(L)
	c0 := int64(a.int())
	rel, gQ, gN, gp, gR := a.floats(), a.floats(), a.floats(), a.floats(), a.floats()
	accs, counts := a.accs(), a.ints()
	Q, N, aq, bn := a.floats(), a.floats(), a.floats(), a.floats()
	reg, lam, loss := a.int(), a.float(), a.double()
	embA, embB := pc.embA, pc.embB
	A, B, R := accs[0], accs[1], accs[2]
	cA, cB, cR := counts[0:], counts[1:], counts[2:]
	if pc.same {
		B, cB = A, cA
	}
	edges := int64(g) * int64(nc)
	D, NC := int64(d), int64(nc)
	add := func(acc []float32, v float32) { acc[0] += v }
	for w := int64(0); w < threads/32 && w < edges+int64(g)*int64(m); w++ {
		if w >= edges {
			v := w - edges
			j, k := v/int64(m), v%int64(m)
			ci := pc.block(c0 + j)[1+3*NC:]
			row := ci[k]
			T, cT := A, cA
			if ci[int64(m)+k] != 0 {
				T, cT = B, cB
			}
			if emuNormed(emuCmp(model)) {
				for x := int64(0); x < D; x++ {
					gN[v*D+x] += bn[v] * N[v*D+x]
				}
			}
			if rule == ruleSum {
				acc := T.acc[int64(row)*D:]
				for x := int64(0); x < D; x++ {
					add(acc[x:], gN[v*D+x])
				}
			}
			T.touch(cT, row)
			if rule == ruleEach {
				T.link(row, int32(2*NC+k))
			}
			continue
		}
		j, i := w/NC, w%NC
		ci := pc.block(c0 + j)
		if i >= int64(ci[0]) {
			continue
		}
		ci = ci[1:]
		sr, dr, rr := ci[i], ci[NC+i], ci[2*NC+i]
		s, t := embA[int64(sr)*D:], embB[int64(dr)*D:]
		if model > 2 || reg != 0 {
			q := j*2*NC + i
			rw := int64(emuRelWidth(model, d))
			var accR, grr []float32
			if emuOp(model) != opNone {
				if rule == ruleSum {
					accR = R.acc[int64(rr)*rw : int64(rr+1)*rw]
				} else {
					grr = gR[(j*NC+i)*rw : (j*NC+i+1)*rw]
				}
			}
			emuEdgeBack(model, rule, nc, d, s[:D], t[:D], rel, rr, q, gQ, gp, Q, aq, A.acc[int64(sr)*D:], B.acc[int64(dr)*D:],
				accR, grr, reg, lam, loss)
			A.touch(cA, sr)
			B.touch(cB, dr)
			hasRel := emuOp(model) != opNone
			if hasRel {
				R.touch(cR, rr)
			}
			if rule == ruleEach {
				A.link(sr, int32(i))
				B.link(dr, int32(NC+i))
				if hasRel {
					R.link(rr, int32(i))
				}
			}
			continue
		}
		r := s
		if model != 0 {
			r = rel[int64(rr)*D:]
		}
		q := j*2*NC + i
		g1, g2 := gQ[q*D:], gQ[(q+NC)*D:]
		var grr []float32                   // rule each only (one chunk a group)
		if rule == ruleEach && model != 0 { // Dot has no relation gradients
			grr = gR[(j*NC+i)*D:]
		}
		gp1, gp2 := gp[q], gp[q+NC]
		accS, accT := A.acc[int64(sr)*D:], B.acc[int64(dr)*D:]
		var accR []float32
		if model != 0 {
			accR = R.acc[int64(rr)*D:]
		}
		if model == 2 {
			h := D / 2
			for x := int64(0); x < h; x++ {
				sa, sb, c, e, u, v := s[x], s[x+h], r[x], r[x+h], t[x], t[x+h]
				ar, ai := sa*c-sb*e, sa*e+sb*c
				br, bi := c*u+e*v, c*v-e*u
				x1, y1 := g1[x]+gp1*u, g1[x+h]+gp1*v
				x2, y2 := g2[x]+gp2*sa, g2[x+h]+gp2*sb
				gsr, gsi := gp2*br+x1*c+y1*e, gp2*bi+y1*c-x1*e
				gtr, gti := gp1*ar+x2*c-y2*e, gp1*ai+x2*e+y2*c
				grRe, grIm := x1*sa+y1*sb+x2*u+y2*v, y1*sa-x1*sb+x2*v-y2*u
				if rule == ruleSum {
					accS[x] += gsr
					accS[x+h] += gsi
					accT[x] += gtr
					accT[x+h] += gti
					accR[x] += grRe
					accR[x+h] += grIm
				} else {
					g1[x], g1[x+h], g2[x], g2[x+h], grr[x], grr[x+h] = gsr, gsi, gtr, gti, grRe, grIm
				}
			}
		} else {
			for x := int64(0); x < D; x++ {
				sv, tv, rv := s[x], t[x], float32(1)
				if model == 1 {
					rv = r[x]
				}
				gq1, gq2 := g1[x]+gp1*tv, g2[x]+gp2*sv
				gs, gt := gp2*tv*rv+gq1*rv, gp1*sv*rv+gq2*rv
				if rule == ruleSum {
					accS[x] += gs
					accT[x] += gt
					if model == 1 {
						accR[x] += gq1*sv + gq2*tv
					}
				} else {
					g1[x], g2[x] = gs, gt
					if model == 1 {
						grr[x] = gq1*sv + gq2*tv
					}
				}
			}
		}
		A.touch(cA, sr)
		B.touch(cB, dr)
		if model != 0 {
			R.touch(cR, rr)
		}
		if rule == ruleEach {
			A.link(sr, int32(i))
			B.link(dr, int32(NC+i))
			if model != 0 {
				R.link(rr, int32(i))
			}
		}
	}
}

// emuTables decodes the Adagrad kernels' tables: the piece's two, then
// the relations'.
func emuTables(a *args) (emb, state [3][]float32) {
	pc := a.piece(0)
	emb[0], state[0], emb[1], state[1] = pc.embA, pc.stateA, pc.embB, pc.stateB
	emb[2], state[2] = a.floats(), a.floats()
	return emb, state
}

func emuAdagradSum(a *args, grid [3]int, block [2]int) {
	emb, state := emuTables(a)
	accs, counts, maxRows, dE := a.accs(), a.ints(), a.int(), a.int()
	lr, eps := a.float(), a.float()
	dR := a.int()
	threads := int64(grid[0]) * int64(block[0])
	for tb := 0; tb < grid[1]; tb++ {
		x := accs[tb]
		d := dE
		if tb == 2 {
			d = dR
		}
		n := min(int(counts[tb]), maxRows)
		for t := int64(0); t < threads && t < int64(n)*int64(d); t++ {
			j, k := t/int64(d), t%int64(d)
			r := x.list[j]
			o := int64(r)*int64(d) + k
			g := x.acc[o]
			s := state[tb][o] + g*g
			state[tb][o] = s
			emb[tb][o] -= lr * g / (float32(math.Sqrt(float64(s))) + eps)
			x.acc[o] = 0
			if k == 0 {
				x.flag[r] = 0
			}
		}
	}
}

// emuEachKey is EACH_KEY of train.cu: an occurrence slot's place in the
// CPU engine's order.
func emuEachKey(tb int, s, nc int32) int32 {
	switch {
	case tb == 2:
		return s
	case s < nc:
		return 2 * s
	case s < 2*nc:
		return 2*(s-nc) + 1
	}
	return s
}

// emuAdagradEach runs adagrad_each block by block: block b of a table
// steps span b % spans of listed row b / spans (spans = ⌈w/block⌉), each
// element through the row's occurrences in order. The lists are left for
// each_clear.
func emuAdagradEach(a *args, grid [3]int, block [2]int) {
	emb, state := emuTables(a)
	accs, counts, maxRows, d, nc := a.accs(), a.ints(), a.int(), a.int(), a.int()
	lr, eps := a.float(), a.float()
	gQ, gN, gR := a.floats(), a.floats(), a.floats()
	dR := a.int()
	span := int64(block[0])
	for tb := 0; tb < grid[1]; tb++ {
		x := accs[tb]
		D := int64(d)
		if tb == 2 {
			D = int64(dR)
		}
		n := int64(min(int(counts[tb]), maxRows))
		spans := (D + span - 1) / span
		for b := int64(0); b < int64(grid[0]); b++ {
			row, sp := b/spans, b%spans
			if row >= n {
				continue
			}
			r := x.list[row]
			var occ []int32
			for s := x.head[r]; s >= 0; s = x.next[s] {
				occ = append(occ, s)
			}
			sort.Slice(occ, func(i, j int) bool {
				return emuEachKey(tb, occ[i], int32(nc)) < emuEachKey(tb, occ[j], int32(nc))
			})
			for k := sp * span; k < min((sp+1)*span, D); k++ {
				o := int64(r)*D + k
				st, em := state[tb][o], emb[tb][o]
				for _, s := range occ {
					var g []float32
					switch {
					case tb == 2:
						g = gR[int64(s)*D:]
					case s < 2*int32(nc):
						g = gQ[int64(s)*D:]
					default:
						g = gN[int64(s-2*int32(nc))*D:]
					}
					st += g[k] * g[k]
					em -= lr * g[k] / (float32(math.Sqrt(float64(st))) + eps)
				}
				state[tb][o], emb[tb][o] = st, em
			}
		}
	}
}

// emuEachClear is each_clear: the listed rows' occurrence lists emptied
// and flags cleared.
func emuEachClear(a *args, grid [3]int, block [2]int) {
	accs, counts, maxRows := a.accs(), a.ints(), a.int()
	threads := int64(grid[0]) * int64(block[0])
	for tb := 0; tb < grid[1]; tb++ {
		x := accs[tb]
		n := min(int64(min(int(counts[tb]), maxRows)), threads)
		for t := int64(0); t < n; t++ {
			r := x.list[t]
			x.head[r], x.flag[r] = -1, 0
		}
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
	if g.recording(func() error {
		return b.sgemm(ta, tb, m, n, k, alpha, pa, lda, sa, pb, ldb, sb, beta, pc, ldc, sc, batch)
	}) {
		return nil
	}
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
