package workload

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModelCost checks each operator's and comparator's terms at d = 10
// against values computed by hand from the rule (T = 10).
func TestModelCost(t *testing.T) {
	tests := []struct {
		m    Model
		want ModelCost
	}{
		{Dot, ModelCost{PairFLOPs: 60}},
		{DistMult, ModelCost{PairFLOPs: 60, QueryFLOPs: 50, RelBytes: 40}},
		{ComplEx, ModelCost{PairFLOPs: 60, QueryFLOPs: 110, RelBytes: 40}},
		// TransE: pairwise, no GEMM; the translation's 3d.
		{TransEL1, ModelCost{PairOps: 90, QueryFLOPs: 30, RelBytes: 40}},
		// l2 from the product: 6d a pair, 4d a row, 6 + T a score.
		{TransEL2, ModelCost{PairFLOPs: 60, RowFLOPs: 40, ScoreFLOPs: 16, QueryFLOPs: 30, RelBytes: 40}},
		// RotatE: (d/2)(15 + 2T) = 5·35 a pair; (d/2)(21 + 2T) = 5·41 a
		// query; d/2 phases.
		{RotatE, ModelCost{PairOps: 175, QueryFLOPs: 205, RelBytes: 20}},
		// PBG pairs: two operators a relation.
		{"linear+dot", ModelCost{PairFLOPs: 60, QueryFLOPs: 600, RelBytes: 2 * 100 * 4}},
		{"affine+cos", ModelCost{PairFLOPs: 60, RowFLOPs: 90, QueryFLOPs: 620, RelBytes: 2 * 110 * 4}},
		{"none+squared_l2", ModelCost{PairFLOPs: 60, RowFLOPs: 40, ScoreFLOPs: 6}},
		{"diagonal+l1", ModelCost{PairOps: 90, QueryFLOPs: 50, RelBytes: 80}},
		{"complex_diagonal+l2", ModelCost{PairFLOPs: 60, RowFLOPs: 40, ScoreFLOPs: 16, QueryFLOPs: 110, RelBytes: 80}},
		{"translation+cos", ModelCost{PairFLOPs: 60, RowFLOPs: 90, QueryFLOPs: 30, RelBytes: 80}},
	}
	for _, tt := range tests {
		t.Run(string(tt.m), func(t *testing.T) {
			require.True(t, tt.m.Valid())
			assert.Equal(t, tt.want, tt.m.Cost(10))
		})
	}
}

// TestTrainingCostObjective checks the loss's and the regulariser's terms.
func TestTrainingCostObjective(t *testing.T) {
	tests := []struct {
		name        string
		m           Model
		o           Objective
		score, edge float64
	}{
		{"softmax", Dot, Objective{}, 0, 0},
		{"ranking", Dot, Objective{Loss: Ranking, Margin: 1}, 0, 0},
		{"logistic", Dot, Objective{Loss: Logistic}, 10, 0},
		{"logistic adversarial", TransEL2, Objective{Loss: Logistic, Adversarial: 1}, 16 + 20, 0},
		// w = 2d + RelWidth(d) = 30 (distmult), 4w and 6w.
		{"l2", DistMult, Objective{Regularizer: RegL2, RegCoef: 1e-3}, 0, 120},
		{"n3", ComplEx, Objective{Regularizer: RegN3, RegCoef: 1e-3}, 0, 180},
		// linear+dot: w = 20 + 200.
		{"l2 linear", "linear+dot", Objective{Regularizer: RegL2, RegCoef: 1e-3}, 0, 880},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := Training{Model: tt.m, Dim: 10, Objective: tt.o}.Cost()
			assert.Equal(t, tt.score, c.ScoreFLOPs)
			assert.Equal(t, tt.edge, c.EdgeFLOPs)
		})
	}
}

// TestChunkCost checks a chunk's terms by hand (n = 4 edges, m = 5
// negatives, d = 10) and that dot keeps the rule before it: (2n + m)·d·4
// bytes and 12·n·m·d FLOPs.
func TestChunkCost(t *testing.T) {
	tests := []struct {
		m    Model
		want ChunkCost
	}{
		{Dot, ChunkCost{Edges: 4, Bytes: 13 * 40, FLOPs: 12 * 4 * 5 * 10}},
		// + 4 relation rows of 40 B; + 2·4·50 FLOPs of the diagonal.
		{DistMult, ChunkCost{Edges: 4, Bytes: 13*40 + 160, FLOPs: 2400 + 400}},
		// 2·(20·60 + 9·40 + 20·16 + 4·30) = 4000; pairwise none.
		{TransEL2, ChunkCost{Edges: 4, Bytes: 680, FLOPs: 4000}},
		// 2·4·30 FLOPs of the translation; 2·20·90 pairwise operations.
		{TransEL1, ChunkCost{Edges: 4, Bytes: 680, FLOPs: 240, Pairwise: 3600}},
		{RotatE, ChunkCost{Edges: 4, Bytes: 520 + 80, FLOPs: 2 * 4 * 205, Pairwise: 2 * 20 * 175}},
		// linear: 4 rows of d² floats each way (800 B a relation).
		{"linear+dot", ChunkCost{Edges: 4, Bytes: 520 + 4*800, FLOPs: 2400 + 2*4*600}},
	}
	for _, tt := range tests {
		t.Run(string(tt.m), func(t *testing.T) {
			tr := Training{Model: tt.m, Dim: 10, Batch: 4, Negatives: 5, ChunkSize: 4}
			assert.Equal(t, tt.want, tr.ChunkCost(4))
		})
	}
}

// TestBatchFLOPs: dot's batch arithmetic is 12·b·N·d exactly, as before
// the rule priced each model; a batch sums its chunks and a remainder.
func TestBatchFLOPs(t *testing.T) {
	tr := Training{Model: Dot, Dim: 400, Batch: 50_000, Negatives: 1000}
	assert.Equal(t, 12*50_000.0*1000*400, tr.BatchFLOPs(50_000))
	tr = Training{Model: TransEL1, Dim: 10, Batch: 10, Negatives: 5, ChunkSize: 4}
	c := tr.BatchCost(10) // chunks of 4, 4 and 2
	assert.Equal(t, 10.0, c.Edges)
	assert.Equal(t, 2*10*5*90.0, c.Pairwise)
	assert.Equal(t, 2*10*30.0, c.FLOPs)
	assert.Equal(t, (2*10+3*5)*40.0+10*40, c.Bytes)
	assert.Equal(t, c.FLOPs+c.Pairwise, tr.BatchFLOPs(10))
	assert.Equal(t, (240+3600)/4.0, Training{Model: TransEL1, Dim: 10, Batch: 4, Negatives: 5, ChunkSize: 4}.PerEdgeFLOPs())
}

func TestResidentRelationBytes(t *testing.T) {
	assert.Equal(t, int64(0), Dot.ResidentRelationBytes(100, 1345))
	assert.Equal(t, int64(100*1345*4*2), DistMult.ResidentRelationBytes(100, 1345))
	assert.Equal(t, int64(50*10*4*2), RotatE.ResidentRelationBytes(100, 10))
	assert.Equal(t, int64(2*100*100*10*4*2), Model("linear+dot").ResidentRelationBytes(100, 10))
}
