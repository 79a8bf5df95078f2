package split

import (
	"testing"

	"github.com/tierflow/tierflow/realrun/gnn/block"
)

// benchBatch is a batch of 1024 training nodes with fanouts 10, 25 of a
// generated ogbn-products-shaped graph (its default scale).
func benchBatch(b *testing.B) *block.Batch {
	return sample(genGraph(b, "ogbn-products", 0), 1024, []int{10, 25}, 1)
}

func BenchmarkSplit(b *testing.B) {
	batch := benchBatch(b)
	for _, m := range Methods {
		b.Run(string(m), func(b *testing.B) {
			if m.UsesMETIS() {
				needMETIS(b)
			}
			for b.Loop() {
				if _, err := Split(batch, 8, m, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkREGGraph(b *testing.B) {
	last := &benchBatch(b).Blocks[1]
	for b.Loop() {
		regGraph(last)
	}
}

func BenchmarkMicro(b *testing.B) {
	batch := benchBatch(b)
	parts := rangeParts(len(batch.Output()), 8)
	bd := NewBuilder()
	var into *block.Batch
	b.ReportAllocs()
	for b.Loop() {
		for _, p := range parts {
			into = bd.Micro(batch, p, into)
		}
	}
}

// BenchmarkGPMETIS times one gpmetis call on REG's graph of benchBatch
// into 8 parts: writing the file, the program's run, reading the parts.
func BenchmarkGPMETIS(b *testing.B) {
	needMETIS(b)
	g := regGraph(&benchBatch(b).Blocks[1])
	for b.Loop() {
		if _, err := gpmetis(g, 8, 1); err != nil {
			b.Fatal(err)
		}
	}
}
