package experiments

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBettyTrainRegisteredAndSlow(t *testing.T) {
	for _, n := range []string{"betty-fig12", "betty-fig13", "betty-table5"} {
		e, err := Lookup(n)
		require.NoError(t, err, n)
		assert.True(t, e.Slow, "%s trains for minutes", n)
	}
}

func TestBettyFig12Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyFig12()
	require.NoError(t, err)
	checkRunInfo(t, r)
	require.Len(t, r.Rows, 2*2)
	secs := col(t, r, "epoch s (median)")
	for _, row := range r.Rows {
		s, err := strconv.ParseFloat(row[secs], 64)
		require.NoError(t, err, "%v", row)
		assert.Positive(t, s, "%v", row)
	}
}

func TestBettyFig13Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyFig13()
	require.NoError(t, err)
	checkRunInfo(t, r)
	require.Len(t, r.Rows, 2*2)
	// The micro-batched run computes the full batch's steps: the same
	// accuracies up to floating-point summation order.
	d := col(t, r, "|valid − K=1| points")
	for _, row := range r.Rows[2:] {
		v, err := strconv.ParseFloat(row[d], 64)
		require.NoError(t, err, "%v", row)
		assert.Less(t, v, 1.0, "%v", row)
	}
}

func TestBettyTable5Tiny(t *testing.T) {
	tinyBetty(t)
	r, err := BettyTable5()
	require.NoError(t, err)
	checkRunInfo(t, r)
	// arxiv: SAGE and GAT; products: SAGE only.
	require.Len(t, r.Rows, 3)
}
