package workload

// PaperComplex is the factor the paper systems' ComplEx figures were
// matched with (Marius on FB15k and Freebase86m; the goldens and the
// paper experiments): their ComplEx costs twice dot's score products and
// host gather. It is kept for those systems alone. tierflow's engines
// form the complex query first and score it with dot's GEMM, so the cost
// rule (ModelCost) prices ComplEx as dot's products plus the complex
// product of each query.
func (t Training) PaperComplex() float64 {
	if t.Model == ComplEx {
		return 2
	}
	return 1
}

// PaperBatchFLOPs is a batch's arithmetic on a paper system's GPU: the
// cost rule's (BatchFLOPs), with ComplEx's score products counted twice
// (PaperComplex). The simulator's GPU stage and the GPU calibration
// divide the same figure.
func (t Training) PaperBatchFLOPs(b int) float64 {
	f := t.BatchFLOPs(b)
	if k := t.PaperComplex(); k != 1 {
		f += (k - 1) * 2 * float64(b) * float64(t.Negatives) * t.Cost().PairFLOPs
	}
	return f
}

// SplitBatches returns the sizes of the batches of a bucket of n edges:
// full batches of batch edges and one remainder. It is the one rule by
// which the simulator and the engines cut a bucket into batches
// (BatchCount, BatchSize).
func SplitBatches(n int64, batch int) (full int64, rest int) {
	return n / int64(batch), int(n % int64(batch))
}

// BatchCount is the number of batches a bucket of n edges is cut into
// (SplitBatches: the full ones and the remainder, if any).
func BatchCount(n int64, batch int) int {
	full, rest := SplitBatches(n, batch)
	if rest > 0 {
		full++
	}
	return int(full)
}

// BatchSize is the number of edges in batch i (0-based, below
// BatchCount) of a bucket of n edges: batch edges, the last one the
// remainder.
func BatchSize(n int64, batch, i int) int {
	return int(min(int64(batch), n-int64(i)*int64(batch)))
}
