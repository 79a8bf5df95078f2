package executor

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
)

// event is one completion a driver reports.
type event struct {
	kind Kind // Read: ReadDone; Write: Evicted then Written; Flush: Flushed; ReadResident
	load int
	// evicted says a Write's Evicted was reported (Written is next).
	evicted bool
}

// drive runs plan under pol with a driver that finishes its outstanding
// transfers and buckets in a seeded random order, checking the
// executor's rules at every action, and returns the actions in order.
func drive(t *testing.T, plan *orderings.Plan, pol Policy, seed uint64) []Action {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	x := New(plan, pol)
	need := plan.Arrivals()
	var (
		log                        []Action
		pending                    []event
		installed, completed, kb   int
		readsDone                  = map[int]bool{}
		written, evictIssued, read = map[int]bool{}, map[int]bool{}, map[int]bool{}
		residentIn                 = !pol.Resident
		flushes, flushedN          int
		residentWritten            bool
		inTraining                 []int // buckets started, not yet done (in order)
		reading                    int
	)
	apply := func(acts []Action) {
		for _, a := range acts {
			log = append(log, a)
			switch a.Kind {
			case ReadResident:
				pending = append(pending, event{kind: ReadResident})
			case Read:
				l := plan.Loads[a.Load]
				require.True(t, residentIn, "%v before the resident table is in", a)
				require.False(t, read[a.Load], "%v twice", a)
				require.True(t, l.MayIssue(completed, pol.Prefetch), "%v before it may issue (completed %d)", a, completed)
				if !pol.Prefetch || pol.Staging == 0 {
					require.True(t, l.SlotFree(completed), "%v before its slot is free (completed %d) without staging", a, completed)
				}
				if l.Evicts != orderings.None && pol.SyncWrites && l.SlotFree(completed) && evictIssued[a.Load] {
					require.True(t, written[a.Load], "%v before the write it waits for", a)
				}
				require.Zero(t, reading, "%v while another read is in flight", a)
				reading++
				read[a.Load] = true
				pending = append(pending, event{kind: Read, load: a.Load})
			case Write:
				l := plan.Loads[a.Load]
				require.NotEqual(t, orderings.None, l.Evicts, "%v of a load that evicts nothing", a)
				require.Equal(t, l.Evicts, a.Partition)
				require.False(t, evictIssued[a.Load], "%v twice", a)
				require.True(t, l.SlotFree(completed), "%v before the evicted partition's last use", a)
				evictIssued[a.Load] = true
				pending = append(pending, event{kind: Write, load: a.Load})
			case Install:
				l := plan.Loads[a.Load]
				require.Equal(t, installed, a.Load, "installs in Plan order")
				require.True(t, readsDone[a.Load], "%v before its read finished", a)
				require.True(t, l.SlotFree(completed), "%v before its slot is free", a)
				if l.Evicts != orderings.None {
					require.True(t, evictIssued[a.Load], "%v before its eviction was written", a)
					if pol.SyncWrites {
						require.True(t, written[a.Load], "%v before the write it waits for", a)
					}
				}
				installed++
			case Flush:
				require.Equal(t, len(plan.Buckets), completed, "flush before the last bucket")
				require.Equal(t, len(plan.Loads), installed, "flush before the last install")
				flushes++
				pending = append(pending, event{kind: Flush})
			case WriteResident:
				require.Equal(t, flushes, flushedN, "the resident table after the flush")
				residentWritten = true
			}
		}
	}
	apply(x.Start())
	for steps := 0; ; steps++ {
		require.Less(t, steps, 100000, "no progress")
		// start every bucket whose partitions are in (one at a time, in
		// order: a bucket trains once its loads are installed)
		for kb < len(plan.Buckets) && residentIn && installed >= need[kb] && len(inTraining) < 2 {
			inTraining = append(inTraining, kb)
			kb++
		}
		choices := len(pending)
		if len(inTraining) > 0 {
			choices++
		}
		if choices == 0 {
			break
		}
		i := rng.IntN(choices)
		if i == len(pending) {
			inTraining = inTraining[1:]
			completed++
			apply(x.Completed(completed))
			continue
		}
		ev := pending[i]
		pending = append(pending[:i], pending[i+1:]...)
		switch ev.kind {
		case ReadResident:
			residentIn = true
			apply(x.ResidentRead())
		case Read:
			reading--
			readsDone[ev.load] = true
			apply(x.ReadDone(ev.load))
		case Write:
			if !ev.evicted {
				pending = append(pending, event{kind: Write, load: ev.load, evicted: true})
				apply(x.Evicted(ev.load))
				continue
			}
			written[ev.load] = true
			apply(x.Written(ev.load))
		case Flush:
			flushedN++
			apply(x.Flushed())
		}
	}
	require.Equal(t, len(plan.Buckets), completed, "every bucket trained")
	require.Equal(t, len(plan.Loads), installed, "every load installed")
	require.True(t, x.Done())
	want := 0
	for _, p := range plan.FinalResident {
		if p != orderings.None {
			want++
		}
	}
	assert.Equal(t, want, flushes, "one flush per resident partition")
	assert.Equal(t, pol.Resident, residentWritten, "the resident table written at the end")
	nw := 0
	for _, l := range plan.Loads {
		if l.Evicts != orderings.None {
			nw++
		}
	}
	assert.Len(t, evictIssued, nw, "every eviction written back once")
	return log
}

// Every policy the simulator's systems and the engines use executes
// every Plan to its end under any order of completions, keeping the
// rules.
func TestPoliciesKeepTheRules(t *testing.T) {
	policies := map[string]Policy{
		"engine":                Engine(true),
		"engine, on demand":     Engine(false),
		"staging (marius)":      {Prefetch: true, Staging: 1},
		"sync writes (pbg)":     {SyncWrites: true},
		"prefetch, sync writes": {Prefetch: true, SyncWrites: true},
		"unbounded writes":      {Prefetch: true},
		"staging, write buffer": {Prefetch: true, Staging: 2, WriteBuffers: 1, Resident: true},
		"engine, resident":      {Prefetch: true, WriteBuffers: 1, Resident: true},
	}
	for _, ord := range []string{"beta", "hilbert", "inside-out"} {
		for _, pc := range [][2]int{{4, 2}, {6, 3}, {8, 4}} {
			plan, err := orderings.Build(ord, pc[0], pc[1], orderings.Belady, 1)
			require.NoError(t, err)
			for name, pol := range policies {
				for seed := uint64(1); seed <= 5; seed++ {
					t.Run(fmt.Sprintf("%s p=%d c=%d %s seed %d", ord, pc[0], pc[1], name, seed), func(t *testing.T) {
						drive(t, plan, pol, seed)
					})
				}
			}
		}
	}
}

// Under the engines' policy the order of the actions does not depend on
// how long anything takes: any two drivers of one Plan see the same
// sequence, which is what lets the simulator's model of an engine and
// the engine be compared action by action.
func TestEnginePolicyIsTimingFree(t *testing.T) {
	plan, err := orderings.Build("beta", 8, 3, orderings.Belady, 1)
	require.NoError(t, err)
	for _, pol := range []Policy{Engine(true), Engine(false)} {
		first := drive(t, plan, pol, 1)
		for seed := uint64(2); seed <= 20; seed++ {
			require.Equal(t, first, drive(t, plan, pol, seed), "seed %d", seed)
		}
	}
	// With a staging buffer beside the write buffer it does depend on
	// timing (the evicted partition is written when the read is issued
	// if its slot is free by then, else when the load is installed): the
	// rule above is the engine policy's, not every policy's.
	pol := Policy{Prefetch: true, Staging: 1, WriteBuffers: 1}
	first, differs := drive(t, plan, pol, 1), false
	for seed := uint64(2); seed <= 20 && !differs; seed++ {
		differs = fmt.Sprint(first) != fmt.Sprint(drive(t, plan, pol, seed))
	}
	assert.True(t, differs, "the write of an eviction moves with timing")
}

// Pause holds back every load not yet issued; Resume lets them go.
func TestPause(t *testing.T) {
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 1)
	require.NoError(t, err)
	x := New(plan, Engine(true))
	acts := x.Start()
	require.Equal(t, []Action{{Kind: Read, Load: 0, Partition: plan.Loads[0].Partition, Slot: plan.Loads[0].Slot}}, acts)
	x.Pause()
	acts = x.ReadDone(0)
	require.Len(t, acts, 1, "the install, and no read while paused")
	assert.Equal(t, Install, acts[0].Kind)
	assert.True(t, x.Quiet())
	acts = x.Resume()
	require.Len(t, acts, 1)
	assert.Equal(t, Read, acts[0].Kind)
	assert.Equal(t, 1, acts[0].Load)
	assert.False(t, x.Quiet())
}

// Restore starts from a position inside the epoch and refuses one
// outside the Plan.
func TestRestore(t *testing.T) {
	plan, err := orderings.Build("beta", 4, 2, orderings.Belady, 1)
	require.NoError(t, err)
	x := New(plan, Policy{Prefetch: true, WriteBuffers: 1, Resident: true})
	require.Error(t, x.Restore(len(plan.Buckets)+1, 0))
	require.Error(t, x.Restore(0, -1))
	need := plan.Arrivals()
	k := len(plan.Buckets) / 2
	require.NoError(t, x.Restore(k, need[k]))
	acts := x.Start()
	for _, a := range acts {
		assert.NotEqual(t, ReadResident, a.Kind, "a restored epoch has its resident table")
		if a.Load >= 0 {
			assert.GreaterOrEqual(t, a.Load, need[k], "no load before the position")
		}
	}
	assert.Equal(t, need[k], x.Installed())
}

func TestActionString(t *testing.T) {
	for _, c := range []struct {
		a    Action
		want string
	}{
		{Action{Kind: Read, Load: 3, Partition: 2, Slot: 1}, "read load 3: partition 2 into slot 1"},
		{Action{Kind: Write, Load: 3, Partition: 0, Slot: 1}, "write load 3: partition 0 out of slot 1"},
		{Action{Kind: Flush, Load: -1, Partition: 2, Slot: 0}, "flush partition 2 out of slot 0"},
		{Action{Kind: WriteResident, Load: -1}, "write-resident"},
		{Action{Kind: 99}, "kind(99)"},
	} {
		assert.Equal(t, c.want, c.a.String())
	}
}
