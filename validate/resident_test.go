package validate

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/store"
)

// TestPredictResident: a typed work directory's resident nodes reach the
// prediction, which reads and writes resident.bin (its rows and Adagrad
// state padded to the store's alignment, as the engine reads and writes
// it) once each beside the Plan's partitions; an untyped one predicts
// exactly as before.
func TestPredictResident(t *testing.T) {
	st, h, prof := placeholder(t)
	prof.Disk.Read, prof.Disk.Write, prof.CPU.Checksum = 1e9, 1e9, 1e9
	plan, err := orderings.Build("beta", st.M.P, 2, orderings.Belady, 0)
	require.NoError(t, err)
	untyped, err := predict(st, plan, h, Engine{}, true, prof, false)
	require.NoError(t, err)
	assert.Zero(t, untyped.ResidentBytes)
	reads, writes := plan.Counts.Bytes(st.M.PartitionBytes)
	assert.Equal(t, reads, untyped.ReadBytes)
	assert.Equal(t, writes, untyped.WriteBytes)

	for _, tt := range []struct {
		resident int64
		file     int64
	}{
		{1, store.Align},         // 1 × 16 × 4 × 2 = 128 bytes, padded
		{32, store.Align},        // 4096 bytes exactly
		{33, 2 * store.Align},    // 4224 bytes
		{1000, 32 * store.Align}, // 128,000 bytes → 131,072
	} {
		typed := &store.Store{Dir: st.Dir, M: st.M}
		typed.M.Resident = tt.resident // the partitions' size is the manifest's, as a typed build records it
		cfg, err := predictConfig(typed, plan, h, Engine{}, true, prof, false)
		require.NoError(t, err)
		assert.Equal(t, tt.resident, cfg.Dataset.ResidentNodes)
		assert.Equal(t, tt.file, cfg.ResidentBytes)
		rep, err := predict(typed, plan, h, Engine{}, true, prof, false)
		require.NoError(t, err)
		assert.Equal(t, tt.file, rep.ResidentBytes)
		assert.Equal(t, reads+tt.file, rep.ReadBytes, "resident.bin read once")
		assert.Equal(t, writes+tt.file, rep.WriteBytes, "and written once")
		assert.Equal(t, untyped.Counts, rep.Counts)
		assert.Greater(t, rep.EpochSeconds, untyped.EpochSeconds)
	}
}
