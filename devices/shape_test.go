package devices

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTrainShapeDifferences(t *testing.T) {
	base := TrainShape{Model: "dot", Dim: 128, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 20800}
	tests := []struct {
		name string
		run  func(*TrainShape)
		want []string
	}{
		{"same", func(*TrainShape) {}, nil},
		{"model case-insensitive", func(s *TrainShape) { s.Model = "Dot" }, nil},
		{"dim and rows", func(s *TrainShape) { s.Dim, s.Rows = 64, 10400 }, []string{"d 128 → 64 (0.50×)", "partition rows 20800 → 10400 (0.50×)"}},
		{"model", func(s *TrainShape) { s.Model = "complex" }, []string{"model dot → complex"}},
		{"batch negatives chunk workers", func(s *TrainShape) { s.Batch, s.Negatives, s.Chunk, s.Workers = 5000, 50, 50, 1 },
			[]string{"batch 10000 → 5000 (0.50×)", "negatives 100 → 50 (0.50×)", "chunk 100 → 50 (0.50×)", "workers 2 → 1 (0.50×)"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			run := base
			tc.run(&run)
			assert.Equal(t, tc.want, base.Differences(run))
		})
	}
}

// A calibrated profile: an edge rate alone (rows and FLOPs folded into
// it) with the shape it was measured at; it round-trips through YAML.
func TestTrainShapeProfile(t *testing.T) {
	p, err := Preset("p3.2xlarge")
	require.NoError(t, err)
	p.CPU.Train = CPUTrain{Dot: TrainCost{Edges: 915e3}}
	p.CPU.TrainShape = &TrainShape{Model: "dot", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 10400}
	require.NoError(t, p.Validate())
	data, err := p.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(data), "train_shape:")
	assert.NotContains(t, string(data), "PFLOP", "no placeholder rate is written")
	q, err := Parse(data, "calibrated.yaml")
	require.NoError(t, err)
	assert.Equal(t, p.CPU.TrainShape, q.CPU.TrainShape)
	assert.Equal(t, p.CPU.Train, q.CPU.Train)

	bad := []struct {
		name   string
		modify func(*Profile)
		want   string
	}{
		{"rows missing", func(p *Profile) { p.CPU.TrainShape.Rows = 0 }, "cpu.train_shape.partition_rows: must be at least 1"},
		{"model missing", func(p *Profile) { p.CPU.TrainShape.Model = "" }, "missing required field cpu.train_shape.model"},
		{"rows bandwidth without flops", func(p *Profile) { p.CPU.Train.Dot.RowBW = 1e9 }, "cpu.train.dot: give edges alone"},
		{"flops without edges", func(p *Profile) { p.CPU.Train.Dot = TrainCost{FLOPS: 1e9} }, "cpu.train.dot: give edges alone"},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			s := *p.CPU.TrainShape
			q.CPU.TrainShape = &s
			tc.modify(&q)
			err := q.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestCPUTrainModels: every named model has its own cost and one PBG pair
// the pair's; Set, For and Measured agree, and the YAML round-trips.
func TestCPUTrainModels(t *testing.T) {
	var tr CPUTrain
	for i, m := range TrainModels {
		tr.Set(m, TrainCost{Edges: EdgeRate(1000 * (i + 1))})
	}
	tr.Set("linear+dot", TrainCost{Edges: 7000})
	for i, m := range TrainModels {
		tc, ok := tr.For(m)
		require.True(t, ok, m)
		assert.Equal(t, EdgeRate(1000*(i+1)), tc.Edges)
	}
	tc, ok := tr.For("linear+dot")
	require.True(t, ok)
	assert.Equal(t, EdgeRate(7000), tc.Edges)
	_, ok = tr.For("linear+cos")
	assert.False(t, ok, "one pair a profile")
	assert.Equal(t, append(slices.Clone(TrainModels), "linear+dot"), tr.Measured())

	p := pbgPreset(t)
	p.CPU.Train = tr
	data, err := p.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(data), "transe-l2:")
	assert.Contains(t, string(data), "pair_model: linear+dot")
	back, err := Parse(data, "round trip")
	require.NoError(t, err)
	assert.Equal(t, tr, back.CPU.Train)
}

// TestCPUTrainBad: the pair's cost needs its model, a named model is not a
// pair, and a pairwise rate goes with the full terms.
func TestCPUTrainBad(t *testing.T) {
	tests := []struct {
		name  string
		train CPUTrain
		want  string
	}{
		{"pair without model", CPUTrain{Pair: TrainCost{Edges: 1}}, "cpu.train.pair: needs cpu.train.pair_model"},
		{"named as a pair", CPUTrain{PairModel: "rotate", Pair: TrainCost{Edges: 1}}, "cpu.train.pair_model: rotate has its own field"},
		{"not a pair", CPUTrain{PairModel: "linear+l3", Pair: TrainCost{Edges: 1}}, `"linear+l3" is not a PBG operator+comparator`},
		{"pair model without cost", CPUTrain{PairModel: "linear+dot"}, "cpu.train.pair: the cost of linear+dot needs at least edges"},
		{"pairwise with an edge rate", CPUTrain{RotatE: TrainCost{Edges: 1, Pairwise: 1}}, "cpu.train.rotate.pairwise: goes with"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := pbgPreset(t)
			p.CPU.Train = tc.train
			assert.ErrorContains(t, p.Validate(), tc.want)
		})
	}
}

func pbgPreset(t *testing.T) Profile {
	p, err := Resolve("pbg-paper")
	require.NoError(t, err)
	return p
}
