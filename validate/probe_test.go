package validate

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
)

// TestProbe: the probes run the first buckets of each Plan for real,
// leave the work directory's checkpoint as it was, and give the profile
// the disk and engine as they ran: a placeholder disk of 1 B/s comes back
// at the rates the probes moved, its spread holding every probe's rate,
// and every compute rate at the probes' median.
func TestProbe(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.CPU.Checksum = 10e9 // a load's time less its checksum is its transfer
	plans, _, err := orderings.Select([]string{"beta", "hilbert"}, 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	sums, err := st.PartitionSums(st.CurrentDir())
	require.NoError(t, err)
	entries := func() []string {
		es, err := os.ReadDir(st.Dir)
		require.NoError(t, err)
		var names []string
		for _, e := range es {
			names = append(names, e.Name())
		}
		return names
	}
	before, current := entries(), st.Current

	got, res, err := Probe(st, plans, h, prof, ProbeOptions{Fraction: 0.25, Seed: 1, Prefetch: true})
	require.NoError(t, err)

	assert.Equal(t, current, st.Current, "the checkpoint is not moved")
	assert.Equal(t, before, entries(), "nothing of the probes is left")
	after, err := st.PartitionSums(st.CurrentDir())
	require.NoError(t, err)
	assert.Equal(t, sums, after, "the partitions are as they were")

	require.Len(t, res.Runs, 2)
	for _, r := range res.Runs {
		assert.Equal(t, 4, r.Buckets, "a quarter of 16 buckets")
		assert.Equal(t, 16, r.Of)
		assert.Greater(t, r.ReadRatio, 1e3, "%s: a real disk beats 1 B/s", r.Ordering)
		assert.Greater(t, r.WriteRatio, 1e3, "%s: a real disk beats 1 B/s", r.Ordering)
		assert.Positive(t, r.EngineRatio)
		assert.Positive(t, r.AllEngineRatio, "the ratio over all its buckets is kept beside")
		assert.Greater(t, r.PredictedSeconds, 1e3, "predicted on the placeholder")
	}
	assert.InDelta(t, res.ReadRatio, float64(got.Disk.Read)/float64(prof.Disk.Read), 1e-6*res.ReadRatio)
	assert.InDelta(t, res.WriteRatio, float64(got.Disk.Write)/float64(prof.Disk.Write), 1e-6*res.WriteRatio)
	rd, ok := got.Spread.Of("disk.read")
	require.True(t, ok)
	for _, r := range res.Runs {
		assert.True(t, rd.Low <= r.ReadRatio*1.000001 && r.ReadRatio <= rd.High*1.000001, "%s's read rate %g in %v", r.Ordering, r.ReadRatio, rd)
	}
	tc, ok := got.CPU.Train.For("dot")
	require.True(t, ok)
	engine := []float64{res.Runs[0].EngineRatio, res.Runs[1].EngineRatio}
	assert.InDelta(t, (engine[0]+engine[1])/2, res.EngineRatio, 1e-9, "the probes' median")
	assert.InDelta(t, 1e6*res.EngineRatio, float64(tc.Edges), 1, "a preset's cost: every compute rate at the probes' median")
	er, ok := got.Spread.Of("cpu.train.dot.edges")
	require.True(t, ok, "the engine's spread holds every probe")
	assert.InDelta(t, 1e6*min(engine[0], engine[1]), er.Low, 1e-3)
	assert.InDelta(t, 1e6*max(engine[0], engine[1]), er.High, 1e-3)

	// An edge rate alone with a rate for each ordering (a calibration's):
	// each ordering's own rate is kept apart and scaled by the probes'
	// median too, not by its own probe.
	folded := prof
	folded.CPU.Train.Dot.RowBW, folded.CPU.Train.Dot.FLOPS = 0, 0
	folded.CPU.Train.Dot.Orderings = map[string]devices.EdgeRate{"beta": 2e6}
	got, res, err = Probe(st, plans, h, folded, ProbeOptions{Fraction: 0.25, Seed: 1, Prefetch: true})
	require.NoError(t, err)
	tc, ok = got.CPU.Train.For("dot")
	require.True(t, ok)
	assert.InDelta(t, 1e6*res.EngineRatio, float64(tc.Edges), 1, "the model's rate at the probes' median")
	assert.InDelta(t, 2e6*res.EngineRatio, float64(tc.Orderings["beta"]), 2, "beta's own rate, at the probes' median")
	assert.NotContains(t, tc.Orderings, "hilbert", "an ordering without a rate of its own gets none from its probe")
	assert.Equal(t, devices.EdgeRate(2e6), folded.CPU.Train.Dot.Orderings["beta"], "the profile given is not changed")
	pred, err := Predict(st, plans[0], h, true, got)
	require.NoError(t, err)
	assert.Less(t, pred.EpochSeconds, 100.0, "the probed disk predicts an epoch of seconds, not ages")

	_, _, err = Probe(st, plans, h, prof, ProbeOptions{Fraction: 1.5})
	assert.ErrorContains(t, err, "want (0, 1]")
}

// A probe prunes none of the work directory's committed checkpoints,
// however many it keeps beyond the default.
func TestProbeKeepsCheckpoints(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.CPU.Checksum = 10e9
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	st.Keep = 5
	for e := 1; e <= 4; e++ {
		eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: deg, Seed: 1, C: plan.C})
		require.NoError(t, err)
		_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Seed: 1, Epoch: e})
		require.NoError(t, err)
	}
	before, err := st.Checkpoints()
	require.NoError(t, err)
	require.Greater(t, len(before), store.DefaultKeep)
	st.Keep = 0 // as a calibration opens it: the default
	_, _, err = Probe(st, []*orderings.Plan{plan}, h, prof, ProbeOptions{Fraction: 0.5, Seed: 1})
	require.NoError(t, err)
	after, err := st.Checkpoints()
	require.NoError(t, err)
	assert.Equal(t, before, after)
	assert.Zero(t, st.Keep, "the store's own setting is restored")
}

// TestQuietEngineRatio: a probe's engine ratio is read from its quiet
// buckets alone — a bucket slowed by a transfer beside it does not move
// it — with the ordering's own rate as the prediction; too few quiet
// buckets give none (the probe then uses all of them).
func TestQuietEngineRatio(t *testing.T) {
	_, h, prof := placeholder(t)
	tc := prof.CPU.Train.Dot
	tc.Orderings = map[string]devices.EdgeRate{"beta": devices.EdgeRate(0.5 * float64(tc.Edges))}
	prof.CPU.Train.Dot = tc
	pp, scaled := prof.ForOrdering("beta", string(h.Model))
	require.True(t, scaled)
	pp.CPU.Workers = h.Workers
	at := func(edges int) float64 { return devices.CPUBucketTime(pp, h.Training, int64(edges)) }

	var ep realrun.Epoch
	ep.IO = []realrun.IOEvent{{Kind: "load", Start: 10, End: 11}}
	add := func(edges int, start, compute float64) {
		ep.Buckets = append(ep.Buckets, realrun.BucketRun{Edges: edges, Start: start, Compute: compute, End: start + compute})
		ep.ComputeSeconds += compute
	}
	// Two quiet buckets trained 2× faster than beta's rate says; one
	// beside the load 5× slower.
	add(4000, 0, at(4000)/2)
	add(6000, 1, at(6000)/2)
	add(5000, 10.5, 5*at(5000))

	r, n, share := quietEngineRatio(ep, "beta", h, prof)
	assert.InDelta(t, 2, r, 1e-9, "the quiet buckets' ratio against beta's own rate")
	assert.Equal(t, 2, n)
	assert.InDelta(t, (at(4000)+at(6000))/2/ep.ComputeSeconds, share, 1e-9)

	ep.Buckets = ep.Buckets[1:] // one quiet bucket is too few
	ep.ComputeSeconds = ep.Buckets[0].Compute + ep.Buckets[1].Compute
	r, n, _ = quietEngineRatio(ep, "beta", h, prof)
	assert.Zero(t, r)
	assert.Equal(t, 1, n)
}
