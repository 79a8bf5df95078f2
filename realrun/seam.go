package realrun

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/telemetry"
	"github.com/tierflow/tierflow/report"
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

// ResidentUser is implemented by engines that train typed stores (entity
// types, issue 44) whose unpartitioned types' rows, the resident table,
// stay in memory for the whole run: RunEpoch reads the table
// (store.ResidentFile) once at the epoch's start into buf and calls
// SetResident before the first bucket; the engine updates buf in place,
// and RunEpoch writes it with every checkpoint and at the epoch's end.
// Training a bucket with a resident end needs it; an engine that is not a
// ResidentUser cannot train a store with resident types.
type ResidentUser interface {
	SetResident(buf *store.Buffer)
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
// a usage error. Its message names the field that chose the engine
// ({Engine}: EngineOptions.Engine), which a command renders with its flag
// (inputerr.Render), wherever it shows the message (an error, or
// calibrate.Calibration.NoGPU).
type EngineUnavailable struct{ Name, Hint string }

func (e *EngineUnavailable) Error() string {
	return fmt.Sprintf("{Engine} %s: not in this build; %s", e.Name, e.Hint)
}

var (
	enginesMu sync.Mutex
	engines   = map[string]func(EngineOptions) (Engine, error){}
)

// RegisterEngine makes an engine selectable by name: the CPU engine
// registers itself as "cpu" from its package init (realrun/cpu, linked by
// every command), the CUDA engine as "cuda" in builds with -tags cuda.
func RegisterEngine(name string, open func(EngineOptions) (Engine, error)) {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	engines[name] = open
}

// CheckEngine validates the engine (EngineOptions.Engine) and its buffer
// (Buffer) before any work is done; bad input names the field ({Engine}).
func CheckEngine(name, buffer string) error {
	switch name {
	case "", "cpu":
		if buffer != "" && buffer != BufferHost {
			return &inputerr.Error{Err: fmt.Errorf("{Buffer} %s: the cpu engine keeps partitions in host memory ({Buffer} host)", buffer)}
		}
		return nil
	case "cuda":
		if buffer != "" && buffer != BufferGPU && buffer != BufferHost {
			return &inputerr.Error{Err: fmt.Errorf("{Buffer} %q: want gpu or host", buffer)}
		}
		enginesMu.Lock()
		_, ok := engines[name]
		enginesMu.Unlock()
		if !ok {
			return &EngineUnavailable{Name: name, Hint: "build with `make build-cuda` (go build -tags cuda) on a machine with the CUDA headers"}
		}
		return nil
	}
	return &inputerr.Error{Err: fmt.Errorf("{Engine} %q: want %s", name, strings.Join(EngineNames(), " or "))}
}

// EngineNames lists the engines this binary can run, cpu first.
func EngineNames() []string {
	enginesMu.Lock()
	defer enginesMu.Unlock()
	names := []string{"cpu"}
	for n := range engines {
		if n != "cpu" {
			names = append(names, n)
		}
	}
	sort.Strings(names[1:])
	return names
}

// NewEngine opens the engine o names ("": cpu) through the registry, the
// one way every caller — training, the comparison with the simulator,
// calibration — gets an engine.
func NewEngine(o EngineOptions) (Engine, error) {
	if err := CheckEngine(o.Engine, o.Buffer); err != nil {
		return nil, err
	}
	name := o.Engine
	if name == "" {
		name = "cpu"
	}
	if name == "cuda" && o.Buffer == "" {
		o.Buffer = BufferGPU
	}
	enginesMu.Lock()
	open, ok := engines[name]
	enginesMu.Unlock()
	if !ok {
		return nil, &EngineUnavailable{Name: name, Hint: "its package is not linked into this program"}
	}
	return open(o)
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

// Compute trains the edges of one bucket on resident partitions. It is the
// seam where the engines plug in (realrun/cpu, realrun/cuda).
type Compute interface {
	// TrainBucket trains edges whose sources live in src (partition si)
	// and destinations in dst (partition di), and returns the summed loss.
	TrainBucket(edges []store.Edge, si int, src *store.Buffer, di int, dst *store.Buffer, rng *rand.Rand) (float64, error)
	Name() string
}
