package orderings

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPlanPrefix(t *testing.T) {
	plans, _, err := Select([]string{"beta", "hilbert", "hilbert-symmetric", "legend"}, 8, 3, Belady, 1)
	require.NoError(t, err)
	for _, pl := range plans {
		t.Run(pl.Ordering, func(t *testing.T) {
			whole := pl.Prefix(len(pl.Buckets))
			assert.Equal(t, pl.Loads, whole.Loads)
			assert.Equal(t, pl.FinalResident, whole.FinalResident)
			assert.Equal(t, pl.Counts, whole.Counts, "the whole Plan as its own prefix")
			require.NoError(t, whole.Validate())

			for _, k := range []int{1, 5, 16, 33, 63} {
				pre := pl.Prefix(k)
				require.Len(t, pre.Buckets, k)
				// The prefix's loads are the Plan's first ones, every one
				// needed before bucket k, and the next is not.
				n := len(pre.Loads)
				assert.Equal(t, pl.Loads[:n], pre.Loads)
				if n < len(pl.Loads) {
					assert.GreaterOrEqual(t, pl.Loads[n].NeededAt, k)
				}
				// Replaying the prefix's order by hand: every bucket's
				// partitions are resident, and what is left is FinalResident.
				slots := []int{None, None, None}
				li := 0
				for j, b := range pre.Buckets {
					for li < n && pre.Loads[li].NeededAt == j {
						l := pre.Loads[li]
						assert.Equal(t, slots[l.Slot], l.Evicts)
						slots[l.Slot] = l.Partition
						li++
					}
					assert.Contains(t, slots, b.Src)
					assert.Contains(t, slots, b.Dst)
				}
				assert.Equal(t, slots, pre.FinalResident)
				// Bytes: every load read, every eviction and the final
				// flush written.
				writes := 0
				for _, l := range pre.Loads {
					if l.Evicts != None {
						writes++
					}
				}
				assert.Equal(t, n, pre.Counts.Loads)
				assert.Equal(t, writes, pre.Counts.Writes)
				resident := 0
				for _, x := range slots {
					if x != None {
						resident++
					}
				}
				assert.Equal(t, resident, pre.Counts.FinalWrites)
				if k >= 16 {
					assert.Equal(t, 3, resident, "the fill is done by bucket 16")
				}
				assert.Error(t, pre.Validate(), "a prefix is not a whole epoch")
			}
			assert.Len(t, pl.Prefix(0).Buckets, 1)
			assert.Len(t, pl.Prefix(1000).Buckets, 64)
		})
	}
}
