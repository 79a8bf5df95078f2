package model

import "github.com/tierflow/tierflow/workload"

// Side says which end of an edge the candidates of RankCounts replace.
type Side int

// The two corruption sides.
const (
	// DstSide scores candidates as destinations: f(s, r, c_j).
	DstSide Side = iota
	// SrcSide scores candidates as sources: f(c_j, r, d).
	SrcSide
)

// String returns "dst" or "src".
func (s Side) String() string {
	switch s {
	case DstSide:
		return "dst"
	case SrcSide:
		return "src"
	}
	return "Side(?)"
}

// rankStack bounds the dimension whose query vector RankCounts keeps on the
// stack; larger d allocate one d-vector per call.
const rankStack = 1024

// RankCounts scores one query edge (s, r, dst; s and dst of length d, r the
// relation row of k.RelWidth(d) floats, ignored without relation
// parameters) against the m candidates in C (m×d, row-major) on the given side
// and returns how many candidates score strictly higher than the true edge
// and how many score exactly equal. skip (may be nil) excludes candidate j,
// for filtered ranking. The rank of the true edge is then higher+1
// (optimistic) to higher+equal+1 (pessimistic).
//
// The true score and the candidate scores go through the same arithmetic (the
// query by the model's operator once, then per candidate the comparator on
// the SIMD dot product and norms at a SIMD level, a sequential dot product
// at Generic, or the pairwise l1 / modulus_l1 kernel), so a candidate
// identical to the true node counts as equal. Lengths are assumed
// validated; an unknown kind or side returns (0, 0).
func RankCounts(k workload.Model, d int, s, r, dst []float32, side Side, C []float32, m int, skip func(j int) bool) (higher, equal int) {
	if !k.Valid() || d <= 0 || m <= 0 || (side != DstSide && side != SrcSide) {
		return 0, 0
	}
	if k != workload.Dot && k != workload.DistMult && k != workload.ComplEx {
		return rankGeneral(k, d, s, r, dst, side, C, m, skip)
	}
	var buf [rankStack]float32
	var q, truth []float32
	if k != workload.Dot {
		if d <= rankStack {
			q = buf[:d]
		} else {
			q = make([]float32, d)
		}
	}
	switch side {
	case DstSide:
		truth = dst[:d]
		switch k {
		case workload.Dot:
			q = s[:d]
		case workload.DistMult:
			hadamard(s[:d], r, q)
		case workload.ComplEx:
			complexQ(d, 1, s, r, d, 0, q)
		}
	case SrcSide:
		truth = s[:d]
		switch k {
		case workload.Dot:
			q = dst[:d]
		case workload.DistMult:
			hadamard(dst[:d], r, q)
		case workload.ComplEx:
			complexQSrc(d, 1, r, dst, q)
		}
	}
	ts := seqDot(q, truth)
	if level != Generic {
		ts = vecDot(q, truth)
	}
	count := func(j int, v float32) {
		if skip != nil && skip(j) {
			return
		}
		if v > ts {
			higher++
		} else if v == ts {
			equal++
		}
	}
	j := 0
	if level != Generic {
		for ; j < m; j++ {
			count(j, vecDot(q, C[j*d:j*d+d]))
		}
	}
	for ; j+4 <= m; j += 4 {
		o := j * d
		v0, v1, v2, v3 := seqDot4(q, C[o:o+d], C[o+d:o+2*d], C[o+2*d:o+3*d], C[o+3*d:o+4*d])
		count(j, v0)
		count(j+1, v1)
		count(j+2, v2)
		count(j+3, v3)
	}
	for ; j < m; j++ {
		count(j, seqDot(q, C[j*d:j*d+d]))
	}
	return higher, equal
}

// seqDot is a dot product with one accumulator in index order; seqDot4
// computes four of them with the same per-candidate arithmetic, so equal
// inputs give bit-identical scores whichever path scores them.
func seqDot(q, c []float32) float32 {
	c = c[:len(q)]
	var s float32
	for i, x := range q {
		s += x * c[i]
	}
	return s
}

func seqDot4(q, c0, c1, c2, c3 []float32) (s0, s1, s2, s3 float32) {
	c0, c1, c2, c3 = c0[:len(q)], c1[:len(q)], c2[:len(q)], c3[:len(q)]
	for i, x := range q {
		s0 += x * c0[i]
		s1 += x * c1[i]
		s2 += x * c2[i]
		s3 += x * c3[i]
	}
	return
}

// rankGeneral is RankCounts for every model but the original three.
func rankGeneral(k workload.Model, d int, s, r, dst []float32, side Side, C []float32, m int, skip func(j int) bool) (higher, equal int) {
	var buf [rankStack]float32
	q := buf[:]
	if d > rankStack {
		q = make([]float32, d)
	}
	q = queryRow(k, d, s, r, dst, side, q[:d])
	truth := dst[:d]
	if side == SrcSide {
		truth = s[:d]
	}
	cmp := k.Comparator()
	qn := normSq(q)
	ts := pairCmp(cmp, d, q, truth, qn)
	count := func(j int, v float32) {
		if skip != nil && skip(j) {
			return
		}
		if v > ts {
			higher++
		} else if v == ts {
			equal++
		}
	}
	if cmp == workload.CmpL1 || cmp == workload.CmpModulusL1 {
		// The pairwise kernel scores four candidates at once, each as it
		// scores the true node alone.
		const blk = 64
		var sc [blk]float32
		for j0 := 0; j0 < m; j0 += blk {
			nb := min(blk, m-j0)
			pairScores(cmp, d, nb, q, C[j0*d:(j0+nb)*d], sc[:nb])
			for jj, v := range sc[:nb] {
				count(j0+jj, v)
			}
		}
		return higher, equal
	}
	for j := 0; j < m; j++ {
		count(j, pairCmp(cmp, d, q, C[j*d:j*d+d], qn))
	}
	return higher, equal
}
