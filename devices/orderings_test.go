package devices

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderingsYAML is minimal with the CPU engine's dot rate, its spread and
// two orderings' own rates.
const orderingsYAML = `name: tiny
disk: {read: 400 MB/s, write: 400 MB/s}
cpu:
  workers: 2
  memory: 8 GiB
  batch_edges: 1M edges/s
  gather_bandwidth: 1 GB/s
  train:
    dot:
      edges: 1M edges/s
      orderings:
        beta: 750k edges/s
        hilbert: 600k edges/s
spread:
  cpu.train.dot.edges: [900k edges/s, 1.1M edges/s]
`

func TestOrderingRatesParse(t *testing.T) {
	p, err := Parse([]byte(orderingsYAML), "o.yaml")
	require.NoError(t, err)
	assert.Equal(t, map[string]EdgeRate{"beta": 750e3, "hilbert": 600e3}, p.CPU.Train.Dot.Orderings)

	// Written back and read again, it is the same profile.
	y, err := p.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(y), "orderings:\n")
	back, err := Parse(y, "back")
	require.NoError(t, err)
	assert.Equal(t, p, back)
}

func TestForOrdering(t *testing.T) {
	p, err := Parse([]byte(orderingsYAML), "o.yaml")
	require.NoError(t, err)
	tests := []struct {
		ordering, model string
		scaled          bool
		edges           EdgeRate
		spread          Range
	}{
		{"beta", "dot", true, 750e3, Range{675e3, 825e3}},
		{"hilbert", "dot", true, 600e3, Range{540e3, 660e3}},
		{"legend", "dot", false, 1e6, Range{900e3, 1.1e6}},
		{"beta", "complex", false, 1e6, Range{900e3, 1.1e6}},
	}
	for _, tt := range tests {
		t.Run(tt.ordering+"/"+tt.model, func(t *testing.T) {
			got, scaled := p.ForOrdering(tt.ordering, tt.model)
			assert.Equal(t, tt.scaled, scaled)
			assert.InDelta(t, float64(tt.edges), float64(got.CPU.Train.Dot.Edges), 1e-6)
			r, ok := got.Spread.Of("cpu.train.dot.edges")
			require.True(t, ok)
			assert.InDelta(t, tt.spread.Low, r.Low, 1e-6)
			assert.InDelta(t, tt.spread.High, r.High, 1e-6)
			assert.Empty(t, got.CPU.Train.Dot.Orderings, "applied once, the orderings' rates are gone")
			require.NoError(t, got.Validate())
			again, scaled := got.ForOrdering(tt.ordering, tt.model)
			assert.False(t, scaled)
			assert.Equal(t, got, again, "applying it again changes nothing")
		})
	}
	// p itself is unchanged.
	assert.Equal(t, EdgeRate(1e6), p.CPU.Train.Dot.Edges)
	assert.Len(t, p.CPU.Train.Dot.Orderings, 2)
	r, _ := p.Spread.Of("cpu.train.dot.edges")
	assert.Equal(t, Range{900e3, 1.1e6}, r)
}

func TestOrderingRatesErrors(t *testing.T) {
	tests := []struct{ name, train, want string }{
		{"negative", "dot: {edges: 1M edges/s, orderings: {beta: -5 edges/s}}", "cpu.train.dot.orderings.beta"},
		{"zero", "dot: {edges: 1M edges/s, orderings: {beta: 0}}", "cpu.train.dot.orderings.beta: must be a positive edge rate"},
		{"not folded", "dot: {edges: 1M edges/s, row_bandwidth: 1 GB/s, flops: 1 TFLOPS, orderings: {beta: 5k edges/s}}", "cpu.train.dot.orderings: goes with an edge rate alone"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y := "name: tiny\ndisk: {read: 400 MB/s, write: 400 MB/s}\ncpu: {workers: 2, memory: 8 GiB, batch_edges: 1M edges/s, gather_bandwidth: 1 GB/s, train: {" + tt.train + "}}\n"
			_, err := Parse([]byte(y), "bad.yaml")
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}
