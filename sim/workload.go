package sim

import (
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/tierflow/tierflow/workload"
)

// GB converts bytes to decimal gigabytes (10^9 bytes), the unit tierflow
// prints.
func GB(bytes int64) float64 { return float64(bytes) / 1e9 }

// Distribution names how a dataset's edges spread over the p² buckets.
type Distribution string

// The bucket-size distributions.
const (
	// Uniform: every bucket holds |E|/p² edges, as when nodes are assigned
	// to partitions at random (PBG and Marius partition uniformly).
	Uniform Distribution = "uniform"
	// Skewed: partition i carries weight (i+1)^-α and bucket (i,j) a share
	// proportional to w_i·w_j — nodes numbered by decreasing degree and
	// partitioned into contiguous ranges, with degrees following a power
	// law (α = 0.5 by default).
	Skewed Distribution = "skewed"
)

// DefaultSkew is the exponent α of the skewed distribution.
const DefaultSkew = 0.5

// BucketEdges spreads total edges over the p×p buckets (row-major: index
// src·p+dst) so that they sum exactly to total (largest remainders).
func BucketEdges(total int64, p int, dist Distribution, alpha float64) ([]int64, error) {
	if p < 1 {
		return nil, fmt.Errorf("p must be positive, got %d", p)
	}
	if total < 0 {
		return nil, fmt.Errorf("negative edge count %d", total)
	}
	w := make([]float64, p)
	switch dist {
	case Uniform, "":
		for i := range w {
			w[i] = 1
		}
	case Skewed:
		if alpha < 0 || math.IsNaN(alpha) || math.IsInf(alpha, 0) {
			return nil, fmt.Errorf("skew exponent must be a non-negative number, got %v", alpha)
		}
		for i := range w {
			w[i] = math.Pow(float64(i+1), -alpha)
		}
	default:
		return nil, fmt.Errorf("unknown distribution %q (want uniform or skewed, or a histogram file)", dist)
	}
	var sum float64
	for _, x := range w {
		sum += x
	}
	n := p * p
	out := make([]int64, n)
	rem := make([]float64, n)
	var given int64
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			exact := float64(total) * w[i] * w[j] / (sum * sum)
			out[i*p+j] = int64(math.Floor(exact))
			rem[i*p+j] = exact - math.Floor(exact)
			given += out[i*p+j]
		}
	}
	// Hand the rounding remainder out by largest remainder, ties to the
	// lowest index, so the result is deterministic.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rem[idx[a]] > rem[idx[b]] })
	for k := int64(0); k < total-given; k++ {
		out[idx[k]]++
	}
	return out, nil
}

// Histogram is the per-bucket edge count of a real partitioned graph
// (workload.Histogram: the one format the real engine's work directory
// writes and the simulator reads).
type Histogram = workload.Histogram

// ReadHistogram parses and checks a histogram file
// (workload.ReadHistogram).
func ReadHistogram(r io.Reader) (Histogram, error) { return workload.ReadHistogram(r) }
