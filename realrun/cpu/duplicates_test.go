package cpu

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// dupChunk is one chunk that touches rows more than once, on two
// partitions of dupRows rows with warm parameters.
type dupChunk struct {
	name   string
	model  workload.Model
	si, di int          // one partition (si == di: one buffer) or two
	edges  []store.Edge // global node ids
}

const (
	dupRows, dupDim, dupNegs, dupRels = 5, 8, 8, 3
	dupSeed                           = 7
)

// dupModels are the score functions the chunk-step tests train: relation
// rows of every width (RelWidth: d, d/2, 2d, 2d², 2(d²+d)).
var dupModels = []workload.Model{workload.Dot, workload.DistMult, workload.ComplEx, workload.TransEL1, workload.TransEL2, workload.RotatE, "linear+cos", "affine+l2", "complex_diagonal+squared_l2", "translation+dot"}

// dupChunks: within one partition, row 0 is the source of two edges and
// the destination of two others, row 3 an edge from itself to itself, and
// eight negatives among five rows repeat rows and hit the edges' rows;
// across two partitions, local row 0 is a source three times and a
// destination three times (two tables: two rows). Relations repeat.
func dupChunks() []dupChunk {
	one := []store.Edge{{Src: 0, Rel: 0, Dst: 1}, {Src: 1, Rel: 0, Dst: 2}, {Src: 0, Rel: 1, Dst: 1}, {Src: 2, Rel: 0, Dst: 0}, {Src: 3, Rel: 1, Dst: 3}, {Src: 4, Rel: 2, Dst: 0}}
	two := []store.Edge{{Src: 0, Rel: 0, Dst: 5}, {Src: 1, Rel: 0, Dst: 6}, {Src: 0, Rel: 1, Dst: 5}, {Src: 2, Rel: 0, Dst: 5}, {Src: 0, Rel: 1, Dst: 7}, {Src: 4, Rel: 2, Dst: 9}}
	var cs []dupChunk
	for _, kind := range dupModels {
		cs = append(cs, dupChunk{fmt.Sprintf("%s/one-partition", kind), kind, 0, 0, one}, dupChunk{fmt.Sprintf("%s/two-partitions", kind), kind, 0, 1, two})
	}
	return cs
}

// dupState is the parameters a chunk updates: each partition's
// embeddings followed by its Adagrad state, and the relations'.
type dupState struct {
	parts         [][]float32
	relEmb, relSt []float32
}

func newDupState(kind workload.Model) dupState {
	rng := rand.New(rand.NewPCG(3, 4))
	s := dupState{parts: make([][]float32, 2)}
	for p := range s.parts {
		f := make([]float32, 2*dupRows*dupDim)
		for i := range dupRows * dupDim {
			f[i] = 0.5 * (2*rng.Float32() - 1)
			f[dupRows*dupDim+i] = 0.05 + 0.1*rng.Float32()
		}
		s.parts[p] = f
	}
	if kind.UsesRelations() {
		w := kind.RelWidth(dupDim)
		s.relEmb, s.relSt = make([]float32, dupRels*w), make([]float32, dupRels*w)
		for i := range s.relEmb {
			s.relEmb[i] = 1 + 0.3*(2*rng.Float32()-1)
			if kind.Distance() {
				// Near zero as a translation starts: a translation
				// beyond the rows' range gives every distance the same
				// signs, and the l1 gradient of every row is zero.
				s.relEmb[i] -= 1
			}
			s.relSt[i] = 0.05 + 0.1*rng.Float32()
		}
	}
	return s
}

func (s dupState) clone() dupState {
	c := dupState{relEmb: append([]float32(nil), s.relEmb...), relSt: append([]float32(nil), s.relSt...)}
	for _, p := range s.parts {
		c.parts = append(c.parts, append([]float32(nil), p...))
	}
	return c
}

func dupStore() (*store.Store, []int32) {
	deg := make([]int32, 2*dupRows)
	for i := range deg {
		deg[i] = int32(1 + i%3)
	}
	return &store.Store{M: store.Manifest{P: 2, Rows: dupRows, Nodes: 2 * dupRows, Relations: dupRels, Dim: dupDim}}, deg
}

func dupHyper(kind workload.Model, rule realrun.Duplicates) realrun.Hyper {
	return realrun.Hyper{Training: workload.Training{Model: kind, Dim: dupDim, Batch: 64, Negatives: dupNegs, ChunkSize: 8}, DegreeFrac: 0.5, LR: 0.1, Workers: 1, Duplicates: rule}
}

// trainDup trains the chunk once with the engine under rule, from start,
// and returns the parameters after it.
func trainDup(t *testing.T, c dupChunk, rule realrun.Duplicates, start dupState) dupState {
	t.Helper()
	s := start.clone()
	st, deg := dupStore()
	h := dupHyper(c.model, rule)
	eng := New(h, st, deg, 1)
	copy(eng.rel.emb, s.relEmb)
	copy(eng.rel.state, s.relSt)
	src, dst := store.BufferOf(s.parts[c.si]), store.BufferOf(s.parts[c.di])
	if c.si == c.di {
		dst = src
	}
	ws := newWorkerScratch(h, dupSeed)
	loss := eng.trainChunk(ws, append([]store.Edge(nil), c.edges...), c.si, src, c.di, dst)
	require.False(t, math.IsNaN(loss))
	s.relEmb, s.relSt = eng.rel.emb, eng.rel.state
	return s
}

// occurrence is one row or relation a chunk touches, with its gradient.
type occurrence struct {
	table, row int // table: a partition, or -1 for the relations
	g          []float32
}

// reference trains the chunk from start the straightforward way: the
// negatives the engine's worker draws, model.ChunkGrad against the
// starting parameters, then under DuplicatesEach one Adagrad step per
// occurrence in the chunk's order, under DuplicatesSum one per distinct
// (partition, row) and relation with the sum of its occurrences'
// gradients. It also returns the occurrences.
func reference(t *testing.T, c dupChunk, rule realrun.Duplicates, start dupState) (dupState, []occurrence) {
	t.Helper()
	s := start.clone()
	st, deg := dupStore()
	d, n, m := dupDim, len(c.edges), dupNegs
	w := c.model.RelWidth(d)
	negRow, negSide := make([]int32, m), make([]bool, m)
	rng := rand.New(rand.NewPCG(dupSeed, sample.WorkerStream))
	sample.NewNegativeSampler(st, deg, 0.5).Draw(rng, c.si, c.di, negRow, negSide)
	S, R, D, N := make([]float32, n*d), make([]float32, n*w), make([]float32, n*d), make([]float32, m*d)
	gS, gR, gD, gN := make([]float32, n*d), make([]float32, n*w), make([]float32, n*d), make([]float32, m*d)
	row := func(part, r int) []float32 { return start.parts[part][r*d : (r+1)*d] }
	var occ []occurrence
	for i, e := range c.edges {
		sr, dr := int(e.Src)-c.si*dupRows, int(e.Dst)-c.di*dupRows
		copy(S[i*d:], row(c.si, sr))
		copy(D[i*d:], row(c.di, dr))
		if c.model.UsesRelations() {
			copy(R[i*w:], start.relEmb[int(e.Rel)*w:int(e.Rel+1)*w])
		}
		occ = append(occ, occurrence{c.si, sr, gS[i*d : (i+1)*d]}, occurrence{c.di, dr, gD[i*d : (i+1)*d]})
	}
	for k := range m {
		p := c.si
		if negSide[k] {
			p = c.di
		}
		copy(N[k*d:], row(p, int(negRow[k])))
		occ = append(occ, occurrence{p, int(negRow[k]), gN[k*d : (k+1)*d]})
	}
	if !c.model.UsesRelations() {
		R, gR = nil, nil
	} else {
		for i, e := range c.edges {
			occ = append(occ, occurrence{-1, int(e.Rel), gR[i*w : (i+1)*w]})
		}
	}
	model.ChunkGrad(c.model, workload.Objective{}, d, S, R, D, N, n, m, gS, gR, gD, gN, model.NewScratch())
	steps := occ
	if rule == realrun.DuplicatesSum {
		steps = nil
		at := map[[2]int]int{}
		for _, o := range occ {
			k := [2]int{o.table, o.row}
			j, ok := at[k]
			if !ok {
				j = len(steps)
				at[k] = j
				steps = append(steps, occurrence{o.table, o.row, make([]float32, len(o.g))})
			}
			for x, v := range o.g {
				steps[j].g[x] += v
			}
		}
	}
	for _, o := range steps {
		emb, state := s.relEmb, s.relSt
		base, n := o.row*len(o.g), len(o.g) // a relation row: w floats
		if o.table >= 0 {
			emb, state = s.parts[o.table], s.parts[o.table][dupRows*d:]
		}
		model.Adagrad(emb[base:base+n], state[base:base+n], o.g, 0.1, workload.AdagradEps)
	}
	return s, occ
}

// maxRel is max |a−b| ÷ max(|a|, |b|) over the elements (0 where both are
// equal).
func maxRel(a, b []float32) float64 {
	var m float64
	for i := range a {
		if a[i] == b[i] {
			continue
		}
		x, y := float64(a[i]), float64(b[i])
		m = max(m, math.Abs(x-y)/max(math.Abs(x), math.Abs(y)))
	}
	return m
}

func assertSameState(t *testing.T, want, got dupState, tol float64) {
	t.Helper()
	for p := range want.parts {
		assert.LessOrEqual(t, maxRel(want.parts[p], got.parts[p]), tol, "partition %d: embeddings and Adagrad state", p)
	}
	assert.LessOrEqual(t, maxRel(want.relEmb, got.relEmb), tol, "relation embeddings")
	assert.LessOrEqual(t, maxRel(want.relSt, got.relSt), tol, "relation Adagrad state")
}

// TestSumRuleMatchesReference: under DuplicatesSum one chunk whose edges
// and negatives repeat rows (a row as source, destination and negative
// within one partition; the same local row in two partitions; repeated
// relations) leaves the embeddings, their Adagrad state and the relations
// equal, to 1e-6 relative, to the reference that sums ChunkGrad's
// per-occurrence gradients per row and steps each distinct row once.
func TestSumRuleMatchesReference(t *testing.T) {
	for _, c := range dupChunks() {
		t.Run(c.name, func(t *testing.T) {
			start := newDupState(c.model)
			want, occ := reference(t, c, realrun.DuplicatesSum, start)
			// The chunk is the case it is meant to be.
			seen := map[[2]int]int{}
			for _, o := range occ {
				seen[[2]int{o.table, o.row}]++
			}
			require.Less(t, len(seen), len(occ), "rows repeat")
			if c.si == c.di {
				require.GreaterOrEqual(t, seen[[2]int{c.si, 0}], 4, "row 0: two sources, two destinations")
				both := false // a negative is a row that is a source and a destination too
				for _, o := range occ[2*len(c.edges) : 2*len(c.edges)+dupNegs] {
					both = both || o.row != 4 // every row but 4 is both
				}
				require.True(t, both)
			} else {
				require.Equal(t, 3+countNeg(occ, c.si, 0, 2*len(c.edges)), seen[[2]int{c.si, 0}])
				require.GreaterOrEqual(t, seen[[2]int{c.di, 0}], 3)
			}
			if c.model.UsesRelations() {
				require.Equal(t, 3, seen[[2]int{-1, 0}], "relation 0 of three edges")
			}
			got := trainDup(t, c, realrun.DuplicatesSum, start)
			assertSameState(t, want, got, 1e-6)
			assert.Greater(t, maxAbsDiff(start.parts[c.di], got.parts[c.di]), 1e-3, "the chunk moves the rows")
		})
	}
}

// countNeg counts the negatives (occurrences from index from on) of row
// in partition p.
func countNeg(occ []occurrence, p, row, from int) int {
	n := 0
	for _, o := range occ[from:] {
		if o.table == p && o.row == row {
			n++
		}
	}
	return n
}

// TestEachRuleUnchanged: DuplicatesEach is the default (Duplicates ""),
// bit for bit, and the per-occurrence reference.
func TestEachRuleUnchanged(t *testing.T) {
	for _, c := range dupChunks() {
		t.Run(c.name, func(t *testing.T) {
			start := newDupState(c.model)
			def := trainDup(t, c, "", start)
			each := trainDup(t, c, realrun.DuplicatesEach, start)
			assert.Equal(t, def, each)
			want, _ := reference(t, c, realrun.DuplicatesEach, start)
			assertSameState(t, want, each, 1e-6)
		})
	}
}

// TestSumRuleDiffersFromEach: on a chunk that repeats rows the two rules
// are different updates: of the embeddings, and of the relations where
// the model has them.
func TestSumRuleDiffersFromEach(t *testing.T) {
	for _, c := range dupChunks() {
		t.Run(c.name, func(t *testing.T) {
			start := newDupState(c.model)
			each := trainDup(t, c, realrun.DuplicatesEach, start)
			sum := trainDup(t, c, realrun.DuplicatesSum, start)
			assert.Greater(t, maxAbsDiff(each.parts[c.si], sum.parts[c.si]), 1e-3)
			if c.model.UsesRelations() {
				assert.Greater(t, maxAbsDiff(each.relEmb, sum.relEmb), 1e-3)
			}
		})
	}
}

// TestRowSet: keys are numbered in order of first occurrence up to the
// set's capacity, a reset forgets them, and so does a reset across the
// generation counter's wrap (where never-written entries would otherwise
// look current).
func TestRowSet(t *testing.T) {
	s := newRowSet(100)
	keys := []uint64{dstTable | 5, 5, relTable | 5, 7 << 20, 5, dstTable | 5}
	want := []struct {
		num  int32
		seen bool
	}{{0, false}, {1, false}, {2, false}, {3, false}, {1, true}, {0, true}}
	for round := range 2 {
		next := int32(0)
		for i, k := range keys {
			j, seen := s.number(k, next)
			assert.Equal(t, want[i].num, j, "round %d key %d", round, i)
			assert.Equal(t, want[i].seen, seen, "round %d key %d", round, i)
			if !seen {
				next++
			}
		}
		for k := uint64(0); next < 100; k++ { // fill to capacity
			j, seen := s.number(3<<32|k, next)
			require.False(t, seen)
			require.Equal(t, next, j)
			next++
		}
		for k := uint64(0); k < 96; k++ {
			j, seen := s.number(3<<32|k, -1)
			require.True(t, seen)
			require.Equal(t, int32(4+k), j)
		}
		s.reset()
	}
	w := newRowSet(4)
	w.number(9, 0)
	w.gen = math.MaxUint32
	w.reset()
	for i, k := range []uint64{0, 9} {
		j, seen := w.number(k, int32(i))
		assert.False(t, seen, "key %d after the wrap", k)
		assert.Equal(t, int32(i), j)
	}
}

// TestDuplicatesInTheEngine: a whole epoch with one worker under the sum
// rule is deterministic and differs from the each rule; with the batch
// step (micro-batching) the rule changes nothing.
func TestDuplicatesInTheEngine(t *testing.T) {
	run := func(rule realrun.Duplicates, mb realrun.MicroBatching) ([]float32, []float32) {
		st := fixture.Prepare(t, "fb15k", 0.05, 2, 16, workload.ComplEx)
		plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
		require.NoError(t, err)
		deg, err := st.Degrees()
		require.NoError(t, err)
		h := fixture.Hyper(workload.ComplEx, 16)
		h.Workers, h.Micro, h.Duplicates = 1, mb, rule
		eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2})
		require.NoError(t, err)
		_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Seed: 1, Epoch: 1})
		require.NoError(t, err)
		return fixture.Flat(t, st), eng.(*Engine).Relations()
	}
	sum, sumRel := run(realrun.DuplicatesSum, realrun.MicroBatching{})
	again, againRel := run(realrun.DuplicatesSum, realrun.MicroBatching{})
	assert.Equal(t, sum, again)
	assert.Equal(t, sumRel, againRel)
	each, eachRel := run(realrun.DuplicatesEach, realrun.MicroBatching{})
	assert.Greater(t, maxRelDiff(each, sum), 1e-4)
	assert.Greater(t, maxAbsDiff(eachRel, sumRel), 1e-4)
	batchSum, _ := run(realrun.DuplicatesSum, realrun.MicroBatching{Count: 1})
	batchEach, _ := run(realrun.DuplicatesEach, realrun.MicroBatching{Count: 1})
	assert.Equal(t, batchEach, batchSum)
}

// TestEngineRefusesUnknownRule: the engine is not made with a rule it
// does not know.
func TestEngineRefusesUnknownRule(t *testing.T) {
	st, deg := dupStore()
	h := dupHyper(workload.Dot, "max")
	_, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: deg, Seed: 1, C: 2})
	assert.ErrorContains(t, err, `unknown duplicate-row rule "max"`)
}
