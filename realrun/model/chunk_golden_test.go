//go:build amd64 && !amd64.v3

package model

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
)

// chunkGoldens are FNV-1a hashes of ChunkGrad's loss and gradients (the
// bits) over every model, every objective of sidesObjectives and three
// shapes, per level, as computed before ChunkGrad became ChunkGradSides
// (issue 44): the refactoring changed no bit. Only for amd64 builds
// without GOAMD64=v3, where the compiler may fuse the Go kernels'
// multiply-adds.
var chunkGoldens = map[Level]uint64{
	Generic: 0x6cceb9f6b91d9dc7,
	AVX2:    0xbb37e999bbccf9bc,
	AVX512:  0xc429a89ab21da806,
}

// TestChunkGradGolden: ChunkGrad computes the same bits as before, at
// every supported level.
func TestChunkGradGolden(t *testing.T) {
	objs := sidesObjectives()
	for _, l := range SupportedLevels() {
		prev := SetLevel(l)
		h := fnv.New64a()
		var b [4]byte
		put := func(v float32) {
			binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
			h.Write(b[:])
		}
		for _, k := range allModels() {
			for _, o := range objs {
				for _, s := range [][3]int{{18, 7, 33}, {34, 20, 40}, {100, 10, 50}} {
					rng := rand.New(rand.NewPCG(uint64(s[0]), uint64(len(k))))
					c := newChunkK(rng, k, s[0], s[1], s[2], 0.5)
					put(ChunkGrad(k, o, s[0], c.S, c.R, c.D, c.N, s[1], s[2], c.gS, c.gR, c.gD, c.gN, NewScratch()))
					for _, a := range [][]float32{c.gS, c.gR, c.gD, c.gN} {
						for _, v := range a {
							put(v)
						}
					}
				}
			}
		}
		SetLevel(prev)
		if want, ok := chunkGoldens[l]; ok {
			assert.Equal(t, want, h.Sum64(), "level %s: got %#x", l, h.Sum64())
		}
	}
}
