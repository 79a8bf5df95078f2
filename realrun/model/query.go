package model

import "github.com/tierflow/tierflow/workload"

// Query writes into q (length d) the vector whose dot product with a
// candidate's embedding is the score of the edge with that candidate on
// the given side — (s∘r) or its complex form for candidates as
// destinations, the mirrored form for candidates as sources — and returns
// q, or the embedding itself for Dot (q is then unused). Scoring a block of
// queries against every candidate is then one matrix product (SgemmNT),
// which is how filtered evaluation ranks.
func Query(k workload.Model, d int, s, r, dst []float32, side Side, q []float32) []float32 {
	switch {
	case k == workload.Dot && side == DstSide:
		return s[:d]
	case k == workload.Dot:
		return dst[:d]
	case k == workload.DistMult && side == DstSide:
		hadamard(s[:d], r, q)
	case k == workload.DistMult:
		hadamard(dst[:d], r, q)
	case k == workload.ComplEx && side == DstSide:
		complexQ(d, 1, s, r, q)
	case k == workload.ComplEx:
		complexQSrc(d, 1, r, dst, q)
	}
	return q[:d]
}
