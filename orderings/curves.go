package orderings

import "math/rand/v2"

// hilbertD2XY maps a distance d along the Hilbert curve that fills an n×n
// grid (n a power of two) to the cell (x, y). The curve starts at (0,0) and
// ends at (n-1,0).
func hilbertD2XY(n, d int) (x, y int) {
	t := d
	for s := 1; s < n; s *= 2 {
		rx := 1 & (t / 2)
		ry := 1 & (t ^ rx)
		if ry == 0 {
			if rx == 1 {
				x, y = s-1-x, s-1-y
			}
			x, y = y, x
		}
		x += s * rx
		y += s * ry
		t /= 4
	}
	return x, y
}

// hilbertWalk calls visit for every cell (src, dst) of the p×p bucket grid
// in Hilbert order: the curve over the smallest enclosing 2^k×2^k grid with
// the cells outside p×p skipped, so any p works.
func hilbertWalk(p int, visit func(b Bucket)) {
	n := 1
	for n < p {
		n *= 2
	}
	for d := 0; d < n*n; d++ {
		x, y := hilbertD2XY(n, d)
		if x < p && y < p {
			visit(Bucket{x, y})
		}
	}
}

func hilbertOrder(p, _ int, _ int64) ([]Bucket, [][]int, error) {
	order := make([]Bucket, 0, p*p)
	hilbertWalk(p, func(b Bucket) { order = append(order, b) })
	return order, nil, nil
}

// hilbertSymmetricOrder walks the Hilbert order and, on first reaching
// (i,j), emits (i,j) and then (j,i).
func hilbertSymmetricOrder(p, _ int, _ int64) ([]Bucket, [][]int, error) {
	seen := make([]bool, p*p)
	order := make([]Bucket, 0, p*p)
	hilbertWalk(p, func(b Bucket) {
		if seen[b.Src*p+b.Dst] {
			return
		}
		seen[b.Src*p+b.Dst] = true
		order = append(order, b)
		if b.Src != b.Dst {
			seen[b.Dst*p+b.Src] = true
			order = append(order, Bucket{b.Dst, b.Src})
		}
	})
	return order, nil, nil
}

// pbgLayer appends PyTorch-BigGraph's layer i: every bucket whose smaller
// index is i, with (i,j) and (j,i) adjacent. diagonalLast puts (i,i) after
// the layer's off-diagonal buckets, so that with inside-out every bucket
// but the very first touches an already-trained partition (PBG Figure 1).
func pbgLayer(order []Bucket, p, i int, diagonalLast bool) []Bucket {
	if !diagonalLast {
		order = append(order, Bucket{i, i})
	}
	for j := i + 1; j < p; j++ {
		order = append(order, Bucket{i, j}, Bucket{j, i})
	}
	if diagonalLast {
		order = append(order, Bucket{i, i})
	}
	return order
}

// insideOutOrder runs the layers p-1, p-2, …, 0: each new layer adds one
// partition to the set already trained.
func insideOutOrder(p, _ int, _ int64) ([]Bucket, [][]int, error) {
	order := make([]Bucket, 0, p*p)
	for i := p - 1; i >= 0; i-- {
		order = pbgLayer(order, p, i, true)
	}
	return order, nil, nil
}

// outsideInOrder runs the layers 0, 1, …, p-1.
func outsideInOrder(p, _ int, _ int64) ([]Bucket, [][]int, error) {
	order := make([]Bucket, 0, p*p)
	for i := 0; i < p; i++ {
		order = pbgLayer(order, p, i, false)
	}
	return order, nil, nil
}

func rowMajorOrder(p, _ int, _ int64) ([]Bucket, [][]int, error) {
	order := make([]Bucket, 0, p*p)
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			order = append(order, Bucket{i, j})
		}
	}
	return order, nil, nil
}

// randomOrder is a uniform permutation of the buckets drawn from seed.
func randomOrder(p, c int, seed int64) ([]Bucket, [][]int, error) {
	order, _, _ := rowMajorOrder(p, c, seed)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x72616e64)) // "rand"
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	return order, nil, nil
}
