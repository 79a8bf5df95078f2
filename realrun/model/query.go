package model

import "github.com/tierflow/tierflow/workload"

// Query writes into q (length d) the query vector of one edge on the given
// side — G(s; r) for candidates as destinations, H(dst; r) for candidates
// as sources (the operator table of workload.Model; r is the edge's
// relation row of k.RelWidth(d) floats) — so that the model's comparator
// of the query and a candidate's embedding is the score of the edge with
// that candidate, and returns q, or the embedding itself when the model's
// operator is none (q is then unused). Scoring a block of queries against
// many candidates is then Scores (one matrix product for dot, cos, l2 and
// squared_l2), which is how filtered evaluation ranks.
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
		complexQ(d, 1, s, r, d, 0, q)
	case k == workload.ComplEx:
		complexQSrc(d, 1, r, dst, q)
	case k.Valid():
		return queryRow(k, d, s, r, dst, side, q[:d])
	}
	return q[:d]
}
