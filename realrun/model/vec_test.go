package model

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestAxpy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, l := range SupportedLevels() {
		prev := SetLevel(l)
		for _, n := range []int{0, 1, 7, 8, 15, 16, 17, 33, 602} {
			x := make([]float32, n)
			y := make([]float32, n+3) // longer than x: the rest stays
			for i := range x {
				x[i] = float32(rng.NormFloat64())
			}
			for i := range y {
				y[i] = float32(rng.NormFloat64())
			}
			want := append([]float32(nil), y...)
			for i := range x {
				want[i] += 0.5 * x[i]
			}
			Axpy(0.5, x, y)
			assert.InDeltaSlice(t, want, y, 1e-6, "%s n=%d", l, n)
		}
		SetLevel(prev)
	}
}
