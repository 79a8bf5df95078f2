package nn

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkActivateDropout times the between-layer work on 2^21 values.
func BenchmarkActivateDropout(bm *testing.B) {
	rng := rand.New(rand.NewPCG(1, 1))
	n := 1 << 21
	y, h, k := make([]float32, n), make([]float32, n), make([]float32, n)
	for i := range y {
		y[i] = float32(rng.NormFloat64())
	}
	for _, elu := range []bool{false, true} {
		bm.Run(map[bool]string{false: "relu", true: "elu"}[elu], func(bm *testing.B) {
			for i := 0; i < bm.N; i++ {
				activate(h, k, y, elu)
			}
		})
	}
	var seeds []uint64
	bm.Run("dropout", func(bm *testing.B) {
		for i := 0; i < bm.N; i++ {
			seeds = dropout(h, k, 0.5, rng, seeds)
		}
	})
}
