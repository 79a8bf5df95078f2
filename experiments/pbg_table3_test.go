package experiments

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPBGTable3Points(t *testing.T) {
	var prev *PBGTable3Point
	for _, p := range []int{1, 4, 8, 16} {
		pt, err := PBGTable3Simulate(p)
		require.NoError(t, err, "p=%d", p)
		rep := pt.Report
		assert.GreaterOrEqual(t, rep.EpochSeconds, rep.BoundSeconds, "p=%d", p)
		if prev != nil {
			assert.Less(t, pt.MemOurs, prev.MemOurs, "p=%d", p)
			assert.Less(t, pt.MemRowwise, prev.MemRowwise, "p=%d", p)
			// Training time rises with p (PBG Table 3's trend).
			assert.Greater(t, rep.EpochSeconds, prev.Report.EpochSeconds, "p=%d", p)
		}
		prev = &pt
	}
}

func TestPBGTable3(t *testing.T) {
	r, err := PBGTable3()
	require.NoError(t, err)
	require.Len(t, r.Rows, 4)
	sys, paper := col(t, r, "system"), col(t, r, "peak memory GB (paper)")
	row := col(t, r, "memory GB (row-wise Adagrad)")
	assert.Equal(t, []string{"dglke", "pbg", "pbg", "pbg"}, []string{r.Rows[0][sys], r.Rows[1][sys], r.Rows[2][sys], r.Rows[3][sys]})
	assert.Equal(t, []string{"59.6", "30.4", "15.5", "6.8"}, []string{r.Rows[0][paper], r.Rows[1][paper], r.Rows[2][paper], r.Rows[3][paper]})
	// PBG §5.4.2: the full model at d=100 is 48.5 GB (+1% row-wise state).
	assert.Equal(t, "49.0", r.Rows[0][row])
	assert.Len(t, r.Charts, 2)
}
