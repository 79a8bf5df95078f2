package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCrossEntropyValue(t *testing.T) {
	// Row 0: log(e¹+e²+e³) − 3, right; row 1: log 3, a three-way tie
	// that predicts class 0, wrong.
	logits := []float32{1, 2, 3, 0, 0, 0}
	labels := []int32{2, 1}
	d := make([]float32, 6)
	loss, correct := CrossEntropy(logits, labels, 3, d)
	assert.InDelta(t, (0.40760596444438013+math.Log(3))/2, loss, 1e-7)
	assert.Equal(t, 1, correct, "row 0 is right; row 1 ties three ways and predicts class 0")
	want := []float64{0.09003057317038046 / 2, 0.24472847105479767 / 2, (0.6652409557748219 - 1) / 2, 1.0 / 6, (1.0/3 - 1) / 2, 1.0 / 6}
	for i := range want {
		assert.InDelta(t, want[i], d[i], 1e-7, "dLogits[%d]", i)
	}

	tests := []struct {
		name    string
		logits  []float32
		labels  []int32
		loss    float64
		correct int
	}{
		{"large logits stay finite", []float32{1000, 0, -1000, 0}, []int32{1, 1}, (1000 + 0) / 2.0, 1},
		{"tie at the top picks the lowest class", []float32{5, 5, 5, 5}, []int32{1, 0}, math.Log(2), 1},
		{"no rows", nil, nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := make([]float32, len(tc.logits))
			loss, correct := CrossEntropy(tc.logits, tc.labels, 2, d)
			assert.InDelta(t, tc.loss, loss, 1e-9)
			assert.Equal(t, tc.correct, correct)
			for _, v := range d {
				assert.False(t, math.IsNaN(float64(v)))
			}
		})
	}
}

func TestCrossEntropyGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	const n, c = 7, 4
	logits := make([]float32, n*c)
	for i := range logits {
		logits[i] = float32(3 * rng.NormFloat64())
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.IntN(c))
	}
	d := make([]float32, n*c)
	CrossEntropy(logits, labels, c, d)
	nilLoss, _ := CrossEntropy(logits, labels, c, nil) // a nil gradient is allowed
	l0, _ := CrossEntropy(logits, labels, c, make([]float32, n*c))
	require.Equal(t, l0, nilLoss)
	for i := range logits {
		old := logits[i]
		const eps = 1e-2
		logits[i] = old + eps
		up, _ := CrossEntropy(logits, labels, c, nil)
		logits[i] = old - eps
		down, _ := CrossEntropy(logits, labels, c, nil)
		logits[i] = old
		num := (up - down) / (2 * eps)
		assert.InDelta(t, num, d[i], 1e-4+1e-3*math.Abs(num), "dLogits[%d]", i)
	}
}
