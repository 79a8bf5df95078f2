package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"unsafe"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/workload"
)

// kernelCase is one batch shape for checkKernels: g full chunks of n
// edges and a tail chunk of tail edges (0: none), m negatives per chunk.
type kernelCase struct {
	kind          workload.Model
	d, n, g, tail int
	m             int
	distinct      int  // > 0: every occurrence draws its row from the first distinct rows (rows touched many times)
	same          bool // the bucket's two partitions are one table
	obj           workload.Objective
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
	if c.same {
		s += "_same"
	}
	if o := c.obj; o != (workload.Objective{}) {
		s += "_" + string(o.LossKind())
		if o.Margin != 0 {
			s += fmt.Sprintf("%g", o.Margin)
		}
		if o.Adversarial != 0 {
			s += fmt.Sprintf("_adv%g", o.Adversarial)
		}
		if o.Reg() != workload.RegNone {
			s += fmt.Sprintf("_%s%g", o.Reg(), o.RegCoef)
		}
	}
	return s
}

// kernelCases are ragged shapes: d not a multiple of 32 (odd where the
// model allows), odd chunk sizes, tail chunks, m = 1 and m around a warp,
// batches that touch a few rows many times, and buckets whose two
// partitions are one table.
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
	{kind: workload.Dot, d: 1, n: 7, g: 3, m: 5}, // one float per row: lane 0 of a row's warp is its only lane
	{kind: workload.DistMult, d: 33, n: 9, g: 2, tail: 2, m: 7, distinct: 4, same: true},
	{kind: workload.ComplEx, d: 12, n: 7, g: 2, m: 5, same: true},
}

// The objectives of the kernel checks beside the default softmax.
var (
	ranking    = workload.Objective{Loss: workload.Ranking, Margin: 1}
	rankingAdv = workload.Objective{Loss: workload.Ranking, Margin: 0.5, Adversarial: 0.7}
	logistic   = workload.Objective{Loss: workload.Logistic}
	logisticM  = workload.Objective{Loss: workload.Logistic, Margin: 0.5}
	rotateLog  = workload.Objective{Loss: workload.Logistic, Margin: 2, Adversarial: 1} // RotatE's self-adversarial
	l2Reg      = workload.Objective{Regularizer: workload.RegL2, RegCoef: 0.05}
	n3Reg      = workload.Objective{Regularizer: workload.RegN3, RegCoef: 0.03}
)

// modelCases are the other named models, PBG pairs (every operator and
// every comparator at least once), every loss, and both regularisers, on
// the same ragged shapes (the fused models too, where an objective takes
// them off their fused path).
var modelCases = []kernelCase{
	{kind: workload.TransEL1, d: 12, n: 7, g: 3, m: 5},
	{kind: workload.TransEL2, d: 33, n: 13, g: 2, tail: 5, m: 31},
	{kind: workload.RotatE, d: 34, n: 7, g: 3, m: 33, obj: rotateLog},
	{kind: workload.RotatE, d: 12, n: 9, g: 2, tail: 2, m: 7, distinct: 4, same: true},
	{kind: workload.TransEL1, d: 33, n: 13, g: 2, m: 33, distinct: 4, obj: ranking},
	{kind: "none+cos", d: 12, n: 7, g: 3, m: 5},
	{kind: "diagonal+l2", d: 33, n: 7, g: 2, tail: 3, m: 31},
	{kind: "translation+squared_l2", d: 12, n: 7, g: 3, m: 5, distinct: 3},
	{kind: "linear+cos", d: 12, n: 7, g: 2, tail: 3, m: 5},
	{kind: "linear+dot", d: 33, n: 5, g: 2, m: 33, distinct: 4, obj: logistic},
	{kind: "affine+l1", d: 12, n: 7, g: 2, m: 5},
	{kind: "affine+squared_l2", d: 34, n: 5, g: 2, tail: 2, m: 7, same: true, obj: rankingAdv},
	{kind: "complex_diagonal+l2", d: 34, n: 7, g: 2, m: 31},
	{kind: "complex_diagonal+squared_l2", d: 12, n: 7, g: 2, tail: 3, m: 5, obj: n3Reg}, // n3 on each operator's moduli
	{kind: "complex_diagonal+cos", d: 12, n: 7, g: 2, m: 5, distinct: 3, obj: logisticM},
	{kind: "none+l1", d: 12, n: 7, g: 2, m: 5, distinct: 2, same: true}, // q − x = 0: l1's subgradient 0
	{kind: "diagonal+l1", d: 1, n: 7, g: 3, m: 5},
	{kind: workload.Dot, d: 33, n: 13, g: 2, tail: 5, m: 31, obj: ranking},
	{kind: workload.DistMult, d: 12, n: 7, g: 3, m: 5, obj: logistic},
	{kind: workload.DistMult, d: 12, n: 7, g: 3, m: 5, obj: l2Reg},
	{kind: workload.ComplEx, d: 34, n: 13, g: 2, tail: 6, m: 33, obj: n3Reg},
	{kind: workload.ComplEx, d: 12, n: 7, g: 2, m: 5, obj: l2Reg},
	{kind: workload.RotatE, d: 12, n: 7, g: 2, m: 5, obj: n3Reg},
	{kind: "linear+l2", d: 12, n: 7, g: 2, m: 5, distinct: 3, obj: n3Reg},
	{kind: "translation+dot", d: 12, n: 7, g: 2, m: 5, obj: l2Reg},
}

// eachCases are rows stepped very many times under rule each (checkEach
// only: the summed gradients of one row touched thousands of times cancel
// to well below their float32 rounding, so checkSum's comparison does not
// apply): a row with more occurrences than an adagrad_each block has
// threads (220, sorted by 128), and rows with more than EACH_CAP (the
// entity row 2203, the relation row 1100: stepped by the scan in order)
// whose relation rows are two blocks' spans (linear at d 12: 144 floats).
var eachCases = []kernelCase{
	{kind: workload.DistMult, d: 33, n: 90, g: 2, m: 40, distinct: 1, same: true},
	{kind: "linear+dot", d: 12, n: 1100, g: 1, m: 3, distinct: 1, same: true},
}

// kernelFailure carries a failed check out of checkKernels' helpers.
type kernelFailure struct{ error }

func must(err error) {
	if err != nil {
		panic(kernelFailure{err})
	}
}

// kernelRun is one case's engine, inputs and the CPU reference's state.
type kernelRun struct {
	c                kernelCase
	e                *Engine
	rows, nrel       int
	emb, state       [2][]float32 // the reference's tables (one when same)
	relEmb, relState []float32
	src, dst, rel    []int32
	neg, sel         []int32
	tabs             tables
}

const kernelLR = 0.1

// nan poisons what no kernel may read, and the work buffers before each
// group, so that an output a kernel leaves unwritten shows.
var nan = float32(math.NaN())

// poison fills the engine's work buffers with NaN.
func (k *kernelRun) poison() {
	for _, b := range []dev{k.e.Q, k.e.gQ, k.e.N, k.e.gN, k.e.T, k.e.pos, k.e.gp, k.e.gR} {
		must(k.e.g.memset32(b.p, math.Float32bits(nan), b.n/4, computeStream))
	}
}

// newKernelRun builds case c's engine on newGPU with the given rule, two
// tables of random rows (one when c.same) and a batch of random indices,
// uploaded as one index piece.
func newKernelRun(newGPU func() gpu, c kernelCase, rule realrun.Duplicates) *kernelRun {
	// The sum rule's check trains several chunks as one group, as the
	// batch step does: its engine takes the batch step (buffers for a
	// batch's chunks at once).
	var mb realrun.MicroBatching
	if rule == realrun.DuplicatesSum {
		mb.Count = 1
	}
	d, n, m := c.d, c.n, c.m
	chunks := c.g
	if c.tail > 0 {
		chunks++
	}
	E, M := c.g*n+c.tail, chunks*m
	const nrel, usedRel, spare = 6, 4, 2
	rows := E + M + spare
	st, deg := memStore(int64(rows), d, nrel)
	e, err := newEngine(realrun.EngineOptions{Engine: "cuda", Buffer: realrun.BufferGPU, Store: st, Degrees: deg, Seed: 1, C: 2,
		Hyper: realrun.Hyper{Training: workload.Training{Model: c.kind, Dim: d, Batch: E, Negatives: m, ChunkSize: n, Objective: c.obj}, LR: kernelLR, Workers: 1, Duplicates: rule, Micro: mb}}, newGPU())
	must(err)
	k := &kernelRun{c: c, e: e, rows: rows, nrel: nrel}
	rng := rand.New(rand.NewPCG(uint64(c.d), uint64(c.n*1000+c.m*10+c.distinct)))
	rd := rows * d
	poison := rows - 2 // a NaN row that only padding indices name
	for t := range 2 {
		k.emb[t] = randFloats(rng, rd)
		k.state[t] = make([]float32, rd)
		for i := range k.state[t] {
			k.state[t][i] = 0.1 + rng.Float32()
		}
		for j := poison * d; j < (poison+1)*d; j++ {
			k.emb[t][j] = nan
		}
		k.upload(e.slotMem[t].p, append(append([]float32(nil), k.emb[t]...), k.state[t]...))
	}
	pick := func(own int) int32 {
		if c.distinct > 0 {
			return int32(rng.IntN(c.distinct))
		}
		return int32(own)
	}
	k.src, k.dst, k.rel = make([]int32, E), make([]int32, E), make([]int32, E)
	k.neg, k.sel = make([]int32, M), make([]int32, M)
	for i := range E {
		k.src[i], k.dst[i], k.rel[i] = pick(i), pick(i), int32(rng.IntN(usedRel))
	}
	for j := range M {
		k.neg[j], k.sel[j] = pick(E+j), int32(rng.IntN(2))
	}
	rdp := int64(rd)
	k.tabs = tables{embA: e.slotMem[0].p, stateA: e.slotMem[0].at(rdp), embB: e.slotMem[1].p, stateB: e.slotMem[1].at(rdp),
		rowsA: int64(rows), rowsB: int64(rows)}
	if c.same {
		k.tabs.embB, k.tabs.stateB, k.tabs.same = k.tabs.embA, k.tabs.stateA, true
		k.emb[1], k.state[1] = k.emb[0], k.state[0]
	}
	// The index piece: the tables' header, then L int32s a chunk (its
	// count, then its indices); a padding edge of the tail chunk names the
	// NaN row and relation, which no kernel may read for it.
	piece := make([]int32, pieceInts+chunks*e.L)
	k.tabs.header(piece)
	for ch := range chunks {
		ci := piece[pieceInts+ch*e.L:]
		ci[0] = int32(min(n, E-ch*n))
		ci = ci[1:]
		for i := 0; i < n; i++ {
			ci[i], ci[n+i], ci[2*n+i] = int32(poison), int32(poison), nrel-1
			if ch*n+i < E {
				ci[i], ci[n+i], ci[2*n+i] = k.src[ch*n+i], k.dst[ch*n+i], k.rel[ch*n+i]
			}
		}
		for j := range m {
			ci[3*n+j], ci[3*n+m+j] = k.neg[ch*m+j], k.sel[ch*m+j]
		}
	}
	must(e.g.htod(e.idx[0].p, unsafe.Pointer(&piece[0]), int64(4*len(piece)), computeStream))
	must(e.g.sync(computeStream))
	if c.kind.UsesRelations() {
		w := k.relWidth()
		// Relation rows of the test's own: random (about 1, as
		// InitRelations starts them, for the diagonal operators; linear
		// maps scaled to keep the queries' size).
		k.relEmb = randFloats(rng, nrel*w)
		scale := float32(1)
		if op := c.kind.Operator(); op == workload.OpLinear || op == workload.OpAffine {
			scale = float32(2 / math.Sqrt(float64(d)))
		}
		for j := range k.relEmb {
			k.relEmb[j] *= scale
			if c.kind.Operator() == workload.OpDiagonal {
				k.relEmb[j] += 1
			}
		}
		for j := (nrel - 1) * w; j < nrel*w; j++ {
			k.relEmb[j] = nan
		}
		k.upload(e.rel.p, k.relEmb)
		k.relState = k.down(e.relState.p, nrel*w)
		for j := range k.relState {
			k.relState[j] = 0.1 + rng.Float32()
		}
		k.upload(e.relState.p, k.relState)
	}
	return k
}

// relWidth is the floats of one relation row.
func (k *kernelRun) relWidth() int { return k.c.kind.RelWidth(k.c.d) }

// bind makes the engine's GPU current; call the result when done.
func (k *kernelRun) bind() func() {
	done, err := k.e.bind()
	must(err)
	return done
}

// chunks is the batch's chunks: the full ones and the tail.
func (k *kernelRun) chunks() int {
	if k.c.tail > 0 {
		return k.c.g + 1
	}
	return k.c.g
}

func (k *kernelRun) upload(dst ptr, f []float32) {
	if len(f) > 0 {
		must(k.e.g.htod(dst, unsafe.Pointer(&f[0]), int64(4*len(f)), computeStream))
		must(k.e.g.sync(computeStream))
	}
}

func (k *kernelRun) down(src ptr, n int) []float32 {
	f := make([]float32, n)
	if n > 0 {
		must(k.e.g.dtoh(unsafe.Pointer(&f[0]), src, int64(4*n), computeStream))
		must(k.e.g.sync(computeStream))
	}
	return f
}

func (k *kernelRun) downInts(src ptr, n int) []int32 {
	f := k.down(src, n)
	return unsafe.Slice((*int32)(unsafe.Pointer(unsafe.SliceData(f))), n)
}

func (k *kernelRun) near(what string, want, got []float32, tol float64) {
	if len(want) != len(got) {
		must(fmt.Errorf("%s: %d values, want %d", what, len(got), len(want)))
	}
	for i := range want {
		if math.Float32bits(want[i]) == math.Float32bits(got[i]) {
			continue // equal, NaN rows too
		}
		if d := math.Abs(float64(want[i] - got[i])); !(d <= tol*(1+math.Abs(float64(want[i])))) {
			must(fmt.Errorf("%s[%d] (row %d, col %d): kernels %g, reference %g", what, i, i/k.c.d, i%k.c.d, got[i], want[i]))
		}
	}
}

// table is the reference's table of an occurrence: 0 sources, 1
// destinations (0 when the bucket's partitions are one).
func (k *kernelRun) table(t int32) int32 {
	if k.c.same {
		return 0
	}
	return t
}

// chunkGrads is model.ChunkGrad on chunk ch of the batch against the
// reference's current tables: per occurrence gradients of its sources,
// destinations, negatives and relations, and its loss.
func (k *kernelRun) chunkGrads(ch int) (gS, gD, gN, gR []float32, nc int, loss float64) {
	c, d := k.c, k.c.d
	nc = c.n
	if ch == c.g {
		nc = c.tail
	}
	e0, k0 := ch*c.n, ch*c.m
	w := k.relWidth()
	row := func(f []float32, r int32) []float32 { return f[int(r)*d : int(r+1)*d] }
	S, D, N := make([]float32, nc*d), make([]float32, nc*d), make([]float32, c.m*d)
	var R []float32
	uses := c.kind.UsesRelations()
	if uses {
		R, gR = make([]float32, nc*w), make([]float32, nc*w)
	}
	for i := range nc {
		copy(S[i*d:], row(k.emb[0], k.src[e0+i]))
		copy(D[i*d:], row(k.emb[1], k.dst[e0+i]))
		if uses {
			copy(R[i*w:], k.relEmb[int(k.rel[e0+i])*w:int(k.rel[e0+i]+1)*w])
		}
	}
	for j := range c.m {
		copy(N[j*d:], row(k.emb[k.table(k.sel[k0+j])], k.neg[k0+j]))
	}
	gS, gD, gN = make([]float32, nc*d), make([]float32, nc*d), make([]float32, c.m*d)
	loss = float64(model.ChunkGrad(c.kind, c.obj, d, S, R, D, N, nc, c.m, gS, gR, gD, gN, nil))
	if math.IsNaN(loss) {
		must(fmt.Errorf("model.ChunkGrad gives no loss for %s with %+v", c.kind, c.obj))
	}
	return gS, gD, gN, gR, nc, loss
}

func (k *kernelRun) loss() float64 {
	var parts [lossParts]float64
	must(k.e.g.dtoh(unsafe.Pointer(&parts[0]), k.e.loss.p, 8*lossParts, computeStream))
	must(k.e.g.sync(computeStream))
	var l float64
	for _, v := range parts {
		l += v
	}
	return l
}

// checkKernels runs one batch of shape c through the engine's kernels on
// the GPU that newGPU returns and compares with the CPU engine's Go
// reference (model.ChunkGrad, model.Adagrad), under each update rule:
// checkSum and checkEach.
func checkKernels(newGPU func() gpu, c kernelCase) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(kernelFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%v: %w", c, f.error)
		}
	}()
	checkSum(newGPU, c)
	checkEach(newGPU, c)
	return nil
}

// checkEachKernels is checkKernels under rule each only (eachCases).
func checkEachKernels(newGPU func() gpu, c kernelCase) (err error) {
	defer func() {
		if r := recover(); r != nil {
			f, ok := r.(kernelFailure)
			if !ok {
				panic(r)
			}
			err = fmt.Errorf("%v: %w", c, f.error)
		}
	}()
	checkEach(newGPU, c)
	return nil
}

// checkSum trains the batch as groups (one group with a padded tail chunk
// when there is a tail; else its first chunks, then its last, the second
// group adding to the first's accumulators) and checks the loss, the
// per-row gradient sums in the accumulators, the list of touched rows;
// then one adagrad_sum step: the embeddings and state as model.Adagrad
// with those sums, a decoy row past the end of the list left alone, and
// accumulators and flags cleared after.
func checkSum(newGPU func() gpu, c kernelCase) {
	k := newKernelRun(newGPU, c, realrun.DuplicatesSum)
	e := k.e
	defer e.Close()
	defer k.bind()()
	s, d, chunks := computeStream, c.d, k.chunks()
	rd := k.rows * d
	must(e.g.memset32(e.loss.p, 0, 2*lossParts, s))
	piece := e.idx[0].p
	k.poison()
	switch {
	case c.tail > 0 || chunks == 1:
		must(e.group(piece, 0, chunks, true))
	default:
		must(e.group(piece, 0, chunks-1, true))
		must(e.group(piece, chunks-1, 1, false))
	}
	must(e.g.sync(s))

	// The reference: each chunk through model.ChunkGrad, the gradients
	// summed per row of their table.
	var ref [2][]float32
	ref[0], ref[1] = make([]float32, rd), make([]float32, rd)
	w := k.relWidth()
	refRel := make([]float32, k.nrel*w)
	touched := [2]map[int32]bool{{}, {}}
	var lossRef float64
	uses := c.kind.UsesRelations()
	add := func(acc []float32, r int32, g []float32) {
		a := acc[int(r)*d : int(r+1)*d]
		for j := range a {
			a[j] += g[j]
		}
	}
	addRel := func(r int32, g []float32) {
		a := refRel[int(r)*w : int(r+1)*w]
		for j := range a {
			a[j] += g[j]
		}
	}
	for ch := range chunks {
		gS, gD, gN, gR, nc, l := k.chunkGrads(ch)
		lossRef += l
		e0, k0 := ch*c.n, ch*c.m
		for i := range nc {
			a, b := k.table(0), k.table(1)
			add(ref[a], k.src[e0+i], gS[i*d:])
			add(ref[b], k.dst[e0+i], gD[i*d:])
			touched[a][k.src[e0+i]], touched[b][k.dst[e0+i]] = true, true
			if uses {
				addRel(k.rel[e0+i], gR[i*w:])
			}
		}
		for j := range c.m {
			t := k.table(k.sel[k0+j])
			add(ref[t], k.neg[k0+j], gN[j*d:])
			touched[t][k.neg[k0+j]] = true
		}
	}
	if loss := k.loss(); !(math.Abs(loss-lossRef) <= 1e-4*(1+math.Abs(lossRef))) {
		must(fmt.Errorf("loss: kernels %g, reference %g", loss, lossRef))
	}
	counts := k.downInts(e.counts.p, 3)
	ntab := 2
	if c.same {
		ntab = 1
	}
	for t, name := range []string{"A", "B"}[:ntab] {
		k.near("gradient sums of table "+name, ref[t], k.down(e.acc[t].acc.p, rd), 1e-4)
		list := append([]int32(nil), k.downInts(e.acc[t].list.p, int(counts[t]))...)
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
		k.near("relation gradient sums", refRel, k.down(e.acc[2].acc.p, k.nrel*w), 1e-4)
	}

	// A decoy past the end of table A's list: a gradient in the
	// accumulator of an unlisted row, which Adagrad must leave alone.
	decoy := k.rows - 1 // never touched
	decoyGrad := make([]float32, d)
	for j := range decoyGrad {
		decoyGrad[j] = 0.5 + float32(j%3)
	}
	decoyRow := int32(decoy)
	must(e.g.htod(e.acc[0].list.at(int64(counts[0])), unsafe.Pointer(&decoyRow), 4, s))
	k.upload(e.acc[0].acc.at(int64(decoy*d)), decoyGrad)

	must(e.step(piece, int64(k.rows)))
	must(e.g.sync(s))
	embs := [2]ptr{k.tabs.embA, k.tabs.embB}
	states := [2]ptr{k.tabs.stateA, k.tabs.stateB}
	for t, name := range []string{"A", "B"}[:ntab] {
		model.Adagrad(k.emb[t], k.state[t], ref[t], kernelLR, workload.AdagradEps)
		k.near("embeddings after Adagrad, table "+name, k.emb[t], k.down(embs[t], rd), 1e-4)
		k.near("Adagrad state, table "+name, k.state[t], k.down(states[t], rd), 1e-4)
		wantAcc := make([]float32, rd)
		if t == 0 {
			copy(wantAcc[decoy*d:], decoyGrad)
		}
		k.near("accumulator after Adagrad, table "+name, wantAcc, k.down(e.acc[t].acc.p, rd), 0)
		k.near("row flags after Adagrad, table "+name, make([]float32, k.rows), k.down(e.acc[t].flag.p, k.rows), 0)
	}
	if uses {
		model.Adagrad(k.relEmb, k.relState, refRel, kernelLR, workload.AdagradEps)
		k.near("relations after Adagrad", k.relEmb, k.down(e.rel.p, k.nrel*w), 1e-4)
		k.near("relation Adagrad state", k.relState, k.down(e.relState.p, k.nrel*w), 1e-4)
	}
}

// checkEach trains the batch as the chunk step with rule each — a group
// and an adagrad_each step per chunk, recorded as a graph (chunkStep) —
// and compares the tables with the
// CPU engine's order of per-occurrence steps (each chunk's gradients
// against the tables as the chunk starts; then every source and
// destination edge by edge, the negatives, the relations edge by edge).
// Also checked: the loss, and that every row's occurrence list is empty
// and its flag clear after.
func checkEach(newGPU func() gpu, c kernelCase) {
	k := newKernelRun(newGPU, c, realrun.DuplicatesEach)
	e := k.e
	defer e.Close()
	defer k.bind()()
	s, d, chunks := computeStream, c.d, k.chunks()
	uses := c.kind.UsesRelations()
	must(e.g.memset32(e.loss.p, 0, 2*lossParts, s))
	var lossRef float64
	w := k.relWidth()
	step := func(f, st []float32, r int32, g []float32) {
		model.Adagrad(f[int(r)*d:int(r+1)*d], st[int(r)*d:int(r+1)*d], g[:d], kernelLR, workload.AdagradEps)
	}
	stepRel := func(r int32, g []float32) {
		model.Adagrad(k.relEmb[int(r)*w:int(r+1)*w], k.relState[int(r)*w:int(r+1)*w], g[:w], kernelLR, workload.AdagradEps)
	}
	for ch := range chunks {
		gS, gD, gN, gR, nc, l := k.chunkGrads(ch)
		lossRef += l
		k.poison()
		must(e.chunkStep(0, ch)) // recorded as a graph the first time, replayed after
		if e.graphOff != "" {
			must(fmt.Errorf("graphs off: %s", e.graphOff))
		}
		e0, k0 := ch*c.n, ch*c.m
		for i := range nc {
			a, b := k.table(0), k.table(1)
			step(k.emb[a], k.state[a], k.src[e0+i], gS[i*d:])
			step(k.emb[b], k.state[b], k.dst[e0+i], gD[i*d:])
		}
		for j := range c.m {
			t := k.table(k.sel[k0+j])
			step(k.emb[t], k.state[t], k.neg[k0+j], gN[j*d:])
		}
		if uses {
			for i := range nc {
				stepRel(k.rel[e0+i], gR[i*w:])
			}
		}
	}
	must(e.g.sync(s))
	if loss := k.loss(); !(math.Abs(loss-lossRef) <= 1e-4*(1+math.Abs(lossRef))) {
		must(fmt.Errorf("loss: kernels %g, reference %g", loss, lossRef))
	}
	rd := k.rows * d
	embs := [2]ptr{k.tabs.embA, k.tabs.embB}
	states := [2]ptr{k.tabs.stateA, k.tabs.stateB}
	ntab := 2
	if c.same {
		ntab = 1
	}
	for t, name := range []string{"A", "B"}[:ntab] {
		k.near("embeddings after the steps, table "+name, k.emb[t], k.down(embs[t], rd), 1e-4)
		k.near("Adagrad state, table "+name, k.state[t], k.down(states[t], rd), 1e-4)
		k.near("row flags after the steps, table "+name, make([]float32, k.rows), k.down(e.acc[t].flag.p, k.rows), 0)
		if heads := k.downInts(e.acc[t].head.p, k.rows); slices.ContainsFunc(heads, func(h int32) bool { return h != -1 }) {
			must(fmt.Errorf("occurrence lists of table %s not emptied: heads %v", name, heads))
		}
	}
	if uses {
		k.near("relations after the steps", k.relEmb, k.down(e.rel.p, k.nrel*w), 1e-4)
		k.near("relation Adagrad state", k.relState, k.down(e.relState.p, k.nrel*w), 1e-4)
	}
}
