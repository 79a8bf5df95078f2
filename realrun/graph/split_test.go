package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSplitter(t *testing.T) {
	tests := []struct {
		name        string
		valid, test float64
		want        [3]float64 // train, valid, test
	}{
		{"default 90/5/5", DefaultValid, DefaultTest, [3]float64{0.9, 0.05, 0.05}},
		{"fb15k 80/10/10", 0.1, 0.1, [3]float64{0.8, 0.1, 0.1}},
		{"all train", 0, 0, [3]float64{1, 0, 0}},
		{"no train", 0.5, 0.5, [3]float64{0, 0.5, 0.5}},
		{"sanitised: NaN and negative", math.NaN(), -1, [3]float64{1, 0, 0}},
		{"sanitised: sum above 1", 1.5, 0.5, [3]float64{0, 2.0 / 3, 1.0 / 3}},
	}
	const draws = 100_000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var count [3]int
			s := NewSplitter(9, tc.valid, tc.test)
			for range draws {
				count[s.Next()]++
			}
			for i := range count {
				assert.InDelta(t, tc.want[i], float64(count[i])/draws, 0.01, "%v", Split(i))
			}
		})
	}
}

func TestSplitterDeterministic(t *testing.T) {
	seq := func(seed int64) []Split {
		s := NewSplitter(seed, DefaultValid, DefaultTest)
		out := make([]Split, 10_000)
		for i := range out {
			out[i] = s.Next()
		}
		return out
	}
	assert.Equal(t, seq(5), seq(5))
	assert.NotEqual(t, seq(5), seq(6))
}

func TestCheckFractions(t *testing.T) {
	for _, ok := range [][2]float64{{0.05, 0.05}, {0, 0}, {1, 0}, {0.5, 0.5}} {
		assert.NoError(t, CheckFractions(ok[0], ok[1]), "%v", ok)
	}
	for _, bad := range [][2]float64{{-0.1, 0}, {0, 1.1}, {0.6, 0.5}, {math.NaN(), 0}, {0, math.Inf(1)}} {
		err := CheckFractions(bad[0], bad[1])
		require.Error(t, err, "%v", bad)
		assert.Contains(t, err.Error(), "graph: split fractions")
	}
}

func TestSplitString(t *testing.T) {
	assert.Equal(t, "train", Train.String())
	assert.Equal(t, "valid", Valid.String())
	assert.Equal(t, "test", Test.String())
	assert.Equal(t, "Split(7)", Split(7).String())
}
