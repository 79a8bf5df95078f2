package orderings

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSelect(t *testing.T) {
	plans, skipped, err := Select([]string{"beta", "cover", "beta", "legend", "hilbert"}, 8, 4, Belady, 0)
	require.NoError(t, err)
	var names []string
	for _, pl := range plans {
		names = append(names, pl.Ordering)
	}
	assert.Equal(t, []string{"beta", "hilbert"}, names, "in the order named, a name given twice once")
	require.Len(t, skipped, 2)
	assert.Equal(t, "cover", skipped[0].Ordering)
	assert.Contains(t, skipped[0].Reason, "p = 4^k")
	assert.Equal(t, "legend", skipped[1].Ordering)

	_, _, err = SelectSome([]string{"cover", "legend", "cover"}, 8, 4, Belady, 0)
	var none *NoneValidError
	require.True(t, errors.As(err, &none), "%v", err)
	assert.Len(t, none.Skipped, 2)
	assert.Contains(t, err.Error(), "none of the orderings is defined at p = 8, c = 4: cover needs p = 4^k")
	assert.Contains(t, err.Error(), "legend defined for a buffer of c = 3")
	plans, _, err = SelectSome([]string{"beta"}, 8, 4, Belady, 0)
	require.NoError(t, err)
	assert.Len(t, plans, 1)
	_, _, err = Select([]string{"beta"}, 8, 1, Belady, 0)
	assert.Error(t, err, "not a skip: c < 2 is bad input")
}
