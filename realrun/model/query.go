package model

// Query writes into q (length d) the vector whose dot product with a
// candidate's embedding is the score of the edge with that candidate on
// the given side — (s∘r) or its complex form for candidates as
// destinations, the mirrored form for candidates as sources — and returns
// q, or the embedding itself for Dot (q is then unused). Scoring a block of
// queries against every candidate is then one matrix product (SgemmNT),
// which is how filtered evaluation ranks.
func Query(k Kind, d int, s, r, dst []float32, side Side, q []float32) []float32 {
	switch {
	case k == Dot && side == DstSide:
		return s[:d]
	case k == Dot:
		return dst[:d]
	case k == DistMult && side == DstSide:
		hadamard(s[:d], r, q)
	case k == DistMult:
		hadamard(dst[:d], r, q)
	case k == ComplEx && side == DstSide:
		complexQ(d, 1, s, r, q)
	case k == ComplEx:
		complexQSrc(d, 1, r, dst, q)
	}
	return q[:d]
}
