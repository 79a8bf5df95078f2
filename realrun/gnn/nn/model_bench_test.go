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
	ids := make([]int32, len(h)/256)
	for i := range ids {
		ids[i] = int32(i)
	}
	bm.Run("dropout", func(bm *testing.B) {
		for i := 0; i < bm.N; i++ {
			dropout(h[:len(ids)*256], k[:len(ids)*256], 256, ids, 0.5, rng.Uint64())
		}
	})
}
