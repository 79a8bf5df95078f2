package dist

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/report"
)

// A pause inside an epoch: no bucket goes out while it lasts, the run is
// Paused once the buckets in flight are committed, and Unpause lets the
// trainers go on. With PauseEvery the commit of every N-th bucket pauses
// the run itself.
func TestPauseInsideEpoch(t *testing.T) {
	for _, tc := range []struct {
		name     string
		every    int   // Config.PauseEvery (0: the launcher pauses after the first bucket)
		wantAt   []int // buckets trained at each pause
		launcher bool
	}{
		{name: "launcher", launcher: true, wantAt: []int{1}},
		{name: "every 3 buckets", every: 3, wantAt: []int{3, 6, 9, 12, 15}},
		{name: "every 7 buckets", every: 7, wantAt: []int{7, 14}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cli := server(t)
			ctx := context.Background()
			const p = 4
			require.NoError(t, Init(ctx, cli, "/p", Config{Epochs: 1, Hold: true, PauseEvery: tc.every}, p, make([]uint64, p)))
			c, err := Join(ctx, cli, "/p", 0, 2*time.Second)
			require.NoError(t, err)
			defer c.Leave()
			obs := Observer(cli, "/p")
			var at []int
			last := lockserver.None
			for {
				b, ok, s, err := c.Acquire(ctx, last)
				require.NoError(t, err)
				if s.Held() {
					break
				}
				if ok {
					if tc.launcher && len(at) == 0 && s.Trained() == 0 {
						// The launcher asks for a pause with this bucket in
						// flight: the run is paused, not Paused, until it
						// is committed.
						ok, ps, err := obs.Pause(ctx)
						require.NoError(t, err)
						require.True(t, ok)
						assert.False(t, ps.Paused(), "a bucket in flight")
					}
					require.NoError(t, c.Commit(ctx, b, nil, nil, nil))
					last = b
					continue
				}
				require.True(t, s.Pause, "a lone trainer waits only for a pause: %+v", s)
				require.True(t, s.Paused())
				at = append(at, s.Trained())
				_, ok, again, err := c.Acquire(ctx, last)
				require.NoError(t, err)
				assert.False(t, ok, "no bucket while paused")
				assert.Equal(t, s.Trained(), again.Trained())
				require.NoError(t, obs.Unpause(ctx))
			}
			assert.Equal(t, tc.wantAt, at)
			// Pausing a run held after its epoch does nothing.
			ok, _, err := obs.Pause(ctx)
			require.NoError(t, err)
			assert.False(t, ok)
		})
	}
}

// A run started from a checkpoint inside its first epoch hands out only
// the buckets that checkpoint had not trained; a run with an order hands
// them out in it, in every epoch.
func TestWithinAndOrder(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	const p = 2
	within, err := lockserver.NewEpoch(p, true)
	require.NoError(t, err)
	within.Done[0], within.Done[1] = true, true // (0,0), (0,1)
	within.Inited[1] = true
	order := []orderings.Bucket{b(1, 1), b(0, 1), b(1, 0), b(0, 0)}
	require.NoError(t, Init(ctx, cli, "/w", Config{Epochs: 2, Hold: true, Within: within, Order: order}, p, make([]uint64, p)))
	c, err := Join(ctx, cli, "/w", 0, 2*time.Second)
	require.NoError(t, err)
	defer c.Leave()
	got := map[int][]orderings.Bucket{}
	for {
		bk, ok, s, err := c.Acquire(ctx, lockserver.None)
		require.NoError(t, err)
		if s.Done() {
			break
		}
		if s.Held() {
			_, err := Observer(cli, "/w").Release(ctx, s.Epoch == 2)
			require.NoError(t, err)
			continue
		}
		require.True(t, ok)
		got[s.Epoch] = append(got[s.Epoch], bk)
		require.NoError(t, c.Commit(ctx, bk, nil, nil, nil))
	}
	assert.Equal(t, []orderings.Bucket{b(1, 1), b(1, 0)}, got[1], "the buckets after the checkpoint, in the order")
	assert.Equal(t, order, got[2])

	bad := &lockserver.State{P: 3}
	assert.ErrorContains(t, Init(ctx, cli, "/bad", Config{Epochs: 1, Within: bad}, p, make([]uint64, p)), "not of p=2")
	assert.ErrorContains(t, Init(ctx, cli, "/bad2", Config{Epochs: 1, Order: order[:3]}, p, make([]uint64, p)), "an order of 3 buckets")
}

// A traced epoch's spans go to etcd in chunks and come back whole with
// the trainer's report; an untraced one has none.
func TestReportSpans(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	require.NoError(t, Init(ctx, cli, "/r", Config{Epochs: 1}, 2, make([]uint64, 2)))
	for _, tc := range []struct {
		id, spans int
	}{{0, 2*spanChunk + 1}, {1, 3}, {2, 0}} {
		c, err := Join(ctx, cli, "/r", tc.id, 2*time.Second)
		require.NoError(t, err)
		defer c.Leave()
		r := TrainerEpoch{Trainer: tc.id, Epoch: 1, Buckets: tc.spans}
		for i := range tc.spans {
			r.Spans = append(r.Spans, report.Span{Track: TrackTrain, Name: "bucket", Start: float64(i), End: float64(i) + 0.5})
		}
		require.NoError(t, c.PutReport(ctx, 1, r))
	}
	got, err := Reports(ctx, cli, "/r")
	require.NoError(t, err)
	require.Len(t, got[1], 3)
	for _, r := range got[1] {
		require.Len(t, r.Spans, r.Buckets, "trainer %d", r.Trainer)
		for i, sp := range r.Spans {
			assert.Equal(t, float64(i), sp.Start)
		}
	}
}
