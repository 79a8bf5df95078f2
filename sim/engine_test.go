package sim

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/workload"
)

// toyProfile has round numbers: partitions of X bytes read in 1 s and
// written in 2 s, no latency.
func toyProfile(duplex bool) devices.Profile {
	return devices.Profile{
		Name:     "toy",
		Disk:     devices.Disk{Read: 1000, Write: 500, FullDuplex: duplex},
		PCIe:     devices.PCIe{H2D: 1e12, D2H: 1e12},
		SSDToGPU: devices.Direct{Read: 1000, Write: 500},
		GPU:      devices.GPU{Name: "toy", Count: 1, Memory: 1e12, FLOPS: 1e15, MemoryBW: 1e15, BatchEdges: 1e12},
		CPU:      devices.CPU{Workers: 1, Memory: 1e12, BatchEdges: 100, GatherBW: 1e15},
	}
}

// toyWorkload: 2 nodes per partition at d=125 → 2·125·4·2 = 2000 bytes;
// hmm, we want 1000 bytes: 1 node per partition, d=125.
func toyConfig(t *testing.T, sys string, p, c int, ordering string, duplex bool) Config {
	t.Helper()
	s, err := LookupSystem(sys)
	require.NoError(t, err)
	var pl *orderings.Plan
	if s.Partitioned {
		pl, err = orderings.Build(ordering, p, c, orderings.Belady, 0)
		require.NoError(t, err)
	}
	edges := make([]int64, p*p)
	for i := range edges {
		edges[i] = 100 // one batch of 100 edges per bucket: 1 s of CPU at 100 edges/s
	}
	return Config{
		System:      s,
		Profile:     toyProfile(duplex),
		Dataset:     workload.Dataset{Name: "toy", Nodes: int64(p), Edges: int64(100 * p * p), TrainFraction: 1, Model: workload.Dot},
		Training:    workload.Training{Model: workload.Dot, Dim: 125, Batch: 100, Negatives: 1},
		Plan:        pl,
		BucketEdges: edges,
	}
}

func TestPartitionBytesOfToy(t *testing.T) {
	assert.Equal(t, int64(1000), workload.PartitionBytes(4, 4, 125, false))
}

// TestPBGHandComputed: p=2, c=2, synchronous, no prefetch. Load 0 takes
// 1 s; bucket (0,0) computes 1 s (+ negligible GPU); only then is load 1
// issued (1 s); buckets (0,1), (1,0), (1,1) take 1 s each; the final flush
// writes two partitions of 1000 bytes at 500 B/s, sharing the write
// bandwidth: 4 s. Epoch ≈ 1 + 1 + 1 + 3 + 4 = 10 s, stall 2 s.
func TestPBGHandComputed(t *testing.T) {
	cfg := toyConfig(t, "pbg", 2, 2, "beta", true)
	cfg.System.RowwiseAdagrad = false // keep the toy's 1000-byte partitions
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 10, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 2, r.StallSeconds, 1e-3)
	assert.InDelta(t, 4, r.ComputeSeconds, 1e-3)
	assert.Equal(t, 4, r.Batches)
	assert.Equal(t, 2, r.Loads)
	assert.Equal(t, int64(2000), r.ReadBytes)
}

// TestMariusPrefetchHandComputed: the same with Marius' prefetch: load 1
// is issued as soon as load 0 is done (its issue point is 0) and overlaps
// bucket (0,0): epoch = 1 + 4 + 4 = 9 s, stall 1 s.
func TestMariusPrefetchHandComputed(t *testing.T) {
	cfg := toyConfig(t, "marius", 2, 2, "beta", true)
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 9, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 1, r.StallSeconds, 1e-3)
	cfg.System.Prefetch = false
	r2, err := Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 10, r2.EpochSeconds, 1e-3)
}

// TestSharedDiskSerialisesReadsAndWrites: with a shared disk the eviction
// write and the next load share bandwidth.
func TestSharedDiskSlowerThanDuplex(t *testing.T) {
	io := func(duplex bool) Config {
		cfg := toyConfig(t, "marius", 6, 3, "beta", duplex)
		cfg.Profile.CPU.BatchEdges = 1e9 // compute negligible: I/O decides
		return cfg
	}
	dup, err := Run(io(true))
	require.NoError(t, err)
	shared, err := Run(io(false))
	require.NoError(t, err)
	assert.Greater(t, shared.EpochSeconds, dup.EpochSeconds)
	assert.Equal(t, dup.ReadBytes, shared.ReadBytes)
}

func TestResidentSystems(t *testing.T) {
	cfg := toyConfig(t, "dglke", 2, 2, "", true)
	cfg.Dataset.Edges = 1000
	r, err := Run(cfg)
	require.NoError(t, err)
	// 10 batches of 100 edges, 1 s of CPU each, synchronous.
	assert.InDelta(t, 10, r.EpochSeconds, 1e-3)
	assert.Zero(t, r.StallSeconds)
	assert.Equal(t, 10, r.Batches)
}

func TestBoundAndMonotoneInBandwidth(t *testing.T) {
	for _, sys := range []string{"marius", "pbg", "legend", "ge2"} {
		for _, ord := range []string{"beta", "hilbert", "legend", "cover"} {
			s, _ := LookupSystem(sys)
			p, c := 16, 4
			if s.Capacity != 0 {
				c = s.Capacity
			}
			if _, err := orderings.Build(ord, p, c, orderings.Belady, 0); err != nil {
				continue
			}
			cfg := toyConfig(t, sys, p, c, ord, sys != "legend")
			r, err := Run(cfg)
			require.NoError(t, err)
			assert.GreaterOrEqual(t, r.EpochSeconds+1e-9, r.BoundSeconds, "%s/%s", sys, ord)
			fast := cfg
			fast.Profile.Disk.Read *= 2
			fast.Profile.Disk.Write *= 2
			fast.Profile.SSDToGPU.Read *= 2
			fast.Profile.SSDToGPU.Write *= 2
			fast.Profile.PCIe.H2D *= 2
			fast.Profile.PCIe.D2H *= 2
			r2, err := Run(fast)
			require.NoError(t, err)
			assert.LessOrEqual(t, r2.EpochSeconds, r.EpochSeconds+1e-9, "%s/%s", sys, ord)
		}
	}
}

func TestTimelineCoversEpoch(t *testing.T) {
	r, err := Run(toyConfig(t, "marius", 8, 3, "hilbert", true))
	require.NoError(t, err)
	require.Len(t, r.Timeline, 100)
	var gpu float64
	for _, pt := range r.Timeline {
		gpu += pt.GPU * (pt.End - pt.Start)
		assert.True(t, pt.GPU >= 0 && pt.GPU <= 1 && !math.IsNaN(pt.GPU))
	}
	assert.InDelta(t, r.GPUUtilization*r.EpochSeconds, gpu, 1e-6)
}

// gpuToy makes GPU-built batches of 100 edges take 1 s.
func gpuToy(cfg Config) Config {
	cfg.Profile.GPU.BatchEdges = 100
	return cfg
}

// TestLegendHandComputed: p=4 with the BETA order on Legend's GPU buffer
// of 3 (time-shared NVMe: reads 1 s, writes 2 s per partition; 1 s per
// bucket). Fill: loads of 0, 1, 2 finish at 1, 2, 3 s and buckets
// (0,0), (0,1), (0,2) start as each arrives; the other six buckets of the
// first state run until 10 s. Load 3 evicts 2 (used again last) with no
// window: write 2 s + read 1 s, stall 10–13. Five buckets run 13–18; load
// 2 again may start once (3,0) is done (16 s): write of 0 16–18, read
// 18–19, stall 18–19. The last two buckets run 19–21; the final flush
// writes three partitions together: 6 s. Epoch 27 s, stall 1 + 3 + 1 = 5 s.
func TestLegendHandComputed(t *testing.T) {
	cfg := gpuToy(toyConfig(t, "legend", 4, 3, "beta", false))
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.Equal(t, 2, r.Swaps)
	assert.InDelta(t, 27, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 5, r.StallSeconds, 1e-3)
	assert.InDelta(t, 16, r.ComputeSeconds, 1e-3)
}

// TestGE2HandComputed: p=4, c=4 (one COVER line holds everything): four
// fill loads over PCIe at 1000 B/s (1 s each) while the first row of
// buckets runs as each arrives (stall only 0–1), 16 buckets end at 17 s,
// then four write-backs share the D2H link: 4 s. Epoch 21 s.
func TestGE2HandComputed(t *testing.T) {
	cfg := gpuToy(toyConfig(t, "ge2", 4, 4, "cover", true))
	cfg.Profile.PCIe = devices.PCIe{H2D: 1000, D2H: 1000}
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.Zero(t, r.Swaps)
	assert.InDelta(t, 21, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 1, r.StallSeconds, 1e-3)
}

// TestResidentGPUAndPipeline: in-GPU runs ten 1-s batches back to back;
// marius-inmem pipelines a 1-s CPU stage with a 0.5-s GPU stage: the
// epoch is ten CPU stages plus the last GPU stage.
func TestResidentGPUAndPipeline(t *testing.T) {
	cfg := gpuToy(toyConfig(t, "in-gpu", 2, 2, "", true))
	cfg.Dataset.Edges = 1000
	r, err := Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 10, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 1, r.GPUUtilization, 1e-3)

	cfg = toyConfig(t, "marius-inmem", 2, 2, "", true)
	cfg.Dataset.Edges = 1000
	// A batch touches rows = 2·100 + 2·100·1 = 400 rows of 125 floats:
	// 200,000 bytes, moved in 0.5 s.
	cfg.Profile.PCIe = devices.PCIe{H2D: 400_000, D2H: 1e15}
	r, err = Run(cfg)
	require.NoError(t, err)
	assert.InDelta(t, 10.5, r.EpochSeconds, 1e-3)
	assert.InDelta(t, 10, r.ComputeSeconds, 1e-3)
}

// The CUDA engine's model (--buffer gpu) copies every loaded partition to
// its GPU slot and every written one back, over PCIe, beside training:
// the PCIe bytes are the Plan's, the copy time is reported, and what of it
// overlapped the GPU's work is at most all of it. A PCIe 1000 times slower
// than the toy's makes the copies last.
func TestGPUSlotsCopyOverPCIe(t *testing.T) {
	cfg := toyConfig(t, "realrun-cuda", 4, 2, "beta", true)
	cfg.Profile.PCIe = devices.PCIe{H2D: 2000, D2H: 2000}
	cfg.Profile.GPU.FLOPS, cfg.Profile.GPU.BatchEdges = 1e5, 1e5
	r, err := Run(cfg)
	require.NoError(t, err)
	pl := cfg.Plan
	bytes := map[string]int64{}
	for _, u := range r.Resources {
		bytes[u.Name] = u.Bytes
	}
	assert.Equal(t, int64(pl.Counts.Loads)*r.PartitionBytes, bytes["pcie h2d"])
	assert.Equal(t, int64(pl.Counts.Writes+pl.Counts.FinalWrites)*r.PartitionBytes, bytes["pcie d2h"])
	copies := float64(pl.Counts.Loads+pl.Counts.Writes+pl.Counts.FinalWrites) * 1000 / 2000
	assert.InDelta(t, copies, r.TransferSeconds, 1e-9, "no two copies overlap in this run")
	assert.Positive(t, r.HiddenTransferSeconds)
	assert.Less(t, r.HiddenTransferSeconds, r.TransferSeconds, "the first load and the final flush hide nothing")
	// The same Plan with partitions on the GPU's side of the disk only
	// (the CPU engine's model) is faster by at least the unhidden copies.
	host := cfg
	host.System, err = LookupSystem("realrun-cuda")
	require.NoError(t, err)
	host.System.GPUSlots = false
	r0, err := Run(host)
	require.NoError(t, err)
	assert.Zero(t, r0.TransferSeconds)
	assert.GreaterOrEqual(t, r.EpochSeconds-r0.EpochSeconds, r.TransferSeconds-r.HiddenTransferSeconds-1e-9)
}

// --buffer host ships each batch's rows both ways: all of it is transfer
// time, none hidden.
func TestRowsOverPCIeNeverHidden(t *testing.T) {
	cfg := toyConfig(t, "realrun-cuda-host", 4, 2, "beta", true)
	cfg.Profile.PCIe = devices.PCIe{H2D: 1e6, D2H: 1e6}
	r, err := Run(cfg)
	require.NoError(t, err)
	per := CPUBatchCost(cfg.Profile, cfg.Training, 100)
	assert.InDelta(t, float64(r.Batches)*(per.H2D+per.D2H)/1e6, r.TransferSeconds, 1e-9)
	assert.Zero(t, r.HiddenTransferSeconds)
}
