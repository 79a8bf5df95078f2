package data

import "slices"

// buildCSR returns the neighbour lists of n nodes from the edges
// src[i] → dst[i]: ascending, without duplicates or self loops; each edge
// in both directions unless directed, when v's list holds the sources of
// its in-edges.
func buildCSR(n int, src, dst []int32, directed bool) (ptr []int64, nbr []int32) {
	ptr = make([]int64, n+1)
	for i := range src {
		s, d := src[i], dst[i]
		if s == d {
			continue
		}
		ptr[d+1]++
		if !directed {
			ptr[s+1]++
		}
	}
	for v := 0; v < n; v++ {
		ptr[v+1] += ptr[v]
	}
	nbr = make([]int32, ptr[n])
	fill := slices.Clone(ptr[:n])
	for i := range src {
		s, d := src[i], dst[i]
		if s == d {
			continue
		}
		nbr[fill[d]] = s
		fill[d]++
		if !directed {
			nbr[fill[s]] = d
			fill[s]++
		}
	}
	// Sort and deduplicate each list, compacting in place.
	w := int64(0)
	start := int64(0)
	for v := 0; v < n; v++ {
		end := ptr[v+1]
		list := nbr[start:end]
		slices.Sort(list)
		ptr[v] = w
		for i, u := range list {
			if i > 0 && u == list[i-1] {
				continue
			}
			nbr[w] = u
			w++
		}
		start = end
	}
	ptr[n] = w
	return ptr, slices.Clip(nbr[:w])
}
