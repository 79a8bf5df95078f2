package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// withResident is cfg's toy graph with r more nodes, all of resident
// entity types: the partitions keep their rows.
func withResident(cfg Config, r int64) Config {
	cfg.Dataset.Nodes += r
	cfg.Dataset.ResidentNodes = r
	return cfg
}

// TestResidentTable: for every partitioned system model, a graph with
// resident entity types trains the same Plan on partitions of its
// partitioned nodes, and adds its resident table once to the reads and
// once to the writes (the disk's or the system's I/O link moves exactly
// those bytes more), never to the counts; without resident nodes the
// Report is exactly the untyped one.
func TestResidentTable(t *testing.T) {
	for _, tt := range []struct {
		system string
		p, c   int
		// read and write name the resources that move the table.
		read, write string
	}{
		{"marius", 4, 2, report.DiskRead, report.DiskWrite},
		{"pbg", 4, 2, report.DiskRead, report.DiskWrite},
		{"legend", 4, 3, report.SSDGPU, report.SSDGPU},
		{"ge2", 4, 4, report.PCIeH2D, report.PCIeD2H},
		{"realrun", 4, 2, report.DiskRead, report.DiskWrite},
		{"realrun-cuda", 4, 2, report.DiskRead, report.DiskWrite},
		{"realrun-cuda-host", 4, 2, report.DiskRead, report.DiskWrite},
	} {
		t.Run(tt.system, func(t *testing.T) {
			ordering := "beta"
			if tt.system == "legend" {
				ordering = "legend"
			}
			base := toyConfig(t, tt.system, tt.p, tt.c, ordering, true)
			base.Profile.CPU.Train = devices.CPUTrain{Dot: devices.TrainCost{Edges: 100}} // the CPU engine's rate
			base.Profile.CPU.Checksum = 1e4                                               // the engine checksums the table too
			untyped, err := Run(base)
			require.NoError(t, err)
			zero := withResident(base, 0)
			same, err := Run(zero)
			require.NoError(t, err)
			assert.Equal(t, untyped, same, "no resident nodes: today's Report")
			assert.Zero(t, same.ResidentBytes)

			typed, err := Run(withResident(base, 3))
			require.NoError(t, err)
			want := base.System.PartitionBytes(3, 1, base.Training.Dim)
			assert.Equal(t, want, typed.ResidentBytes)
			assert.Equal(t, untyped.PartitionBytes, typed.PartitionBytes, "the partitions hold the partitioned nodes")
			assert.Equal(t, untyped.Counts, typed.Counts)
			assert.Equal(t, untyped.ReadBytes+want, typed.ReadBytes, "read once")
			assert.Equal(t, untyped.WriteBytes+want, typed.WriteBytes, "written once")
			before, after := bytesOf(untyped.Resources), bytesOf(typed.Resources)
			if tt.read == tt.write {
				assert.Equal(t, before[tt.read]+2*want, after[tt.read])
			} else {
				assert.Equal(t, before[tt.read]+want, after[tt.read])
				assert.Equal(t, before[tt.write]+want, after[tt.write])
			}
			assert.Greater(t, typed.EpochSeconds, untyped.EpochSeconds, "the table's read and write take the device's time")
			assert.GreaterOrEqual(t, typed.StallSeconds, untyped.StallSeconds)
			assert.GreaterOrEqual(t, typed.BoundSeconds, untyped.BoundSeconds)
		})
	}
}

// bytesOf are a report's bytes by resource.
func bytesOf(rs []report.ResourceUsage) map[string]int64 {
	out := map[string]int64{}
	for _, u := range rs {
		out[u.Name] += u.Bytes
	}
	return out
}

// TestResidentHandComputed: TestPBGHandComputed's epoch (10 s, stall 2 s)
// with a resident table of 1000 bytes: read first at 1000 B/s (1 s more,
// a stall: no bucket trains before it is in memory) and written after the
// final flush at 500 B/s (2 s more).
func TestResidentHandComputed(t *testing.T) {
	cfg := withResident(toyConfig(t, "pbg", 2, 2, "beta", true), 1) // 1 × 125 × 4 × 2 = 1000 bytes
	cfg.System.RowwiseAdagrad = false
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(1000), r.ResidentBytes)
	assert.InDelta(t, 13, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 3, r.StallSeconds, 1e-3)
	assert.InDelta(t, 4, r.ComputeSeconds, 1e-3)
	assert.Equal(t, int64(2*1000+1000), r.ReadBytes)
	assert.Equal(t, int64(2*1000+1000), r.WriteBytes)
}

// TestResidentPadded: the real engine's resident.bin, padded like a
// partition file, is what Config.ResidentBytes gives; it replaces the
// table's computed size wherever the simulation uses it.
func TestResidentPadded(t *testing.T) {
	cfg := withResident(toyConfig(t, "marius", 4, 2, "beta", true), 3)
	cfg.ResidentBytes = 4096
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.Equal(t, int64(4096), r.ResidentBytes)
	base, err := Run(toyConfig(t, "marius", 4, 2, "beta", true))
	require.NoError(t, err)
	assert.Equal(t, base.ReadBytes+4096, r.ReadBytes)
	cfg.Dataset.ResidentNodes, cfg.Dataset.Nodes = 0, 4
	r, err = Run(cfg)
	require.NoError(t, err)
	assert.Zero(t, r.ResidentBytes, "no resident nodes: no table, whatever the override")
}

// TestResidentCheckpoints: every checkpoint inside the epoch writes the
// resident table beside the dirty partitions (as the real engine does);
// the Plan's reads and writes keep it once each.
func TestResidentCheckpoints(t *testing.T) {
	base := toyConfig(t, "marius", 4, 2, "beta", true)
	iv, err := workload.ParseInterval("4b")
	require.NoError(t, err)
	base.Checkpoint = iv
	untyped, err := Run(base)
	require.NoError(t, err)
	typed, err := Run(withResident(base, 3))
	require.NoError(t, err)
	require.Positive(t, untyped.InsideCheckpoints)
	assert.Equal(t, untyped.InsideCheckpoints, typed.InsideCheckpoints)
	assert.Equal(t, untyped.CheckpointBytes+int64(typed.InsideCheckpoints)*typed.ResidentBytes, typed.CheckpointBytes)
	assert.Equal(t, untyped.WriteBytes+typed.ResidentBytes, typed.WriteBytes)
}

// TestResidentMemoryCheck: the resident table lives beside the buffer in
// its memory (host memory on the disk path, GPU memory for a GPU buffer):
// a capacity that fits without it is refused (warned in the Report,
// unfit in a sweep) once the table is added.
func TestResidentMemoryCheck(t *testing.T) {
	for _, tt := range []struct {
		system string
		c      int
		limit  func(*devices.Profile, int64)
	}{
		{"marius", 2, func(p *devices.Profile, n int64) { p.CPU.Memory = devices.Bytes(n) }},
		{"realrun-cuda-host", 2, func(p *devices.Profile, n int64) { p.CPU.Memory = devices.Bytes(n) }},
	} {
		t.Run(tt.system, func(t *testing.T) {
			base := toyConfig(t, tt.system, 4, tt.c, "beta", true)
			buf := base.System.Buffer(base.Profile, tt.c, int64(base.partitionBytes()))
			tt.limit(&base.Profile, buf.Bytes) // exactly the buffer
			r, err := Run(base)
			require.NoError(t, err)
			assert.Empty(t, r.Warnings, "the buffer alone fits")

			typed := withResident(base, 3)
			with := buf.WithResident(typed.System.ResidentTableBytes(typed.Dataset, typed.Training.Dim))
			assert.Equal(t, buf.Bytes+3000, with.Bytes)
			assert.Equal(t, int64(3000), with.Resident)
			with.Limit = buf.Bytes
			assert.False(t, with.Fits())
			r, err = Run(typed)
			require.NoError(t, err)
			require.NotEmpty(t, r.Warnings)
			assert.Contains(t, r.Warnings[0], "with the resident table of 0.000 GB")
			assert.Contains(t, r.Warnings[0], "exceeds the "+buf.Where+" memory")
		})
	}
}

// TestResidentOnTheGPU: a GPU buffer's system keeps the resident table in
// GPU memory too: the memory left to a batch shrinks by its size.
func TestResidentOnTheGPU(t *testing.T) {
	for _, sys := range []string{"legend", "ge2"} {
		ordering := map[string]string{"legend": "legend", "ge2": "cover"}[sys]
		c := map[string]int{"legend": 3, "ge2": 4}[sys]
		base := toyConfig(t, sys, 4, c, ordering, true)
		typed := withResident(base, 3)
		assert.Equal(t, "GPU", typed.System.BufferIn())
		assert.InDelta(t, gpuResident(base, base.partitionBytes())+3000, gpuResident(typed, typed.partitionBytes()), 0)
	}
}

// TestResidentGraph: a typed graph's resident nodes are its dataset's;
// its partitions hold the others, which must be at least p.
func TestResidentGraph(t *testing.T) {
	g := &Graph{Name: "typed", Nodes: 50, ResidentNodes: 40, Relations: 2, TrainEdges: 10, Count: func(ps []int) ([]Histogram, error) {
		out := make([]Histogram, len(ps))
		for k, p := range ps {
			out[k] = Histogram{P: p, Edges: make([][]int64, p)}
			for i := range out[k].Edges {
				out[k].Edges[i] = make([]int64, p)
			}
			out[k].Edges[0][0] = 10
		}
		return out, nil
	}}
	require.NoError(t, g.Check())
	ds := g.Dataset()
	assert.EqualValues(t, 40, ds.ResidentNodes)
	assert.EqualValues(t, 10, ds.PartitionedNodes())
	_, err := g.Histogram(10)
	require.NoError(t, err)
	_, err = g.Histogram(11)
	assert.ErrorContains(t, err, "p = 11: more partitions than the 10 partitioned nodes of typed (40 more are resident)")
	g.ResidentNodes = 51
	assert.ErrorContains(t, g.Check(), "51 resident nodes of 50")

	g.ResidentNodes = 40
	q := Request{System: "marius", Device: "p3.2xlarge", Graph: g, P: 2, C: 2, Orderings: "beta", Dim: 8}
	out, err := q.Predict()
	require.NoError(t, err)
	assert.EqualValues(t, 40, out.ResidentNodes)
	assert.EqualValues(t, 40*8*8, out.ResidentBytes)
	assert.EqualValues(t, 5*8*8, out.PartitionBytes)
	q.ResidentNodes = 3
	_, err = q.Predict()
	assert.ErrorContains(t, err, "{ResidentNodes} 3: the graph typed gives its own resident nodes (40)")
}

// TestResidentPBG: PyTorch-BigGraph keeps unpartitioned entity types in
// memory as shared parameters (row-wise Adagrad), beside the relations'.
func TestResidentPBG(t *testing.T) {
	ds := workload.Dataset{Name: "g", Nodes: 1000, Relations: 3, ResidentNodes: 100}
	tr := workload.Training{Model: workload.DistMult, Dim: 10}
	none := ds
	none.ResidentNodes = 0
	assert.Equal(t, SharedParamBytes(none, tr)+100*11*4, SharedParamBytes(ds, tr))
}
