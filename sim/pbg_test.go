package sim

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

func pbgConfig(t *testing.T, dataset string, p, m int) PBGConfig {
	t.Helper()
	prof, err := devices.Preset("pbg-paper")
	require.NoError(t, err)
	ds, err := workload.LookupDataset(dataset)
	require.NoError(t, err)
	return PBGConfig{Profile: prof, Dataset: ds, Training: PBGTraining(ds, 100), P: p, Machines: m}
}

// Every trainer's epoch is trained, waiting or moving data, and nothing
// else: the three add up to the epoch (within the poll's granularity).
func TestPBGAccounting(t *testing.T) {
	for _, tc := range []struct {
		dataset string
		p, m    int
	}{{"twitter", 1, 1}, {"twitter", 4, 1}, {"freebase", 16, 1}, {"freebase", 4, 2}, {"twitter", 8, 4}, {"freebase", 16, 8}, {"twitter", 8, 8}} {
		rep, err := SimulatePBG(pbgConfig(t, tc.dataset, tc.p, tc.m))
		require.NoError(t, err)
		for _, ep := range rep.Epochs {
			buckets := 0
			for _, tr := range ep.Trainers {
				sum := tr.TrainSeconds + tr.WaitBucketSeconds + tr.TransferSeconds
				assert.InDelta(t, ep.Seconds, sum, 1e-6*ep.Seconds, "%s p=%d m=%d trainer %d", tc.dataset, tc.p, tc.m, tr.Machine)
				assert.LessOrEqual(t, tr.Occupancy, 1.0)
				buckets += tr.Buckets
			}
			assert.Equal(t, tc.p*tc.p*ep.Passes, buckets, "every bucket once a pass")
		}
	}
}

// One machine: PBG's inside-out order, two partitions held, swaps to disk.
// At p = 4 the order is (3,3) (2,3) (3,2) (2,2) (1,2) (2,1) (1,3) (3,1)
// (1,1) (0,1) (1,0) (0,2) (2,0) (0,3) (3,0) (0,0), and a trainer holds
// only its bucket's partitions, so a steady epoch loads 3, 2, 1, 3, 0, 2,
// 3 — 7 partitions — and saves each again.
func TestPBGOneMachineSwaps(t *testing.T) {
	rep, err := SimulatePBG(pbgConfig(t, "twitter", 4, 1))
	require.NoError(t, err)
	st := rep.Steady().Trainers[0]
	assert.Equal(t, 16, st.Buckets)
	assert.Equal(t, 7, st.Loads)
	assert.Equal(t, st.Loads, st.Saves, "every partition loaded is saved again")
	// The first epoch initialises partitions instead of loading them.
	assert.Less(t, rep.Epochs[0].Trainers[0].Loads, st.Loads)
	part := float64(rep.PartitionBytes)
	edges := float64(rep.Steady().EdgeBytes)
	assert.InDelta(t, float64(st.Loads)*part+edges, rep.Steady().DiskReadBytes, 1)
	assert.InDelta(t, float64(st.Saves)*part, rep.Steady().DiskWriteBytes, 1)
	assert.Zero(t, rep.Steady().NetworkBytes)
}

// More machines than P/2 is allowed, with a warning, and the extra
// trainers wait.
func TestPBGTooManyMachines(t *testing.T) {
	rep, err := SimulatePBG(pbgConfig(t, "twitter", 4, 3))
	require.NoError(t, err)
	require.Len(t, rep.Warnings, 1)
	assert.Contains(t, rep.Warnings[0], "at most 2 can train at once")
	var waited float64
	for _, tr := range rep.Steady().Trainers {
		waited += tr.WaitBucketSeconds
	}
	assert.Greater(t, waited, rep.Steady().Seconds*0.5)
}

// Several machines: partitions cross the network; the shared parameters
// of a knowledge graph are synchronised, a single-relation dot graph has
// none.
func TestPBGNetwork(t *testing.T) {
	fb, err := SimulatePBG(pbgConfig(t, "freebase", 8, 4))
	require.NoError(t, err)
	tw, err := SimulatePBG(pbgConfig(t, "twitter", 8, 4))
	require.NoError(t, err)
	assert.Positive(t, fb.Steady().SyncBytes)
	assert.Zero(t, tw.Steady().SyncBytes)
	for _, r := range []PBGReport{fb, tw} {
		st := r.Steady()
		var moves int
		var recv float64
		for _, tr := range st.Trainers {
			moves += tr.Loads + tr.Saves
			recv += tr.ReceivedBytes
			// a machine holds its trainer's partitions and edges and its
			// partition server's share (p/m partitions).
			assert.GreaterOrEqual(t, tr.PeakMemoryBytes, 2*r.PartitionBytes+2*r.PartitionBytes)
		}
		// received = partitions loaded from other machines' servers and
		// saved into this one's, edges, and sync; a move between a trainer
		// and its own machine's server does not cross the network.
		assert.LessOrEqual(t, recv, float64(moves)*float64(r.PartitionBytes)+st.EdgeBytes+st.SyncBytes+1)
		assert.Greater(t, recv, st.EdgeBytes)
	}
}

// The same inputs give byte-identical output whatever GOMAXPROCS is.
func TestPBGDeterministic(t *testing.T) {
	run := func(procs int) []byte {
		old := runtime.GOMAXPROCS(procs)
		defer runtime.GOMAXPROCS(old)
		rep, err := SimulatePBG(pbgConfig(t, "freebase", 16, 8))
		require.NoError(t, err)
		b, err := json.Marshal(rep)
		require.NoError(t, err)
		return b
	}
	assert.Equal(t, string(run(1)), string(run(4)))
}

func TestPBGBadInput(t *testing.T) {
	base := pbgConfig(t, "twitter", 4, 2)
	gpu, err := devices.Preset("p3.2xlarge")
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		mod  func(c *PBGConfig)
		want string
	}{
		{"no machines", func(c *PBGConfig) { c.Machines = 0 }, "machines must be at least 1"},
		{"no partitions", func(c *PBGConfig) { c.P = 0 }, "p must be at least 1"},
		{"one partition, two machines", func(c *PBGConfig) { c.P = 1 }, "need at least 2 partitions"},
		{"negative bandwidth", func(c *PBGConfig) { c.Profile.Network.Bandwidth = -1 }, "network.bandwidth: negative"},
		{"no network", func(c *PBGConfig) { c.Profile.Network.Bandwidth = 0 }, "has none (network.bandwidth)"},
		{"a GPU machine", func(c *PBGConfig) { c.Profile = gpu; c.Machines = 1 }, "trains on the CPU"},
		{"wrong histogram", func(c *PBGConfig) { c.BucketEdges = []int64{1, 2} }, "2 bucket counts for p = 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base
			tc.mod(&c)
			_, err := SimulatePBG(c)
			assert.ErrorIs(t, err, ErrPBG)
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// tierflow's engine (EngineModel) by hand, one trainer, P = 2: the lock
// server gives (0,0), (0,1), (1,1), (1,0); the trainer keeps the
// partitions of its last bucket at the version it wrote, so it loads 0,
// then 1, then nothing, then 0 again (dropped after (1,1)); it writes
// back every partition of every bucket: 1 + 2 + 1 + 2.
func TestPBGEngineModelByHand(t *testing.T) {
	cfg := pbgConfig(t, "twitter", 2, 1)
	cfg.BucketEdges = []int64{100, 100, 100, 100}
	cfg.Engine = &EngineModel{PartitionBytes: 1e6, EdgeBytes: 12, EdgeSeconds: 1e-3}
	cfg.Profile.Network.Bandwidth = 1e6
	cfg.Profile.Network.Latency = 0
	cfg.Profile.Network.SharedFS = 1e12
	rep, err := SimulatePBG(cfg)
	require.NoError(t, err)
	st := rep.Steady().Trainers[0]
	assert.Equal(t, 3, st.Loads)
	assert.Equal(t, 6, st.Saves)
	// 9 partition moves of 1 s and 4 × 1,200 edge bytes, 0.4 s of training.
	assert.InDelta(t, 9+4*1200/1e6+0.4, rep.Steady().Seconds, 1e-6)
	assert.InDelta(t, 4*1200, rep.Steady().EdgeBytes, 1e-9)
}
