package orderings

// gf4Mul multiplies in GF(4) = {0, 1, ω, ω²}, encoded 0..3 with addition
// as XOR and ω² = ω + 1.
func gf4Mul(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	logs := [4]int{0, 0, 1, 2}
	exps := [3]int{1, 2, 3}
	return exps[(logs[a]+logs[b])%3]
}

// ag4Lines returns the lines of the affine space AG(k,4): points are the
// integers 0..4^k-1 read as k base-4 digits, each a GF(4) coordinate; a
// line is {a + t·b : t ∈ GF(4)} for a direction b whose first non-zero
// coordinate is 1. Every pair of points lies on exactly one line; there are
// 4^(k-1)·(4^k-1)/3 lines of four points each.
func ag4Lines(k int) [][]int {
	n := 1
	for i := 0; i < k; i++ {
		n *= 4
	}
	digits := func(x int) []int {
		d := make([]int, k)
		for i := 0; i < k; i++ {
			d[i] = x & 3
			x >>= 2
		}
		return d
	}
	point := func(d []int) int {
		x := 0
		for i := k - 1; i >= 0; i-- {
			x = x<<2 | d[i]
		}
		return x
	}
	var lines [][]int
	for dir := 1; dir < n; dir++ {
		b := digits(dir)
		lead := 0
		for i := k - 1; i >= 0; i-- { // the most significant non-zero digit leads
			if b[i] != 0 {
				lead = b[i]
				break
			}
		}
		if lead != 1 {
			continue
		}
		covered := make([]bool, n)
		for base := 0; base < n; base++ {
			if covered[base] {
				continue
			}
			a := digits(base)
			line := make([]int, 4)
			for t := 0; t < 4; t++ {
				q := make([]int, k)
				for i := range q {
					q[i] = a[i] ^ gf4Mul(t, b[i])
				}
				line[t] = point(q)
				covered[line[t]] = true
			}
			lines = append(lines, sortedCopy(line))
		}
	}
	return lines
}

// coverStates sequences the AG(k,4) lines greedily: start with the line
// through partition 0 in the first direction and repeatedly move to the
// lowest-numbered unused line that shares a partition with the current one
// (two lines meet in at most one point), or to the lowest unused line when
// none does. The shared partition is kept in its place so a buffer replay
// can keep it resident.
func coverStates(k int) [][]int {
	lines := ag4Lines(k)
	used := make([]bool, len(lines))
	states := make([][]int, 0, len(lines))
	cur := 0
	for len(states) < len(lines) {
		used[cur] = true
		states = append(states, lines[cur])
		next := -1
		for i, l := range lines {
			if used[i] {
				continue
			}
			if next < 0 {
				next = i
			}
			if intersects(l, lines[cur]) {
				next = i
				break
			}
		}
		if next < 0 {
			break
		}
		cur = next
	}
	return states
}

func intersects(a, b []int) bool {
	for _, x := range a {
		for _, y := range b {
			if x == y {
				return true
			}
		}
	}
	return false
}

// coverOrder is the COVER reconstruction: p = 4^k, c = 4.
func coverOrder(p, c int, _ int64) ([]Bucket, [][]int, error) {
	k, n := 0, 1
	for n < p {
		n *= 4
		k++
	}
	if n != p || k == 0 || c != 4 {
		return nil, nil, notApplicable("needs p = 4^k (4, 16, 64, …) and c = 4, got p = %d, c = %d", p, c)
	}
	states := coverStates(k)
	return statesToOrder(p, states, nil, nil), states, nil
}
