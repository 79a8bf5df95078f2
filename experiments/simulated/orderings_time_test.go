package simulated

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestOrderingsTimeTierflowNeverMovesMore checks the time comparison's
// rows: tierflow never has more swaps than BETA, and it is never slower
// than BETA by more than 1% in the simulator.
func TestOrderingsTimeTierflowNeverMovesMore(t *testing.T) {
	r, err := OrderingsTime()
	require.NoError(t, err)
	require.NotEmpty(t, r.Rows)
	bs, ts := col(t, r, "beta swaps"), col(t, r, "tierflow swaps")
	be, te := col(t, r, "beta epoch s"), col(t, r, "tierflow epoch s")
	for _, row := range r.Rows {
		b, _ := strconv.Atoi(row[bs])
		tf, _ := strconv.Atoi(row[ts])
		assert.LessOrEqual(t, tf, b, row[0])
		bt, _ := strconv.ParseFloat(row[be], 64)
		tt, _ := strconv.ParseFloat(row[te], 64)
		assert.LessOrEqual(t, tt, bt*1.01, row[0])
	}
}
