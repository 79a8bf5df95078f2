package orderings

// LowerBound is Marius equation (2): no order can finish an epoch with
// fewer swaps than ceil((p(p-1)/2 - c(c-1)/2) / (c-1)), because the initial
// buffer covers c(c-1)/2 partition pairs and each swap can bring at most
// c-1 new ones. It returns 0 for c ≥ p and -1 for an invalid (p, c).
func LowerBound(p, c int) int {
	if c < 2 || p < 2 {
		return -1
	}
	if c >= p {
		return 0
	}
	pairs := p*(p-1)/2 - c*(c-1)/2
	return (pairs + c - 2) / (c - 1)
}

// BETASwaps is Marius equation (3), the number of swaps of the BETA order:
// (p-c) + (x+1)((p-c) - x(c-1)/2) with x = floor((p-c)/(c-1)). It returns
// 0 for c ≥ p and -1 for an invalid (p, c).
func BETASwaps(p, c int) int {
	if c < 2 || p < 2 {
		return -1
	}
	if c >= p {
		return 0
	}
	x := (p - c) / (c - 1)
	// x(x+1) is even, so the half is exact.
	return (p - c) + (x+1)*(p-c) - (x+1)*x*(c-1)/2
}
