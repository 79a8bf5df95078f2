// Package stats holds the small summaries of repeated measurements that
// several packages take.
package stats

import "slices"

// Median is the median of xs, the mean of the middle two for an even
// count; 0 for none. xs is not changed.
func Median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
