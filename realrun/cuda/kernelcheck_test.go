package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"unsafe"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/workload"
)

// kernelCase is one group shape for checkKernels: g full chunks of n
// edges and a tail chunk of tail edges (0: none), m negatives per chunk.
type kernelCase struct {
	kind          workload.Model
	d, n, g, tail int
	m             int
	distinct      int // > 0: every occurrence draws its row from the first distinct rows (rows touched many times)
}

func (c kernelCase) String() string {
	s := fmt.Sprintf("%s/d%d_n%dx%d", c.kind, c.d, c.n, c.g)
	if c.tail > 0 {
		s += fmt.Sprintf("+%d", c.tail)
	}
	s += fmt.Sprintf("_m%d", c.m)
	if c.distinct > 0 {
		s += fmt.Sprintf("_rows%d", c.distinct)
	}
	return s
}

// kernelCases are ragged shapes: d not a multiple of 32 (odd where the
// model allows), odd chunk sizes, tail chunks, m = 1 and m around a warp,
// and batches that touch a few rows many times.
var kernelCases = []kernelCase{
	{kind: workload.Dot, d: 12, n: 7, g: 3, m: 5},
	{kind: workload.DistMult, d: 12, n: 7, g: 3, m: 5},
	{kind: workload.ComplEx, d: 12, n: 7, g: 3, m: 5},
	{kind: workload.Dot, d: 33, n: 13, g: 2, tail: 5, m: 31},
	{kind: workload.DistMult, d: 33, n: 7, g: 3, m: 33},
	{kind: workload.ComplEx, d: 34, n: 13, g: 2, tail: 6, m: 33},
	{kind: workload.Dot, d: 100, n: 13, g: 2, m: 1},
	{kind: workload.DistMult, d: 100, n: 13, g: 1, tail: 4, m: 1},
	{kind: workload.ComplEx, d: 100, n: 7, g: 3, m: 31},
	{kind: workload.Dot, d: 33, n: 13, g: 3, m: 31, distinct: 5},
	{kind: workload.DistMult, d: 12, n: 13, g: 2, m: 33, distinct: 4},
	{kind: workload.ComplEx, d: 34, n: 7, g: 4, tail: 3, m: 5, distinct: 3},
	{kind: workload.Dot, d: 1, n: 7, g: 3, m: 5}, // one float per row: thread k of a row is its only thread
}

// checkKernels runs one batch of shape c through the engine's kernels on
// the GPU that newGPU returns (gather, queries, batched GEMMs, softmax
// loss, gradients, scatter-add into the accumulators, then Adagrad on
// every table) and compares with the CPU engine's Go reference: the loss
// and per-row sums of model.ChunkGrad's gradients, then model.Adagrad
// with those sums. Also checked: the list of touched rows, that Adagrad
// leaves a row past the list alone (an unlisted row with a gradient in
// its accumulator), and that accumulators and flags are cleared after.
func checkKernels(newGPU func() gpu, c kernelCase) (err error) {
	type failure struct{ error }
	must := func(err error) {
		if err != nil {
			panic(failure{err})
		}
	}
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(failure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%v: %w", c, f.error)
		}
	}()
	d, n, m := c.d, c.n, c.m
	chunks := c.g
	if c.tail > 0 {
		chunks++
	}
	E, M := c.g*n+c.tail, chunks*m
	const nrel, usedRel, spare = 6, 4, 2
	rows := E + M + spare
	decoy := rows - 1 // never touched
	st, deg := memStore(int64(rows), d, nrel)
	const lr = 0.1
	e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Store: st, Degrees: deg, Seed: 1, C: 2,
		Hyper: realrun.Hyper{Training: workload.Training{Model: c.kind, Dim: d, Batch: E, Negatives: m, ChunkSize: n}, LR: lr, Workers: 1}}, newGPU())
	must(err)
	defer e.Close()
	done, err := e.bind()
	must(err)
	defer done()
	s := computeStream
	up := func(dst ptr, p unsafe.Pointer, n int) {
		if n > 0 {
			must(e.g.htod(dst, p, int64(4*n), s))
			must(e.g.sync(s))
		}
	}
	down := func(src ptr, n int) []float32 {
		f := make([]float32, n)
		if n > 0 {
			must(e.g.dtoh(unsafe.Pointer(&f[0]), src, int64(4*n), s))
			must(e.g.sync(s))
		}
		return f
	}
	downInts := func(src ptr, n int) []int32 {
		f := down(src, n)
		return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(f))), n)
	}
	near := func(what string, want, got []float32, tol float64) {
		if len(want) != len(got) {
			must(fmt.Errorf("%s: %d values, want %d", what, len(got), len(want)))
		}
		for i := range want {
			if d := math.Abs(float64(want[i] - got[i])); !(d <= tol*(1+math.Abs(float64(want[i])))) {
				must(fmt.Errorf("%s[%d] (row %d, col %d): kernels %g, reference %g", what, i, i/c.d, i%c.d, got[i], want[i]))
			}
		}
	}

	rng := rand.New(rand.NewPCG(uint64(c.d), uint64(c.n*1000+c.m*10+c.distinct)))
	rd := rows * d
	var emb, state [2][]float32
	for t := range 2 {
		emb[t] = randFloats(rng, rd)
		state[t] = make([]float32, rd)
		for i := range state[t] {
			state[t][i] = 0.1 + rng.Float32()
		}
		slot := append(append([]float32(nil), emb[t]...), state[t]...)
		up(e.slotMem[t].p, unsafe.Pointer(&slot[0]), len(slot))
	}
	pick := func(own int) int32 {
		if c.distinct > 0 {
			return int32(rng.IntN(c.distinct))
		}
		return int32(own)
	}
	src, dst, rel := make([]int32, E), make([]int32, E), make([]int32, E)
	neg, sel := make([]int32, M), make([]int32, M)
	for i := range E {
		src[i], dst[i], rel[i] = pick(i), pick(i), int32(rng.IntN(usedRel))
	}
	for k := range M {
		neg[k], sel[k] = pick(E+k), int32(rng.IntN(2))
	}
	idx := append(append(append(append(append([]int32(nil), src...), dst...), rel...), neg...), sel...)
	up(e.idx[0].p, unsafe.Pointer(&idx[0]), len(idx))
	bi := batchIndex{idx: e.idx[0], n: E, negs: M, offSrc: 0, offDst: int64(E), offRel: int64(2 * E), offN: int64(3 * E), offSel: int64(3*E + M)}
	uses := c.kind.UsesRelations()
	relEmb := e.Relations()
	var relState []float32
	if uses {
		relState = down(e.relState.p, nrel*d)
	}
	tab := [2]table{e.accA.table(e.slotMem[0].p, e.slotMem[0].at(int64(rd)), int64(rows)),
		e.accB.table(e.slotMem[1].p, e.slotMem[1].at(int64(rd)), int64(rows))}
	must(e.g.memset32(e.loss.p, 0, 2, s))
	if c.g > 0 {
		must(e.trainGroup(&bi, 0, c.g, n, tab[0], tab[1]))
	}
	if c.tail > 0 {
		must(e.trainGroup(&bi, c.g, 1, c.tail, tab[0], tab[1]))
	}
	must(e.g.sync(s))

	// The reference: each chunk through model.ChunkGrad, the gradients
	// summed per row of their table.
	var ref [2][]float32
	ref[0], ref[1] = make([]float32, rd), make([]float32, rd)
	refRel := make([]float32, nrel*d)
	touched := [2]map[int32]bool{{}, {}}
	var lossRef float64
	row := func(f []float32, r int32) []float32 { return f[int(r)*d : int(r+1)*d] }
	for ch := range chunks {
		nc := n
		if ch == c.g {
			nc = c.tail
		}
		e0, k0 := ch*n, ch*m
		S, D, N := make([]float32, nc*d), make([]float32, nc*d), make([]float32, m*d)
		var R, gR []float32
		if uses {
			R, gR = make([]float32, nc*d), make([]float32, nc*d)
		}
		for i := range nc {
			copy(S[i*d:], row(emb[0], src[e0+i]))
			copy(D[i*d:], row(emb[1], dst[e0+i]))
			if uses {
				copy(R[i*d:], row(relEmb, rel[e0+i]))
			}
		}
		for k := range m {
			copy(N[k*d:], row(emb[sel[k0+k]], neg[k0+k]))
		}
		gS, gD, gN := make([]float32, nc*d), make([]float32, nc*d), make([]float32, m*d)
		lossRef += float64(model.ChunkGrad(c.kind, d, S, R, D, N, nc, m, gS, gR, gD, gN, nil))
		add := func(acc []float32, r int32, g []float32) {
			a := row(acc, r)
			for j := range a {
				a[j] += g[j]
			}
		}
		for i := range nc {
			add(ref[0], src[e0+i], gS[i*d:])
			add(ref[1], dst[e0+i], gD[i*d:])
			touched[0][src[e0+i]], touched[1][dst[e0+i]] = true, true
			if uses {
				add(refRel, rel[e0+i], gR[i*d:])
			}
		}
		for k := range m {
			t := sel[k0+k]
			add(ref[t], neg[k0+k], gN[k*d:])
			touched[t][neg[k0+k]] = true
		}
	}
	var loss float64
	must(e.g.dtoh(unsafe.Pointer(&loss), e.loss.p, 8, s))
	must(e.g.sync(s))
	if !(math.Abs(loss-lossRef) <= 1e-4*(1+math.Abs(lossRef))) {
		must(fmt.Errorf("loss: kernels %g, reference %g", loss, lossRef))
	}
	accs := [2]accum{e.accA, e.accB}
	for t, name := range []string{"A", "B"} {
		near("gradient sums of table "+name, ref[t], down(accs[t].acc.p, rd), 1e-4)
		count := int(downInts(accs[t].count.p, 1)[0])
		list := append([]int32(nil), downInts(accs[t].list.p, count)...)
		var want []int32
		for r := range touched[t] {
			want = append(want, r)
		}
		sort.Slice(list, func(i, j int) bool { return list[i] < list[j] })
		sort.Slice(want, func(i, j int) bool { return want[i] < want[j] })
		if fmt.Sprint(list) != fmt.Sprint(want) {
			must(fmt.Errorf("rows listed for Adagrad in table %s: %v, want %v", name, list, want))
		}
	}
	if uses {
		near("relation gradient sums", refRel, down(e.relAcc.acc.p, nrel*d), 1e-4)
	}

	// A decoy past the end of table A's list: a gradient in the
	// accumulator of an unlisted row, which Adagrad must leave alone.
	count := int(downInts(e.accA.count.p, 1)[0])
	decoyGrad := make([]float32, d)
	for j := range decoyGrad {
		decoyGrad[j] = 0.5 + float32(j%3)
	}
	decoyRow := int32(decoy)
	up(e.accA.list.at(int64(count)), unsafe.Pointer(&decoyRow), 1)
	up(e.accA.acc.at(int64(decoy*d)), unsafe.Pointer(&decoyGrad[0]), d)

	for t := range 2 {
		must(e.adagrad(tab[t]))
	}
	if uses {
		must(e.adagrad(e.relAcc.table(e.rel.p, e.relState.p, int64(E))))
	}
	must(e.g.sync(s))
	for t, name := range []string{"A", "B"} {
		model.Adagrad(emb[t], state[t], ref[t], lr, workload.AdagradEps)
		near("embeddings after Adagrad, table "+name, emb[t], down(tab[t].emb, rd), 1e-4)
		near("Adagrad state, table "+name, state[t], down(tab[t].state, rd), 1e-4)
		wantAcc := make([]float32, rd)
		if t == 0 {
			copy(wantAcc[decoy*d:], decoyGrad)
		}
		near("accumulator after Adagrad, table "+name, wantAcc, down(accs[t].acc.p, rd), 0)
		near("row flags after Adagrad, table "+name, make([]float32, rows), down(accs[t].flag.p, rows), 0)
	}
	if uses {
		model.Adagrad(relEmb, relState, refRel, lr, workload.AdagradEps)
		near("relations after Adagrad", relEmb, down(e.rel.p, nrel*d), 1e-4)
		near("relation Adagrad state", relState, down(e.relState.p, nrel*d), 1e-4)
	}
	return nil
}
