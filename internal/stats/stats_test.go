package stats

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want float64
	}{
		{nil, 0},
		{[]float64{3}, 3},
		{[]float64{3, 1, 2}, 2},
		{[]float64{4, 1, 3, 2}, 2.5},
	} {
		xs := append([]float64(nil), tc.xs...)
		assert.Equal(t, tc.want, Median(tc.xs))
		assert.Equal(t, xs, tc.xs, "not changed")
	}
}
