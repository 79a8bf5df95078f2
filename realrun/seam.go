package realrun

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/sim"
)

// Engine is a Compute whose relation embeddings can be read back for
// evaluation (the CPU and CUDA engines).
type Engine interface {
	Compute
	// Relations returns the relation embeddings (nil for Dot).
	Relations() []float32
}

// SlotResident is implemented by engines that keep the c partition slots
// in their own memory (the CUDA engine's --buffer gpu). The buffer manager
// calls Install after a load has read partition part into the host buffer
// buf and before the slot is handed to training, and Evict before it hands
// the evicted partition's host buffer to the writer (including the final
// flush), so that buf then holds the partition as trained. A failed hook
// fails the epoch like a failed read or write.
type SlotResident interface {
	Install(slot, part int, buf *store.Buffer) error
	Evict(slot, part int, buf *store.Buffer) error
}

// EpochHooks is implemented by engines that measure an epoch themselves
// (the CUDA engine samples GPU telemetry). RunEpoch calls StartEpoch once
// the buffer manager has started and FinishEpoch on the measured Epoch
// before returning it.
type EpochHooks interface {
	StartEpoch(epoch int) error
	FinishEpoch(ep *Epoch) error
}

// EngineOptions choose and configure a training engine.
type EngineOptions struct {
	Engine  string // "cpu" (default) or "cuda"
	Buffer  string // cuda only: "gpu" (partition slots on the GPU) or "host"
	Device  int    // cuda only: GPU index
	Hyper   Hyper
	Store   *store.Store
	Degrees []int32
	Seed    int64
	C       int // partition slots (the Plan's c)
}

// Buffer modes of the CUDA engine.
const (
	BufferGPU  = "gpu"
	BufferHost = "host"
)

// EngineUnavailable says an engine is not compiled into this binary; it is
// a usage error.
type EngineUnavailable struct{ Name, Hint string }

func (e *EngineUnavailable) Error() string {
	return fmt.Sprintf("--engine %s: not in this build; %s", e.Name, e.Hint)
}

var (
	enginesMu sync.Mutex
	engines   = map[string]func(EngineOptions) (Engine, error){}
)

// RegisterEngine makes an engine selectable by name (the CUDA engine
// registers itself from its package init, in builds with -tags cuda).
func RegisterEngine(name string, open func(EngineOptions) (Engine, error)) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[name] = open
}

// CheckEngine validates --engine and --buffer before any work is done.
func CheckEngine(name, buffer string) error {
	switch name {
	case "", "cpu":
		if buffer != "" && buffer != BufferHost {
			return &inputerr.Error{Err: fmt.Errorf("--buffer %s: the cpu engine keeps partitions in host memory (--buffer host)", buffer)}
		}
		return nil
	case "cuda":
		if buffer != "" && buffer != BufferGPU && buffer != BufferHost {
			return &inputerr.Error{Err: fmt.Errorf("--buffer %q: want gpu or host", buffer)}
		}
		enginesMu.Lock()
		_, ok := engines[name]
		enginesMu.Unlock()
		if !ok {
			return &EngineUnavailable{Name: name, Hint: "build with `make build-cuda` (go build -tags cuda) on a machine with the CUDA headers"}
		}
		return nil
	}
	return &inputerr.Error{Err: fmt.Errorf("--engine %q: want %s", name, strings.Join(EngineNames(), " or "))}
}

// EngineNames lists the engines this binary can run.
func EngineNames() []string {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	names := []string{"cpu"}
	for n := range engines {
		names = append(names, n)
	}
	sort.Strings(names[1:])
	return names
}

// NewCompute opens the engine o names.
func NewCompute(o EngineOptions) (Engine, error) {
	if err := CheckEngine(o.Engine, o.Buffer); err != nil {
		return nil, err
	}
	if o.Engine == "" || o.Engine == "cpu" {
		return NewCPU(o.Hyper, o.Store, o.Degrees, o.Seed), nil
	}
	if o.Buffer == "" {
		o.Buffer = BufferGPU
	}
	enginesMu.Lock()
	open := engines[o.Engine]
	enginesMu.Unlock()
	return open(o)
}

// NegativeSampler draws the negatives a chunk shares, as every engine
// does: Negatives nodes, alternately from the bucket's source and
// destination partition (odd positions from the destination), each with
// probability DegreeFrac by degree and otherwise uniformly.
type NegativeSampler struct {
	frac float64
	samp []*partSampler // per partition
}

// NewNegativeSampler builds per-partition degree samplers for a store.
func NewNegativeSampler(st *store.Store, degrees []int32, degreeFrac float64) *NegativeSampler {
	ns := &NegativeSampler{frac: degreeFrac}
	for i := 0; i < st.M.P; i++ {
		lo := int64(i) * st.M.Rows
		hi := min(lo+st.M.Rows, st.M.Nodes)
		if lo > hi {
			lo = hi
		}
		deg := make([]int32, st.M.Rows)
		copy(deg, degrees[lo:hi])
		ns.samp = append(ns.samp, newPartSampler(deg))
	}
	return ns
}

// Draw fills rows (local rows) and side (true: the destination partition
// di) for one chunk; len(rows) = len(side) is the number of negatives.
func (ns *NegativeSampler) Draw(rng *rand.Rand, si, di int, rows []int32, side []bool) {
	for k := range rows {
		sd := k%2 == 1
		ps := ns.samp[si]
		if sd {
			ps = ns.samp[di]
		}
		if rng.Float64() < ns.frac {
			rows[k] = ps.byDegree(rng)
		} else {
			rows[k] = ps.uniform(rng)
		}
		side[k] = sd
	}
}

// ApplyGPU records a GPU epoch's telemetry in its Epoch: the GPU's
// identity and measured figures under "gpu", the Report's gpu_utilization
// from the sampled utilisation, and the GPU and PCIe as resources.
func ApplyGPU(ep *Epoch, rep telemetry.Report) {
	ep.GPU = &rep
	ep.GPUUtilization = rep.Utilization
	total := ep.EpochSeconds
	res := []report.ResourceUsage{{Name: report.GPU, BusySeconds: rep.Utilization * total, Utilization: rep.Utilization}}
	for _, r := range []struct {
		name  string
		bytes int64
	}{{report.PCIeH2D, rep.PCIeRXBytes}, {report.PCIeD2H, rep.PCIeTXBytes}} {
		res = append(res, report.ResourceUsage{Name: r.name, Bytes: r.bytes})
	}
	ep.Resources = append(res, ep.Resources...)
}

// GPUCalibration is what a GPU engine measured for the device profile.
type GPUCalibration struct {
	Name        string  `json:"name"`
	MemoryBytes int64   `json:"memory_bytes"`
	H2D         float64 `json:"h2d_bytes_per_s"` // pinned, partition-sized copies
	D2H         float64 `json:"d2h_bytes_per_s"`
	// EdgesPerSecond is the engine's training rate at the calibrated
	// shape with both partitions on the GPU (kernels only, CUDA events).
	EdgesPerSecond float64 `json:"edges_per_second"`
	Shape          string  `json:"shape"`
}

var gpuCalibrator func(partitionBytes int64, h Hyper, rows int64) (GPUCalibration, error)

// RegisterGPUCalibrator is called by the CUDA engine's package init.
func RegisterGPUCalibrator(f func(partitionBytes int64, h Hyper, rows int64) (GPUCalibration, error)) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	gpuCalibrator = f
}

// CalibrateGPU measures the GPU (pinned H2D and D2H bandwidth at partition
// size, its memory, the CUDA engine's training rate at shape h on
// partitions of rows rows). Without the CUDA engine in the build the error
// is an *EngineUnavailable.
func CalibrateGPU(partitionBytes int64, h Hyper, rows int64) (GPUCalibration, error) {
	enginesMu.Lock()
	f := gpuCalibrator
	enginesMu.Unlock()
	if f == nil {
		return GPUCalibration{}, &EngineUnavailable{Name: "cuda", Hint: "GPU calibration needs a build with -tags cuda (make build-cuda)"}
	}
	return f(partitionBytes, h, rows)
}

// Apply writes the measurement into a device profile: PCIe H2D/D2H, the
// GPU's name and memory, and its training rate folded into gpu.flops as the
// simulator's GPU batch cost counts it (batch construction and memory
// traffic set free, so that flops ÷ gpu.flops alone reproduces the measured
// edges per second at this shape; like the CPU's calibration, valid for
// this shape).
func (c GPUCalibration) Apply(p *devices.Profile, h Hyper) error {
	t := h.Training
	if err := t.Validate(); err != nil {
		return fmt.Errorf("gpu calibration shape: %w", err)
	}
	if !(c.EdgesPerSecond > 0 && c.H2D > 0 && c.D2H > 0) {
		return fmt.Errorf("gpu calibration: non-positive rate (edges/s %g, h2d %g, d2h %g)", c.EdgesPerSecond, c.H2D, c.D2H)
	}
	free := devices.Profile{GPU: devices.GPU{FLOPS: 1, BatchEdges: devices.EdgeRate(math.Inf(1)), MemoryBW: devices.Bandwidth(math.Inf(1))}}
	flops := sim.GPUBatchCost(free, t, h.Batch).GPU // FLOPs of one batch
	p.PCIe = devices.PCIe{H2D: devices.Bandwidth(c.H2D), D2H: devices.Bandwidth(c.D2H)}
	p.GPU = devices.GPU{Name: c.Name, Count: 1, Memory: devices.Bytes(c.MemoryBytes),
		FLOPS:    devices.FLOPRate(flops / float64(h.Batch) * c.EdgesPerSecond),
		MemoryBW: devices.Bandwidth(1e15), BatchEdges: devices.EdgeRate(1e15)}
	return nil
}
