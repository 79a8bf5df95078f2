package sim

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

func TestSystemBuffer(t *testing.T) {
	prof, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	const part = 10_000_000_000 // 10 GB
	tests := []struct {
		system  string
		c       int
		staging int
		where   string
		fits    bool
	}{
		{"marius", 4, 2, "CPU", true},  // lookahead block + async-write block: 60 GB ≤ 65.5 GB
		{"marius", 5, 2, "CPU", false}, // 70 GB
		{"pbg", 2, 0, "CPU", true},     // synchronous swaps, no staging
		{"legend", 3, 0, "GPU", false}, // loads into a freed slot, writes synchronous; 30 GB > 16 GB
		{"ge2", 4, 1, "GPU", false},    // async write-back over PCIe
		{"realrun", 4, 1, "CPU", true}, // loads at issue points, one spare write buffer
	}
	for _, tt := range tests {
		t.Run(tt.system, func(t *testing.T) {
			sys, err := LookupSystem(tt.system)
			require.NoError(t, err)
			b := sys.Buffer(prof, tt.c, part)
			assert.Equal(t, tt.c, b.Slots)
			assert.Equal(t, tt.staging, b.Staging)
			assert.Equal(t, int64(tt.c+tt.staging)*part, b.Bytes)
			assert.Equal(t, tt.where, b.Where)
			assert.Equal(t, tt.fits, b.Fits())
		})
	}
}

// TestBufferWarning: a buffer that does not fit, staging included, is
// reported in the Report's warnings.
func TestBufferWarning(t *testing.T) {
	prof, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	sys, err := LookupSystem("marius")
	require.NoError(t, err)
	ds, err := workload.LookupDataset("freebase86m")
	require.NoError(t, err)
	for _, tt := range []struct {
		c    int
		warn bool
	}{{4, false}, {6, true}} { // 8.61 GB partitions at d=400, p=32: (6+2) × 8.61 = 68.9 GB > 61 GiB
		rep, err := Simulate(Scenario{System: sys, Profile: prof, Dataset: ds, Training: DefaultTraining(ds, 400), P: 32, C: tt.c, Ordering: "beta"})
		require.NoError(t, err)
		if tt.warn {
			require.Len(t, rep.Warnings, 1)
			assert.Contains(t, rep.Warnings[0], "6 partitions and 2 staging buffers (68.9 GB) exceeds the CPU memory")
		} else {
			assert.Empty(t, rep.Warnings)
		}
	}
}

// TestResidentMemory: a system that keeps every parameter resident takes
// every node's embedding and Adagrad state in GPU or host memory; the
// engine warns exactly when that does not fit (the same account).
func TestResidentMemory(t *testing.T) {
	prof, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	for _, tt := range []struct {
		system string
		nodes  int64
		where  string
		fits   bool
	}{
		{"in-gpu", 10_000_000, "GPU", true},       // 8 GB of 16 GB
		{"in-gpu", 30_000_000, "GPU", false},      // 24 GB
		{"marius-inmem", 30_000_000, "CPU", true}, // 24 GB of 65.5 GB
		{"dglke", 100_000_000, "CPU", false},      // 80 GB
	} {
		sys, err := LookupSystem(tt.system)
		require.NoError(t, err)
		mem := sys.ResidentMemory(prof, tt.nodes, 100)
		assert.Equal(t, tt.nodes*100*8, mem.Bytes, tt.system)
		assert.Equal(t, tt.where, mem.Where, tt.system)
		assert.Equal(t, tt.fits, mem.Fits(), "%s %d nodes", tt.system, tt.nodes)
		rep, err := Run(Config{System: sys, Profile: prof, Dataset: workload.Dataset{Name: "x", Nodes: tt.nodes, Edges: 200_000, Relations: 1, TrainFraction: 1},
			Training: workload.Training{Model: workload.Dot, Dim: 100, Batch: 50_000, Negatives: 1000}})
		require.NoError(t, err)
		warned := false
		for _, w := range rep.Warnings {
			warned = warned || strings.Contains(w, "exceed "+tt.where+" memory")
		}
		assert.Equal(t, !tt.fits, warned, "%s %d nodes: %v", tt.system, tt.nodes, rep.Warnings)
	}
	assert.Len(t, InMemorySystems(), 3)
	for _, s := range InMemorySystems() {
		assert.False(t, s.Partitioned, s.Name)
	}
}

// TestRelationMemoryWarning: the realrun system keeps the relations'
// parameters resident with their Adagrad state: a PBG linear pair's two
// operators of d² floats a relation (fb15k's 1,345 at d = 400: 3.4 GB)
// exceed a 1 GB machine that holds the buffer.
func TestRelationMemoryWarning(t *testing.T) {
	prof := filepath.Join(t.TempDir(), "cal.yaml")
	require.NoError(t, os.WriteFile(prof, []byte(`name: small
disk: {read: 400 MB/s, write: 400 MB/s, latency: 1ms}
pcie: {h2d: 0, d2h: 0}
gpu: {count: 0}
cpu:
  workers: 2
  memory: 1 GB
  batch_edges: 1M edges/s
  gather_bandwidth: 6 GB/s
  train:
    pair_model: linear+dot
    pair: {edges: 100k edges/s}
    dot: {edges: 100k edges/s}
`), 0o644))
	for _, tc := range []struct {
		model string
		warn  bool
	}{{"linear+dot", true}, {"dot", false}} {
		out, err := Request{System: "realrun", Device: prof, Dataset: "fb15k", Model: tc.model, Dim: 400, P: 4, C: 2, Orderings: "beta"}.Predict()
		require.NoError(t, err)
		var found bool
		for _, w := range out.Results[0].Warnings {
			found = found || strings.Contains(w, "relations' resident parameters with their Adagrad state (3.4 GB: 1345 relations of 320000 floats)")
		}
		assert.Equal(t, tc.warn, found, "%s: %v", tc.model, out.Results[0].Warnings)
	}
	assert.Equal(t, int64(2*400*400*1345*4*2), workload.Model("linear+dot").ResidentRelationBytes(400, 1345))
}
