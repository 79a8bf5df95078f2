package dist

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings/lockserver"
)

// A run held after every epoch: once an epoch's buckets are all
// committed no trainer gets a bucket and the epoch does not advance until
// the launcher releases it; a release starts the next epoch (held in
// turn), a release with stop ends the run, and a release of a run that is
// not held is refused. A resumed run starts at its first epoch.
func TestHoldAfterEpoch(t *testing.T) {
	for _, tc := range []struct {
		name       string
		first      int
		epochs     int
		stopAfter  int // release with stop after this epoch (0: never)
		wantEpochs []int
	}{
		{name: "every epoch", first: 1, epochs: 3, wantEpochs: []int{1, 2, 3}},
		{name: "stopped early", first: 1, epochs: 5, stopAfter: 2, wantEpochs: []int{1, 2}},
		{name: "resumed", first: 3, epochs: 4, wantEpochs: []int{3, 4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cli := server(t)
			ctx := context.Background()
			const p = 2
			require.NoError(t, Init(ctx, cli, "/h", Config{Epochs: tc.epochs, First: tc.first, Hold: true}, p, make([]uint64, p)))
			c, err := Join(ctx, cli, "/h", 0, 2*time.Second)
			require.NoError(t, err)
			defer c.Leave()
			launcher := Observer(cli, "/h")
			var held []int
			for {
				b, ok, s, err := c.Acquire(ctx, lockserver.None)
				require.NoError(t, err)
				if s.Done() {
					break
				}
				if ok {
					require.NoError(t, c.Commit(ctx, b, nil, nil, nil))
					continue
				}
				require.True(t, s.Held(), "a lone trainer gets every bucket until the epoch is done: %+v", s)
				held = append(held, s.Epoch)
				// Held: asking again neither hands out a bucket nor
				// starts the next epoch.
				_, ok, again, err := c.Acquire(ctx, lockserver.None)
				require.NoError(t, err)
				assert.False(t, ok)
				assert.Equal(t, s.Epoch, again.Epoch)
				stop := s.Epoch == tc.stopAfter
				next, err := launcher.Release(ctx, stop || s.Epoch == tc.epochs)
				require.NoError(t, err)
				if stop || s.Epoch == tc.epochs {
					assert.True(t, next.Done())
				} else {
					assert.Equal(t, s.Epoch+1, next.Epoch)
					assert.Equal(t, next.Epoch, next.Hold)
					assert.False(t, next.Held())
					_, err = launcher.Release(ctx, false)
					assert.ErrorContains(t, err, "is not held after an epoch", "the next epoch has its buckets to train")
				}
			}
			assert.Equal(t, tc.wantEpochs, held)
		})
	}
}
