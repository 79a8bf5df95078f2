package micro

import (
	"errors"
	"fmt"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/graph"
)

// errEnough stops the generator once enough edges are drawn.
var errEnough = errors.New("enough edges")

// SampleBatch draws a real-shaped batch from a generated graph (power-law
// degrees and communities, graph.Generate): its first edges edges in the
// generator's random order, in chunks of chunk edges, each chunk sharing
// negatives negative rows of which a degreeFrac share are drawn by degree
// (the endpoint of a random edge among the first 10·edges) and the rest
// uniformly over the nodes — the way the CPU engine samples them.
func SampleBatch(p graph.Preset, seed int64, edges, chunk, negatives int, degreeFrac float64) (Batch, error) {
	if edges < 1 || chunk < 1 || negatives < 0 {
		return Batch{}, fmt.Errorf("micro: sample batch: edges %d, chunk %d, negatives %d", edges, chunk, negatives)
	}
	pool := 10 * edges
	var src, dst []int64
	var rel []int32
	err := graph.Generate(p, seed, func(s, r, d int64) error {
		src, dst, rel = append(src, s), append(dst, d), append(rel, int32(r))
		if len(src) == pool {
			return errEnough
		}
		return nil
	})
	if err != nil && !errors.Is(err, errEnough) {
		return Batch{}, fmt.Errorf("micro: sample batch: %w", err)
	}
	if len(src) < edges {
		return Batch{}, fmt.Errorf("micro: sample batch: the graph has %d edges, fewer than %d", len(src), edges)
	}
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6e656773)) // "negs"
	b := Batch{Src: src[:edges], Dst: dst[:edges], Rel: rel[:edges], Chunk: make([]int32, edges)}
	for i := range b.Chunk {
		b.Chunk[i] = int32(i / chunk)
	}
	for c := 0; c < (edges+chunk-1)/chunk; c++ {
		ns := make([]int64, negatives)
		for j := range ns {
			if rng.Float64() < degreeFrac {
				e := rng.IntN(len(src))
				ns[j] = src[e]
				if j%2 == 1 {
					ns[j] = dst[e]
				}
			} else {
				ns[j] = rng.Int64N(p.Nodes)
			}
		}
		b.Neg = append(b.Neg, ns)
	}
	return b, nil
}
