package realrun_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/executor"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

func epoch(t *testing.T, st *store.Store, ordering string, c int, prefetch bool) realrun.Epoch {
	t.Helper()
	plan, err := orderings.Build(ordering, st.M.P, c, orderings.Belady, 0)
	require.NoError(t, err)
	deg, err := st.Degrees()
	require.NoError(t, err)
	eng := cpu.New(fixture.Hyper(workload.Model(st.M.Model), st.M.Dim), st, deg, 1)
	ep, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: prefetch, Seed: 1, Epoch: 1})
	require.NoError(t, err)
	return ep
}

// TestBytesEqualThePlan: for every ordering the measured partition bytes
// are exactly loads × partition bytes read and (writes + final writes) ×
// partition bytes written; with c = p nothing is swapped.
func TestBytesEqualThePlan(t *testing.T) {
	st := fixture.Prepare(t, "twitter", 0.0001, 8, 16, workload.Dot)
	for _, tc := range []struct {
		ordering string
		c        int
	}{{"beta", 3}, {"hilbert", 3}, {"hilbert-symmetric", 3}, {"legend", 3}, {"inside-out", 2}, {"outside-in", 4}, {"row-major", 2}, {"random", 3}, {"beta", 8}} {
		t.Run(fmt.Sprintf("%s/c=%d", tc.ordering, tc.c), func(t *testing.T) {
			ep := epoch(t, st, tc.ordering, tc.c, true)
			pb := st.M.PartitionBytes
			assert.Equal(t, int64(ep.Loads)*pb, ep.ReadBytes)
			assert.Equal(t, int64(ep.Writes+ep.FinalWrites)*pb, ep.WriteBytes)
			var loads, writes int
			for _, e := range ep.IO {
				if e.Kind == "load" {
					loads++
				} else {
					writes++
				}
			}
			assert.Equal(t, ep.Loads, loads)
			assert.Equal(t, ep.Writes+ep.FinalWrites, writes)
			if tc.c == 8 {
				assert.Zero(t, ep.Swaps)
				assert.Equal(t, 8, ep.Loads)
			}
			assert.GreaterOrEqual(t, ep.EpochSeconds, ep.ComputeSeconds)
			assert.Positive(t, ep.BufferSeconds, "the buffers' allocation is timed apart from the epoch")
		})
	}
}

// TestNoPrefetchRaisesStall: without prefetch a load is issued only once
// every bucket before the one that needs it is done, so every swap's read
// happens while the trainer waits and the stall is at least about the
// reads' duration; with prefetch a load may start earlier.
func TestNoPrefetchRaisesStall(t *testing.T) {
	st := fixture.Prepare(t, "twitter", 0.001, 8, 128, workload.Dot) // 41,600 nodes: 10.6 MB partitions
	plan, err := orderings.Build("hilbert-symmetric", st.M.P, 4, orderings.Belady, 0)
	require.NoError(t, err)
	// firstUse[j] is the first bucket that needs load j.
	need := plan.Arrivals()
	firstUse := make([]int, len(plan.Loads))
	for j := range firstUse {
		for firstUse[j] = 0; need[firstUse[j]] <= j; firstUse[j]++ {
		}
	}
	early := func(ep realrun.Epoch) (n int) {
		loads := 0
		for _, e := range ep.IO {
			if e.Kind != "load" {
				continue
			}
			if k := firstUse[loads]; k > 0 && e.Start < ep.Buckets[k-1].End {
				n++
			}
			loads++
		}
		require.Equal(t, len(plan.Loads), loads)
		return n
	}
	off := epoch(t, st, "hilbert-symmetric", 4, false)
	assert.Zero(t, early(off), "without prefetch no load starts before the bucket ahead of its first use ends")
	var swapReads float64
	for i, e := range off.IO {
		if e.Kind == "load" && i >= 4 {
			swapReads += e.End - e.Start
		}
	}
	assert.GreaterOrEqual(t, off.StallSeconds, 0.5*swapReads)
	on := epoch(t, st, "hilbert-symmetric", 4, true)
	assert.Positive(t, early(on), "with prefetch some loads start while earlier buckets train")
}

// TestMRRRises trains a small planted-structure graph with each score
// function: MRR rises over three epochs and ends far above random (5× the
// expected MRR of a random ranker among 101 places, 0.0515).
func TestMRRRises(t *testing.T) {
	for _, kind := range []workload.Model{workload.Dot, workload.DistMult, workload.ComplEx} {
		t.Run(string(kind), func(t *testing.T) {
			st := fixture.Prepare(t, "livejournal", 0.001, 4, 16, kind) // 4,800 nodes, 68,000 edges
			plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
			require.NoError(t, err)
			deg, err := st.Degrees()
			require.NoError(t, err)
			h := fixture.Hyper(kind, 16)
			h.LR = 0.01 // small enough that three epochs keep improving this tiny graph
			eng := cpu.New(h, st, deg, 1)
			var mrr []float64
			var q realrun.Quality
			for e := 1; e <= 3; e++ {
				_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e})
				require.NoError(t, err)
				q, err = eval.Evaluate(st, kind, eng.Relations(), deg, eval.Options{FilteredMaxNodes: 0, Uniform: 50, ByDegree: 50, MaxEdges: 2000, Workers: 2, Seed: 1})
				require.NoError(t, err)
				mrr = append(mrr, q.MRR)
			}
			assert.Greater(t, mrr[2], mrr[0], "MRR per epoch %v", mrr)
			t.Logf("%s: MRR per epoch %v, random %.4f", kind, mrr, q.Baseline)
			assert.Greater(t, mrr[1], mrr[0], "MRR per epoch %v", mrr)
			assert.Greater(t, mrr[2], 5*q.Baseline, "MRR %v against random %v", mrr[2], q.Baseline)
		})
	}
}

// TestRelationsAreLearned trains a generated knowledge graph whose four
// relations each shift the destination's community differently: only a
// score function that can express a directed, relation-specific map
// (ComplEx) can rank the true destinations, so its MRR must end far above
// both random and Dot, which ignores relations. A trainer or evaluator that
// lost or mixed up relation ids would fail this, where the one-relation
// graphs of TestMRRRises would not notice.
func TestRelationsAreLearned(t *testing.T) {
	pre := graph.Preset{Name: "kg4", Nodes: 4000, Edges: 120_000, Relations: 4, Model: "complex"}
	edges := filepath.Join(t.TempDir(), "kg4.txt")
	f, err := os.Create(edges)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	require.NoError(t, graph.Generate(pre, 5, func(src, rel, dst int64) error {
		_, err := fmt.Fprintf(w, "%d r%d %d\n", src, rel, dst)
		return err
	}))
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	mrr := map[workload.Model]float64{}
	var random float64
	for _, kind := range []workload.Model{workload.Dot, workload.ComplEx} {
		st, err := workdir.Prepare(workdir.DataSpec{Edges: edges, Seed: 3, P: 2, Dim: 32, Model: string(kind), Workdir: filepath.Join(t.TempDir(), string(kind))})
		require.NoError(t, err)
		require.Equal(t, 4, st.M.Relations)
		plan, err := orderings.Build("beta", 2, 2, orderings.Belady, 0)
		require.NoError(t, err)
		deg, err := st.Degrees()
		require.NoError(t, err)
		eng := cpu.New(fixture.Hyper(kind, 32), st, deg, 1)
		for e := 1; e <= 3; e++ {
			_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e})
			require.NoError(t, err)
		}
		q, err := eval.Evaluate(st, kind, eng.Relations(), deg, eval.Options{FilteredMaxNodes: 10_000, MaxEdges: 2000, Workers: 2, Seed: 1})
		require.NoError(t, err)
		mrr[kind], random = q.MRR, q.Baseline
	}
	t.Logf("MRR after 3 epochs: dot %.4f, complex %.4f, random %.4f", mrr[workload.Dot], mrr[workload.ComplEx], random)
	assert.Greater(t, mrr[workload.ComplEx], 10*random)
	assert.Greater(t, mrr[workload.ComplEx], 2*mrr[workload.Dot])
}

// TestSingleWorkerDeterministic: with one worker, training depends only on
// the seed and the epoch — not on the engine's history — so a run whose
// second epoch starts from a fresh engine (as a resumed run would) leaves
// byte-identical partitions. (Dot: relation embeddings live in memory and
// would need a checkpoint of their own.)
func TestSingleWorkerDeterministic(t *testing.T) {
	var parts [][]byte
	for run := 0; run < 2; run++ {
		st := fixture.Prepare(t, "livejournal", 0.0005, 4, 8, workload.Dot)
		plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 0)
		require.NoError(t, err)
		deg, err := st.Degrees()
		require.NoError(t, err)
		h := fixture.Hyper(workload.Dot, 8)
		h.Workers = 1
		eng := cpu.New(h, st, deg, 1)
		for e := 1; e <= 2; e++ {
			if run == 1 && e == 2 {
				eng = cpu.New(h, st, deg, 1) // as after a restart
			}
			_, err := realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: e})
			require.NoError(t, err)
		}
		var all []byte
		for i := 0; i < 4; i++ {
			data, err := os.ReadFile(st.PartitionPath(i))
			require.NoError(t, err)
			all = append(all, data...)
		}
		parts = append(parts, all)
	}
	assert.Equal(t, parts[0], parts[1])
}

// TestCountsAreMeasured: the engine counts the loads, swaps and writes it
// performs; a Plan whose counts disagree with its own schedule (so the
// engine cannot perform what it claims) fails the epoch instead of being
// reported as measured.
func TestCountsAreMeasured(t *testing.T) {
	st := fixture.Prepare(t, "twitter", 0.0001, 6, 8, workload.Dot)
	deg, err := st.Degrees()
	require.NoError(t, err)
	for _, tamper := range []struct {
		name string
		f    func(*orderings.Counts)
	}{{"loads", func(c *orderings.Counts) { c.Loads++ }}, {"swaps", func(c *orderings.Counts) { c.Swaps-- }},
		{"writes", func(c *orderings.Counts) { c.Writes++ }}, {"final writes", func(c *orderings.Counts) { c.FinalWrites-- }}} {
		t.Run(tamper.name, func(t *testing.T) {
			plan, err := orderings.Build("beta", 6, 3, orderings.Belady, 0)
			require.NoError(t, err)
			tamper.f(&plan.Counts)
			eng := cpu.New(fixture.Hyper(workload.Dot, 8), st, deg, 1)
			_, err = realrun.RunEpoch(st, plan, eng, realrun.EpochOptions{Prefetch: true, Seed: 1, Epoch: 1})
			require.Error(t, err)
			assert.Contains(t, err.Error(), "the engine performed")
		})
	}
	plan, err := orderings.Build("beta", 6, 3, orderings.Belady, 0)
	require.NoError(t, err)
	ep, err := realrun.RunEpoch(st, plan, cpu.New(fixture.Hyper(workload.Dot, 8), st, deg, 1), realrun.EpochOptions{Seed: 1, Epoch: 1})
	require.NoError(t, err)
	assert.Equal(t, plan.Counts, ep.Counts, "without prefetch too")
}

// TestWritesFollowTheirReads: the write-back of the partition a load
// evicts goes to the disk only once that load's read has arrived
// (executor.Policy.WriteAfterRead), and since the next load that evicts
// waits for the write, no read ever shares the disk with a write.
func TestWritesFollowTheirReads(t *testing.T) {
	require.True(t, executor.Engine(true).WriteAfterRead)
	st := fixture.Prepare(t, "twitter", 0.001, 8, 128, workload.Dot) // 10.6 MB partitions
	for _, ordering := range []string{"beta", "hilbert"} {
		t.Run(ordering, func(t *testing.T) {
			plan, err := orderings.Build(ordering, st.M.P, 3, orderings.Belady, 0)
			require.NoError(t, err)
			ep := epoch(t, st, ordering, 3, true)
			var loads, writes []realrun.IOEvent
			for _, e := range ep.IO {
				switch {
				case e.Kind == "load":
					loads = append(loads, e)
				case e.Kind == "write" && !e.Final:
					writes = append(writes, e)
				}
			}
			require.Len(t, loads, len(plan.Loads))
			var evicting []int
			for j, l := range plan.Loads {
				if l.Evicts != orderings.None {
					evicting = append(evicting, j)
				}
			}
			require.Len(t, writes, len(evicting))
			require.NotEmpty(t, writes)
			for i, w := range writes {
				j := evicting[i]
				assert.Equal(t, plan.Loads[j].Evicts, w.Partition)
				assert.GreaterOrEqual(t, w.Start, loads[j].CheckStart, "write %d began before load %d's read arrived", i, j)
				for k, l := range loads {
					assert.LessOrEqual(t, min(l.CheckStart, w.End)-max(l.Start, w.Start), 0.0, "load %d's read overlaps write %d", k, i)
				}
			}
		})
	}
}
