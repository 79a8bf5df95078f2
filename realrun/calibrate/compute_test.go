package calibrate

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

func smallHyper() realrun.Hyper {
	return realrun.Hyper{Training: workload.Training{Model: workload.Dot, Dim: 16, Batch: 500, Negatives: 10}, Workers: 2, LR: 0.1}
}

// TestMeasureComputeOnTheGraph: a work directory's own buckets and
// partitions are what the engine trains; without one, synthetic buckets.
func TestMeasureComputeOnTheGraph(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "livejournal", Scale: 0.002, Seed: 3, P: 4, Dim: 16, Model: "dot", Workdir: filepath.Join(t.TempDir(), "wd")})
	require.NoError(t, err)
	h := smallHyper()
	tests := []struct {
		name string
		st   *store.Store
		on   string
	}{
		{"graph", st, "the graph's own buckets"},
		{"synthetic", &store.Store{M: store.Manifest{P: 4, Rows: st.M.Rows}}, "synthetic buckets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := MeasureCompute(tt.st, h, 3)
			require.NoError(t, err)
			assert.Contains(t, r.On, tt.on)
			assert.Equal(t, 3, r.Rounds)
			assert.Positive(t, r.Low)
			assert.LessOrEqual(t, r.Low, r.Edges)
			assert.LessOrEqual(t, r.Edges, r.High)
			assert.GreaterOrEqual(t, r.TrainedEdges, 3*perRoundEdges(h))
			assert.Positive(t, r.Seconds)
		})
	}
}

// TestGraphBenchPair: the bench trains an off-diagonal pair of the
// graph's buckets, in both directions, on the partitions they join; with
// p = 1 the one bucket.
func TestGraphBenchPair(t *testing.T) {
	for _, p := range []int{1, 3} {
		st, err := workdir.Prepare(workdir.DataSpec{Dataset: "livejournal", Scale: 0.001, Seed: 1, P: p, Dim: 8, Model: "dot", Workdir: filepath.Join(t.TempDir(), "wd")})
		require.NoError(t, err)
		b, err := graphBench(st, smallHyper(), 7)
		require.NoError(t, err)
		if p == 1 {
			assert.Equal(t, 0, b.si)
			assert.Equal(t, 0, b.di)
			assert.Len(t, b.buckets, 1)
		} else {
			assert.NotEqual(t, b.si, b.di)
			require.Len(t, b.buckets, 2)
			s, d := b.buffers(b.buckets[1])
			assert.Same(t, b.dst, s, "bucket (j,i) reads its sources from partition j")
			assert.Same(t, b.src, d)
			for _, k := range b.buckets {
				want, err := st.ReadBucket(k.si, k.di)
				require.NoError(t, err)
				assert.Equal(t, want, k.edges)
			}
		}
		b.close()
	}
}

// TestUnitBucketTime: the model's time at 1 edge/s is linear in the
// bucket for whole rounds of batches and charges a short last round in
// full.
func TestUnitBucketTime(t *testing.T) {
	h := smallHyper()
	round := int64(h.Batch * h.Workers)
	assert.InDelta(t, float64(10*round), unitBucketTime(h, 10*round), 1e-6)
	assert.Greater(t, unitBucketTime(h, 10*round+1), float64(10*round+1), "a lone last batch costs a worker's whole turn")
}

func TestBenchPair(t *testing.T) {
	rng := func() *rand.Rand { return rand.New(rand.NewPCG(1, 2)) }
	i, j := benchPair([][]int64{{5}}, rng())
	assert.Equal(t, [2]int{0, 0}, [2]int{i, j}, "p = 1: the one bucket")
	sparse := [][]int64{{9, 0, 0}, {0, 9, 0}, {0, 4, 9}} // only (2,1) off the diagonal
	for seed := uint64(0); seed < 20; seed++ {
		i, j := benchPair(sparse, rand.New(rand.NewPCG(seed, 0)))
		assert.ElementsMatch(t, []int{1, 2}, []int{i, j}, "the only pair with edges, seed %d", seed)
	}
	full := [][]int64{{1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}}
	seen := map[[2]int]bool{}
	for seed := uint64(0); seed < 200; seed++ {
		i, j := benchPair(full, rand.New(rand.NewPCG(seed, 0)))
		require.NotEqual(t, i, j)
		seen[[2]int{i, j}] = true
	}
	assert.Len(t, seen, 12, "every ordered pair can be drawn")
}

// TestMeasureOrderings: the engine trains each Plan's own buckets in its
// order, loading partitions as the Plan does, and the calibration records
// each ordering's rate in the profile; a store without its buckets gives
// none.
func TestMeasureOrderings(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "livejournal", Scale: 0.002, Seed: 3, P: 4, Dim: 16, Model: "dot", Workdir: filepath.Join(t.TempDir(), "wd")})
	require.NoError(t, err)
	h := smallHyper()
	var plans []*orderings.Plan
	for _, name := range []string{"beta", "hilbert"} {
		pl, err := orderings.Build(name, 4, 2, orderings.Belady, 0)
		require.NoError(t, err)
		plans = append(plans, pl)
	}
	rates, bench, err := MeasureOrderings(st, h, plans)
	require.NoError(t, err)
	require.Len(t, rates, 2)
	assert.Equal(t, OrderingRounds, bench.Rounds, "the bench timed once in each turn")
	assert.Len(t, bench.Rates, OrderingRounds)
	assert.InDelta(t, rates["beta"].Reference, bench.Edges, 1e-6, "the orderings' reference is the bench's rounds in their turns")
	assert.Contains(t, bench.On, "the graph's own buckets")
	for _, name := range []string{"beta", "hilbert"} {
		r := rates[name]
		assert.Contains(t, r.On, name+"'s bucket sequence (p=4, c=2)")
		assert.Contains(t, r.On, "in 6 rounds spread over its 16 buckets")
		assert.Equal(t, OrderingRounds, r.Rounds)
		// Every round starts at its own stretch of the Plan, not at its
		// first buckets (none of this graph's buckets is empty).
		require.Len(t, r.At, OrderingRounds)
		for i, at := range r.At {
			assert.Equal(t, roundAt(i, OrderingRounds, 16), at, "round %d", i)
		}
		assert.Positive(t, r.Low)
		assert.LessOrEqual(t, r.Low, r.Edges)
		assert.LessOrEqual(t, r.Edges, r.High)
		assert.GreaterOrEqual(t, r.TrainedEdges, int64(OrderingRounds)*perRoundEdges(h))
		assert.Positive(t, r.Reference, "the bench took its rounds in turn with the orderings")
		own := r.Relative
		if r.Own > 0 { // pooled with the others (poolOrderings)
			own = r.Own
		}
		assert.InDelta(t, r.Edges/r.Reference, own, 1e-9)
		assert.Positive(t, r.RelativeSE)
	}

	none, nb, err := MeasureOrderings(&store.Store{M: store.Manifest{P: 4, Rows: st.M.Rows}}, h, plans)
	require.NoError(t, err)
	assert.Empty(t, none)
	assert.Empty(t, nb.Rates)

	_, _, err = MeasureOrderings(st, h, []*orderings.Plan{mustPlan(t, "beta", 3, 2)})
	assert.ErrorContains(t, err, "its Plan has p = 3, the work directory 4")

	prof, err := devices.Parse([]byte("name: t\ndisk: {read: 400 MB/s, write: 400 MB/s}\ncpu: {workers: 2, memory: 8 GiB, batch_edges: 1M edges/s, gather_bandwidth: 1 GB/s, train: {dot: {edges: 1M edges/s}}}\n"), "t.yaml")
	require.NoError(t, err)
	cal := Calibration{Profile: prof}
	require.NoError(t, cal.AddOrderings(st, h, plans, 1, t.TempDir()))
	require.Len(t, cal.Orderings, 2)
	tc, _ := cal.Profile.CPU.Train.For("dot")
	assert.Len(t, tc.Orderings, 2)
	for _, name := range []string{"beta", "hilbert"} {
		// The profile's rate for the ordering is its ratio to the bench in
		// the same minutes times the profile's own rate (1M edges/s), not
		// the rate the machine gave it in those minutes.
		assert.InDelta(t, cal.Orderings[name].Relative*1e6, float64(tc.Orderings[name]), 1e-3, name)
		assert.Equal(t, cal.Orderings[name].Relative, cal.OrderingRatio(name))
	}
	assert.Zero(t, cal.OrderingRatio("legend"), "not measured")

	// With the bench's own ten rounds in the calibration, its rounds in
	// the orderings' turns join them: the profile's rate (and its spread,
	// and the orderings' rates) is the median of all sixteen.
	ten := ComputeRate{Rates: []float64{1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6, 1e6}, Edges: 1e6, Low: 1e6, High: 1e6, Rounds: 10}
	withBench := Calibration{Profile: prof, Compute: &ten}
	require.NoError(t, withBench.AddOrderings(st, h, plans, 1, t.TempDir()))
	assert.Equal(t, 10+OrderingRounds, withBench.Compute.Rounds)
	assert.Equal(t, OrderingRounds, withBench.Compute.InTurns)
	folded := slices.Sorted(slices.Values(withBench.Compute.Rates))
	assert.Equal(t, folded[len(folded)/2], withBench.Compute.Edges)
	tc, _ = withBench.Profile.CPU.Train.For("dot")
	assert.InDelta(t, withBench.Compute.Edges, float64(tc.Edges), 1e-6)
	assert.InDelta(t, withBench.Compute.Edges, float64(withBench.Profile.CPU.BatchEdges), 1e-6, "batch_edges came from the same rate")
	for _, name := range []string{"beta", "hilbert"} {
		assert.InDelta(t, withBench.OrderingRatio(name)*withBench.Compute.Edges, float64(tc.Orderings[name]), 1e-3, name)
	}
	r, ok := withBench.Profile.Spread.Of("cpu.train.dot.edges")
	require.True(t, ok)
	assert.InDelta(t, withBench.Compute.Low, r.Low, 1e-6)
	assert.InDelta(t, withBench.Compute.High, r.High, 1e-6)

	old := Calibration{Compute: &ComputeRate{Edges: 800e3}, Orderings: map[string]ComputeRate{"beta": {Edges: 600e3}}}
	assert.InDelta(t, 0.75, old.OrderingRatio("beta"), 1e-12, "a calibration without the bench beside the orderings: over the bench's median")
}

// roundAt puts each of the rounds in the middle of its own equal stretch
// of the Plan.
func TestRoundAt(t *testing.T) {
	assert.Equal(t, []int{21, 64, 106, 149, 192, 234}, func() (at []int) {
		for r := range 6 {
			at = append(at, roundAt(r, 6, 256))
		}
		return at
	}())
	assert.Equal(t, 0, roundAt(0, 1, 1))
	assert.Equal(t, []int{0, 1, 2}, []int{roundAt(0, 3, 3), roundAt(1, 3, 3), roundAt(2, 3, 3)})
}

// A walk put at bucket k holds what a walk that trained its way there
// holds, reads it into the slots when it claims them, and trains on from
// bucket k.
func TestPlanWalkSeek(t *testing.T) {
	st, h, slots := slotsOnSmallGraph(t)
	for _, name := range []string{"beta", "hilbert"} {
		walked, err := planBench(st, h, mustPlan(t, name, 4, 2), 1, slots)
		require.NoError(t, err)
		put, err := planBench(st, h, mustPlan(t, name, 4, 2), 1, slots)
		require.NoError(t, err)
		require.NoError(t, walked.pb.claim())
		for k := range 16 {
			_, _, _, err := walked.trainPlan(1) // trains bucket k
			require.NoError(t, err)
			require.Equal(t, k+1, walked.pb.k, "%s: no bucket is empty", name)
			put.pb.seek(k)
			assert.Equal(t, walked.pb.held, put.pb.held, "%s at bucket %d", name, k)
			assert.Equal(t, walked.pb.li, put.pb.li, "%s at bucket %d", name, k)
		}
		put.pb.seek(9)
		require.NoError(t, put.pb.claim())
		assert.Positive(t, slotsHold(t, st, put.pb), name)
		_, _, _, err = put.trainPlan(1)
		require.NoError(t, err)
		assert.Equal(t, 10, put.pb.k, "%s trains on from bucket 9", name)
		walked.close()
		put.close()
	}
}

// slotsOnSmallGraph is a small graph's work directory, a training shape
// and two slot buffers for its plan benches, freed when the test ends.
func slotsOnSmallGraph(t *testing.T) (*store.Store, realrun.Hyper, *slotSet) {
	t.Helper()
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "livejournal", Scale: 0.002, Seed: 3, P: 4, Dim: 16, Model: "dot", Workdir: filepath.Join(t.TempDir(), "wd")})
	require.NoError(t, err)
	slots, err := newSlots(st, 2)
	require.NoError(t, err)
	t.Cleanup(slots.free)
	return st, smallHyper(), slots
}

// slotsHold checks that every slot w holds a partition in holds it byte
// for byte as the work directory has it, and returns how many do.
func slotsHold(t *testing.T, st *store.Store, w *planWalk) int {
	t.Helper()
	want, err := st.NewBuffer()
	require.NoError(t, err)
	defer want.Free()
	held := 0
	for slot, part := range w.held {
		if part < 0 {
			continue
		}
		held++
		_, err := st.ReadPartition(part, want)
		require.NoError(t, err)
		assert.Equal(t, want.Bytes(), w.slots.bufs[slot].Bytes(), "%s: slot %d holds partition %d", w.plan.Ordering, slot, part)
		assert.Same(t, w.slots.bufs[slot], w.buffer(part))
	}
	return held
}

func mustPlan(t *testing.T, name string, p, c int) *orderings.Plan {
	t.Helper()
	pl, err := orderings.Build(name, p, c, orderings.Belady, 0)
	require.NoError(t, err)
	return pl
}

// Plan benches that share slot buffers take them in turn: a bench
// resuming after another holds its own partitions again, byte for byte,
// and goes on where its Plan was.
func TestPlanBenchesShareSlots(t *testing.T) {
	st, h, slots := slotsOnSmallGraph(t)
	a, err := planBench(st, h, mustPlan(t, "beta", 4, 2), 1, slots)
	require.NoError(t, err)
	defer a.close()
	b, err := planBench(st, h, mustPlan(t, "hilbert", 4, 2), 1, slots)
	require.NoError(t, err)
	defer b.close()

	_, _, _, err = a.round()
	require.NoError(t, err)
	k := a.pb.k
	_, _, _, err = b.round()
	require.NoError(t, err)
	assert.Same(t, b.pb, slots.owner)
	require.NoError(t, a.pb.claim())
	assert.Same(t, a.pb, slots.owner)
	assert.Equal(t, k, a.pb.k, "the walk goes on where it was")
	assert.Positive(t, slotsHold(t, st, a.pb))
	_, _, _, err = a.round()
	require.NoError(t, err)
	assert.NotEqual(t, k, a.pb.k, "and trains on")
}

// TestStretches: rounds shorter than StretchSeconds are grouped into
// consecutive runs of at least that long, each at the harmonic mean of
// its rounds' rates (the edges over the time); long rounds, or too few
// to make two runs, are their own samples.
func TestStretches(t *testing.T) {
	tests := []struct {
		name    string
		rates   []float64
		seconds float64
		want    []float64
	}{
		{"long rounds", []float64{1, 2, 3}, 3 * StretchSeconds, []float64{1, 2, 3}},
		{"too few for two", []float64{1, 2, 3}, StretchSeconds, []float64{1, 2, 3}},
		{"no time recorded", []float64{1, 2}, 0, []float64{1, 2}},
		{"pairs", []float64{1, 1, 2, 2, 4, 4}, 3 * StretchSeconds, []float64{1, 2, 4}},
		{"harmonic", []float64{1, 3, 2, 2}, 2 * StretchSeconds, []float64{1.5, 2}},
		{"the last takes the rest", []float64{1, 1, 2, 2, 4}, 2.5 * StretchSeconds, []float64{1, 3.0 / (1/2.0 + 1/2.0 + 1/4.0)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ComputeRate{Rates: tt.rates, Seconds: tt.seconds}.Stretches()
			assert.InDeltaSlice(t, tt.want, got, 1e-12)
		})
	}
	r := ComputeRate{Rates: []float64{1, 1, 2, 2, 4, 4}, Seconds: 3 * StretchSeconds}
	r.median()
	assert.Equal(t, 2.0, r.Edges, "the median round")
	assert.Equal(t, []float64{1, 4}, []float64{r.Low, r.High}, "the extent of the stretches")
}

// TestSpanFor: the engine is timed for as long as the runs train at its
// rate, up to ComputeSpan; without the graph's edges, not at all.
func TestSpanFor(t *testing.T) {
	st := &store.Store{M: store.Manifest{Train: 3e6}}
	assert.InDelta(t, 3.0, spanFor(st, 1e6, 1), 1e-12)
	assert.InDelta(t, 12.0, spanFor(st, 1e6, 4), 1e-12)
	assert.InDelta(t, 3.0, spanFor(st, 1e6, 0), 1e-12, "at least one epoch")
	assert.Equal(t, ComputeSpan.Seconds(), spanFor(st, 1e3, 1), "capped")
	assert.Zero(t, spanFor(&store.Store{}, 1e6, 1))
	assert.Zero(t, spanFor(st, 0, 1))
}

// TestSettleCompute: the bench's rounds in the orderings' turns join the
// calibration's, and the bench trains on until they took as long as the
// runs the calibration predicts; the profile's rate is the median of
// every round and its spread the extent of their stretches.
func TestSettleCompute(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "livejournal", Scale: 0.002, Seed: 3, P: 4, Dim: 16, Model: "dot", Workdir: filepath.Join(t.TempDir(), "wd")})
	require.NoError(t, err)
	h := smallHyper()
	h.Negatives, h.Batch = 1, 100 // short rounds, so that a tail of a second has several
	prof, err := devices.Parse([]byte("name: t\ndisk: {read: 400 MB/s, write: 400 MB/s}\ncpu: {workers: 2, memory: 8 GiB, batch_edges: 1M edges/s, gather_bandwidth: 1 GB/s, train: {dot: {edges: 1M edges/s}}}\n"), "t.yaml")
	require.NoError(t, err)
	cal := Calibration{Profile: prof, Compute: &ComputeRate{Rates: []float64{1e6, 1e6}, Seconds: 1e-3, Edges: 1e6, Rounds: 2}}
	turns := ComputeRate{Rates: []float64{1e6}, Seconds: 1e-3}
	epochs := int(math.Ceil(1e6 / float64(st.M.Train))) // about a second at 1M edges/s
	span := spanFor(st, 1e6, epochs)
	require.Greater(t, span, 0.9)
	tc, _ := cal.Profile.CPU.Train.For("dot")
	require.NoError(t, cal.settleCompute(st, h, turns, epochs, &tc))
	c := cal.Compute
	assert.Equal(t, 1, c.InTurns)
	assert.Equal(t, span, c.Span)
	assert.GreaterOrEqual(t, c.Seconds, span)
	assert.Positive(t, c.Tail)
	assert.Len(t, c.Rates, 3+c.Tail)
	assert.Equal(t, len(c.Rates), c.Rounds)
	got, _ := cal.Profile.CPU.Train.For("dot")
	assert.InDelta(t, c.Edges, float64(got.Edges), 1e-6)
	assert.InDelta(t, c.Edges, float64(tc.Edges), 1e-6)
	assert.InDelta(t, c.Edges, float64(cal.Profile.CPU.BatchEdges), 1e-6)
	r, ok := cal.Profile.Spread.Of("cpu.train.dot.edges")
	require.True(t, ok)
	assert.InDelta(t, min(c.Low, c.Edges), r.Low, 1e-6)
	assert.InDelta(t, max(c.High, c.Edges), r.High, 1e-6)

	// A calibration that already timed the engine for that long trains
	// no more.
	long := Calibration{Profile: prof, Compute: &ComputeRate{Rates: []float64{1e6, 1e6}, Seconds: 2 * span, Edges: 1e6, Rounds: 2}}
	tc, _ = long.Profile.CPU.Train.For("dot")
	require.NoError(t, long.settleCompute(st, h, turns, epochs, &tc))
	assert.Zero(t, long.Compute.Tail)
	assert.Len(t, long.Compute.Rates, 3)
}

// TestPairedSE: the standard error of the mean log ratio of paired
// rounds; unknown (0) with fewer than two pairs.
func TestPairedSE(t *testing.T) {
	// Log ratios 0 and ln 2 against a bench at 1: mean ln2/2, sd ln2/√2.
	assert.InDelta(t, math.Ln2/math.Sqrt2/math.Sqrt2, pairedSE([]float64{1, 2}, []float64{1, 1}), 1e-12)
	assert.InDelta(t, 0, pairedSE([]float64{2, 4, 6}, []float64{1, 2, 3}), 1e-12, "the same ratio in every turn, whatever the machine's speed")
	assert.Zero(t, pairedSE([]float64{1}, []float64{1}))
}

// TestPoolOrderings: orderings whose own ratios their rounds cannot tell
// apart from the orderings' median share their pooled ratio; one told
// apart, or whose error is not known, keeps its own.
func TestPoolOrderings(t *testing.T) {
	rate := func(rel, se, secs float64) ComputeRate {
		return ComputeRate{Edges: rel * 1e6, Seconds: secs, Reference: 1e6, Relative: rel, RelativeSE: se}
	}
	tests := []struct {
		name   string
		in     map[string]ComputeRate
		want   map[string]float64 // Relative after
		pooled []string
	}{
		{"alike", map[string]ComputeRate{"a": rate(0.9, 0.05, 1), "b": rate(1.0, 0.05, 3)},
			map[string]float64{"a": (0.9*1 + 1.0*3) / 4, "b": (0.9*1 + 1.0*3) / 4}, []string{"a", "b"}},
		{"one told apart", map[string]ComputeRate{"a": rate(0.88, 0.03, 1), "b": rate(0.90, 0.03, 1), "c": rate(0.89, 0.03, 1), "h": rate(0.70, 0.03, 1)},
			map[string]float64{"a": 0.89, "b": 0.89, "c": 0.89, "h": 0.70}, []string{"a", "b", "c"}},
		{"precise enough to differ", map[string]ComputeRate{"a": rate(0.9, 0.01, 1), "b": rate(1.0, 0.01, 1)},
			map[string]float64{"a": 0.9, "b": 1.0}, nil},
		{"error not known", map[string]ComputeRate{"a": rate(0.9, 0, 1), "b": rate(1.0, 0, 1)},
			map[string]float64{"a": 0.9, "b": 1.0}, nil},
		{"one ordering", map[string]ComputeRate{"a": rate(0.9, 0.05, 1)}, map[string]float64{"a": 0.9}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			poolOrderings(tt.in)
			for name, want := range tt.want {
				r := tt.in[name]
				assert.InDelta(t, want, r.Relative, 1e-12, name)
				if slices.Contains(tt.pooled, name) {
					assert.Positive(t, r.Own, "%s keeps its own ratio beside", name)
					assert.InDelta(t, r.Edges/r.Reference, r.Own, 1e-12, name)
				} else {
					assert.Zero(t, r.Own, name)
				}
			}
		})
	}
}
