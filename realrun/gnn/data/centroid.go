package data

import "math"

// CentroidAccuracy is a quick check that a graph's labels are learnable
// and that its edges carry them: a nearest-centroid classifier (the class
// means of the training nodes' features, Euclidean distance) scored on
// the test nodes (the validation nodes when there are no test nodes). With
// averaged, each node's features are first replaced by their mean over
// the node and its neighbours, one round of the propagation a GNN does.
// It returns 0 when there is nothing to score.
func CentroidAccuracy(g *Graph, averaged bool) float64 {
	eval := g.Test
	if len(eval) == 0 {
		eval = g.Valid
	}
	if len(eval) == 0 || len(g.Train) == 0 || len(g.Classes) == 0 {
		return 0
	}
	f, k := g.F, len(g.Classes)
	row := func(v int32, buf []float64) []float64 {
		for j, x := range g.Row(v) {
			buf[j] = float64(x)
		}
		if averaged {
			nb := g.Neighbors(v)
			for _, u := range nb {
				for j, x := range g.Row(u) {
					buf[j] += float64(x)
				}
			}
			inv := 1 / float64(len(nb)+1)
			for j := range buf {
				buf[j] *= inv
			}
		}
		return buf
	}
	cent := make([]float64, k*f)
	count := make([]int, k)
	buf := make([]float64, f)
	for _, v := range g.Train {
		c := g.Y[v]
		count[c]++
		for j, x := range row(v, buf) {
			cent[int(c)*f+j] += x
		}
	}
	for c := 0; c < k; c++ {
		for j := 0; j < f; j++ {
			if count[c] > 0 {
				cent[c*f+j] /= float64(count[c])
			}
		}
	}
	// argmin_c |x-c|² = argmin_c |c|² - 2x·c.
	norm := make([]float64, k)
	for c := 0; c < k; c++ {
		for _, m := range cent[c*f : (c+1)*f] {
			norm[c] += m * m
		}
	}
	right := 0
	for _, v := range eval {
		x := row(v, buf)
		best, bestD := -1, math.Inf(1)
		for c := 0; c < k; c++ {
			if count[c] == 0 {
				continue
			}
			dot := 0.0
			for j, m := range cent[c*f : (c+1)*f] {
				dot += x[j] * m
			}
			if d := norm[c] - 2*dot; d < bestD {
				best, bestD = c, d
			}
		}
		if int32(best) == g.Y[v] {
			right++
		}
	}
	return float64(right) / float64(len(eval))
}
