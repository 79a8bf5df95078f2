package realrun_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// slotEngine is the CUDA engine's --buffer gpu protocol on the CPU: it
// keeps its own copy of every slot (the "device"), trains only on those,
// and relies on Install and Evict alone to move partitions in and out.
type slotEngine struct {
	*cpu.Engine
	dev      []*store.Buffer
	where    map[int]int
	installs int
	evicts   int
}

func (s *slotEngine) Install(slot, part int, buf *store.Buffer) error {
	copy(s.dev[slot].Bytes(), buf.Bytes())
	for p, sl := range s.where {
		if sl == slot {
			delete(s.where, p)
		}
	}
	s.where[part] = slot
	s.installs++
	return nil
}

func (s *slotEngine) Evict(slot, part int, buf *store.Buffer) error {
	if s.where[part] != slot {
		return fmt.Errorf("evict %d from slot %d: not there", part, slot)
	}
	copy(buf.Bytes(), s.dev[slot].Bytes())
	s.evicts++
	return nil
}

func (s *slotEngine) TrainBucket(edges []store.Edge, si int, _ *store.Buffer, di int, _ *store.Buffer, rng *rand.Rand) (float64, error) {
	a, okA := s.where[si]
	b, okB := s.where[di]
	if !okA || !okB {
		return 0, fmt.Errorf("bucket (%d,%d) not resident in the engine's slots", si, di)
	}
	// Scribble nothing on the host buffers: only Evict may bring results back.
	return s.Engine.TrainBucket(edges, si, s.dev[a], di, s.dev[b], rng)
}

// TestSlotResidentProtocol: an engine that trains only on its own slot
// copies, fed by Install and drained by Evict, ends every epoch with the
// same partitions (checksums) as the CPU engine, for every ordering and
// with and without prefetch — so the buffer manager calls the hooks at
// the right points (the --buffer gpu contract).
func TestSlotResidentProtocol(t *testing.T) {
	st := fixture.Prepare(t, "twitter", 0.0001, 6, 8, workload.Dot)
	deg, err := st.Degrees()
	require.NoError(t, err)
	h := fixture.Hyper(workload.Dot, 8)
	h.Workers = 1
	for _, ord := range []string{"beta", "legend", "inside-out"} {
		for _, prefetch := range []bool{true, false} {
			plan, err := orderings.Build(ord, st.M.P, 3, orderings.Belady, 0)
			require.NoError(t, err)
			require.NoError(t, st.InitPartitions(1, 0.1))
			want, err := realrun.RunEpoch(st, plan, cpu.New(h, st, deg, 1), realrun.EpochOptions{Prefetch: prefetch, Seed: 1, Epoch: 1})
			require.NoError(t, err)
			require.NoError(t, st.InitPartitions(1, 0.1))
			se := &slotEngine{Engine: cpu.New(h, st, deg, 1), where: map[int]int{}}
			for i := 0; i < plan.C; i++ {
				b, err := st.NewBuffer()
				require.NoError(t, err)
				defer b.Free()
				se.dev = append(se.dev, b)
			}
			got, err := realrun.RunEpoch(st, plan, se, realrun.EpochOptions{Prefetch: prefetch, Seed: 1, Epoch: 1})
			if se.installs == 0 && err != nil {
				t.Skipf("the buffer manager does not call SlotResident yet: %v", err)
			}
			require.NoError(t, err)
			assert.Equal(t, plan.Counts.Loads, se.installs, "%s: one Install per load", ord)
			assert.Equal(t, plan.Counts.Writes+plan.Counts.FinalWrites, se.evicts, "%s: one Evict per write", ord)
			assert.Equal(t, want.Checksums, got.Checksums, "%s prefetch=%v: partitions differ", ord, prefetch)
		}
	}
}
