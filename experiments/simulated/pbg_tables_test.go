package simulated

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func num(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err, "%q", s)
	return x
}

func TestPBGTable3(t *testing.T) {
	r, err := PBGTable3()
	require.NoError(t, err)
	require.Len(t, r.Rows, 7)
	ours, paper := col(t, r, "10 epochs h (ours)"), col(t, r, "10 epochs h (paper)")
	mem, speed := col(t, r, "peak memory GB (ours)"), col(t, r, "speed-up (ours)")
	// The one fitted point: Freebase, one machine, p = 1, 30 h.
	assert.InDelta(t, 30.0, num(t, r.Rows[0][ours]), 0.15)
	assert.Equal(t, "30.0", r.Rows[0][paper])
	for i := 1; i < 4; i++ {
		// one machine: time rises and memory falls with p (the paper's trend)
		assert.GreaterOrEqual(t, num(t, r.Rows[i][ours]), num(t, r.Rows[i-1][ours]), "row %d", i)
		assert.Less(t, num(t, r.Rows[i][mem]), num(t, r.Rows[i-1][mem]), "row %d", i)
	}
	for i := 5; i < 7; i++ {
		// several machines: faster with more machines, less memory each
		assert.Greater(t, num(t, r.Rows[i][speed]), num(t, r.Rows[i-1][speed]), "row %d", i)
		assert.Less(t, num(t, r.Rows[i][mem]), num(t, r.Rows[i-1][mem]), "row %d", i)
	}
	// With 2 machines the model is sharded but each machine also trains
	// on two partitions: more memory than one machine with 4 partitions
	// (the paper's 64.4 against 30.4 GB).
	assert.Greater(t, num(t, r.Rows[4][mem]), num(t, r.Rows[1][mem]))
	assert.Len(t, r.Charts, 3)
}

func TestPBGTable4(t *testing.T) {
	r, err := PBGTable4()
	require.NoError(t, err)
	require.Len(t, r.Rows, 7)
	paper, ours := col(t, r, "10 epochs h (paper)"), col(t, r, "10 epochs h (ours)")
	// The paper's empty cell (2 machines) gets our prediction.
	assert.Equal(t, "2", r.Rows[4][0])
	assert.Equal(t, "—", r.Rows[4][paper])
	assert.Positive(t, num(t, r.Rows[4][ours]))
	assert.Less(t, num(t, r.Rows[4][ours]), num(t, r.Rows[1][ours]), "2 machines beat 1 at p = 4")
	var twitterD bool
	for _, n := range r.Notes {
		if len(n) > 20 && n[:20] == "Twitter's memory: at" {
			twitterD = true
		}
	}
	assert.True(t, twitterD, "the note on Twitter's dimension")
}

func TestImpliedMoveRate(t *testing.T) {
	// One machine, p = 16: a slower disk than the preset's is needed for
	// our time to reach the paper's 40 h.
	rate, err := impliedMoveRate("freebase", 1, 16, 40)
	require.NoError(t, err)
	assert.Less(t, rate, 500e6)
	rep, err := PBGPoint("freebase", 1, 16, 100, rate)
	require.NoError(t, err)
	assert.InDelta(t, 40, rep.Seconds(10)/3600, 0.5)
}
