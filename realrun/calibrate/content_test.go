package calibrate

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

func TestFillPartitionLike(t *testing.T) {
	st := &store.Store{M: store.Manifest{PartitionBytes: 1 << 20}}
	a, err := st.NewBuffer()
	require.NoError(t, err)
	defer a.Free()
	b, err := st.NewBuffer()
	require.NoError(t, err)
	defer b.Free()
	fillPartitionLike(a, 1)
	var zeros int
	for _, x := range a.Floats() {
		require.LessOrEqual(t, x, float32(workdir.InitScale))
		require.GreaterOrEqual(t, x, -float32(workdir.InitScale))
		if x == 0 {
			zeros++
		}
	}
	assert.Less(t, zeros, 10, "a partition's floats, not zeros")
	fillPartitionLike(b, 1)
	assert.Equal(t, a.Bytes(), b.Bytes(), "one seed, one content")
	fillPartitionLike(b, 2)
	assert.NotEqual(t, a.Bytes(), b.Bytes(), "the two buffers differ")
}

func TestCalibrateSaysWhatItWrote(t *testing.T) {
	cal, err := Calibrate(CalibrateOptions{Dir: t.TempDir(), FileBytes: 1 << 20, Files: 2, Name: "t", Paired: 10 * time.Millisecond})
	require.NoError(t, err)
	assert.Equal(t, Written, cal.Written)
	assert.Contains(t, cal.Written, "±0.1")
	assert.Positive(t, cal.WriteBW)
}
