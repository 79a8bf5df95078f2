// Package split cuts a sampled GNN mini-batch into micro-batches by its
// output nodes (Betty §4.3): range, random, METIS on the batch's graph and
// REG, METIS on the redundancy-embedded graph whose edge weights count
// the input rows two output nodes share; each micro-batch keeps every
// neighbour the batch sampled, so the micro-batches together compute
// exactly what the batch does.
//
// METIS runs as Debian's gpmetis program (package metis; `make
// metis-deps` installs it): the graph goes to a temporary file in METIS's
// graph format and the partition comes back from gpmetis's output file.
package split

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// Method is a way to split a batch's output nodes.
type Method string

// The split methods.
const (
	// Range takes contiguous runs of output positions.
	Range Method = "range"
	// Random deals a seeded shuffle of the positions into equal parts.
	Random Method = "random"
	// METIS partitions the graph of the output nodes among themselves
	// (the last block's edges whose both ends are output nodes, unit
	// weights), minimising the edges cut.
	METIS Method = "metis"
	// REG partitions the redundancy-embedded graph (Betty Algorithm 1):
	// output nodes i and j are joined with the weight of the last
	// block's source rows both read (a neighbour both sampled, or one's
	// own row that the other sampled), so cutting little keeps shared
	// rows in one micro-batch. Rows read by more than REGMaxReaders
	// outputs are left out.
	REG Method = "reg"
)

// Methods lists the split methods, the default first.
var Methods = []Method{REG, Range, Random, METIS}

// String returns the method's name.
func (m Method) String() string { return string(m) }

// UsesMETIS reports whether the method runs gpmetis (when k > 1 and the
// graph it partitions has an edge).
func (m Method) UsesMETIS() bool { return m == METIS || m == REG }

// ParseMethod returns the named method (case-insensitive).
func ParseMethod(s string) (Method, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	for _, m := range Methods {
		if t == string(m) {
			return m, nil
		}
	}
	names := make([]string, len(Methods))
	for i, m := range Methods {
		names[i] = string(m)
	}
	return "", fmt.Errorf("split: unknown method %q (want one of %s)", s, strings.Join(names, ", "))
}

// Split assigns the output nodes of b — positions 0…len(b.Output())-1 —
// to k micro-batches: parts[i] lists positions in ascending order, every
// position is in exactly one part, and no part is empty (1 ≤ k ≤ the
// output nodes). seed drives Random and METIS's own seed.
//
// Range's and Random's parts differ in size by at most one. METIS and
// REG keep METIS's partition, except that a part over METIS's balance
// bound (3% over n/k, and never under ⌈n/k⌉) or empty is evened out by
// moving the nodes least tied to their part; when the graph they
// partition has no edge at all (a features-only batch, or output nodes
// that share nothing) there is nothing to cut and they return Range's
// parts. k == 1 never runs gpmetis.
func Split(b *block.Batch, k int, m Method, seed uint64) ([][]int32, error) {
	if b == nil || len(b.Blocks) == 0 {
		return nil, errors.New("split: the batch has no blocks")
	}
	if !slices.Contains(Methods, m) {
		_, err := ParseMethod(string(m))
		return nil, err
	}
	n := len(b.Output())
	switch {
	case n == 0:
		return nil, errors.New("split: the batch has no output nodes")
	case k < 1:
		return nil, fmt.Errorf("split: %d micro-batches, want at least 1", k)
	case k > n:
		return nil, fmt.Errorf("split: %d micro-batches for %d output nodes: a micro-batch needs at least one", k, n)
	}
	if k == 1 {
		return rangeParts(n, 1), nil
	}
	switch m {
	case Range:
		return rangeParts(n, k), nil
	case Random:
		return randomParts(n, k, seed), nil
	}
	if err := METISAvailable(); err != nil {
		return nil, fmt.Errorf("split: %s: %w", m, err)
	}
	var g *graph
	if m == REG {
		g = regGraph(&b.Blocks[len(b.Blocks)-1])
	} else {
		g = outputGraph(&b.Blocks[len(b.Blocks)-1])
	}
	if g.edges() == 0 {
		return rangeParts(n, k), nil
	}
	assign, err := gpmetis(g, k, seed)
	if err != nil {
		return nil, fmt.Errorf("split: %s of %d output nodes into %d: %w", m, n, k, err)
	}
	g.rebalance(assign, k)
	return partsOf(assign, k), nil
}

// rangeParts returns k contiguous runs of 0…n-1 whose sizes differ by at
// most one.
func rangeParts(n, k int) [][]int32 {
	parts := make([][]int32, k)
	flat := make([]int32, n)
	for i := range flat {
		flat[i] = int32(i)
	}
	for i := range parts {
		parts[i] = flat[i*n/k : (i+1)*n/k : (i+1)*n/k]
	}
	return parts
}

// randomParts returns k parts of a seeded shuffle of 0…n-1, sizes
// differing by at most one, each sorted.
func randomParts(n, k int, seed uint64) [][]int32 {
	rng := rand.New(rand.NewPCG(seed, 0x73706c6974)) // "split"
	flat := make([]int32, n)
	for i := range flat {
		flat[i] = int32(i)
	}
	rng.Shuffle(n, func(i, j int) { flat[i], flat[j] = flat[j], flat[i] })
	parts := make([][]int32, k)
	for i := range parts {
		p := flat[i*n/k : (i+1)*n/k : (i+1)*n/k]
		slices.Sort(p)
		parts[i] = p
	}
	return parts
}

// partsOf returns the positions of each part of assign (part ids in
// [0, k)), ascending.
func partsOf(assign []int32, k int) [][]int32 {
	size := make([]int, k+1)
	for _, p := range assign {
		size[p+1]++
	}
	for i := 1; i <= k; i++ {
		size[i] += size[i-1]
	}
	flat := make([]int32, len(assign))
	fill := append([]int(nil), size[:k]...)
	for v, p := range assign {
		flat[fill[p]] = int32(v)
		fill[p]++
	}
	parts := make([][]int32, k)
	for i := range parts {
		parts[i] = flat[size[i]:size[i+1]:size[i+1]]
	}
	return parts
}
