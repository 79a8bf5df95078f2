//go:build cgo

package telemetry

import (
	"fmt"
	"sync"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// nvmlMu serialises NVML's process-wide Init/Shutdown reference count.
var nvmlMu sync.Mutex

// NVML reads one GPU through the driver's libnvidia-ml.so.1, which it
// loads at run time.
type NVML struct {
	dev nvml.Device
}

// OpenNVML opens GPU index; without a driver or GPU the error wraps ErrNoGPU.
func OpenNVML(index int) (src *NVML, err error) {
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	defer func() {
		// go-nvml panics when the library cannot be loaded on some paths;
		// a missing driver is "no GPU", never a crash.
		if r := recover(); r != nil {
			src, err = nil, fmt.Errorf("%w: nvml: %v", ErrNoGPU, r)
		}
	}()
	if ret := nvml.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("%w: nvml init: %s", ErrNoGPU, nvml.ErrorString(ret))
	}
	n, ret := nvml.DeviceGetCount()
	if ret != nvml.SUCCESS || index >= n || index < 0 {
		nvml.Shutdown()
		return nil, fmt.Errorf("%w: nvml: %d devices (%s), want index %d", ErrNoGPU, n, nvml.ErrorString(ret), index)
	}
	dev, ret := nvml.DeviceGetHandleByIndex(index)
	if ret != nvml.SUCCESS {
		nvml.Shutdown()
		return nil, fmt.Errorf("%w: nvml device %d: %s", ErrNoGPU, index, nvml.ErrorString(ret))
	}
	return &NVML{dev: dev}, nil
}

// Info implements Source.
func (g *NVML) Info() (Info, error) {
	var in Info
	name, ret := g.dev.GetName()
	if ret != nvml.SUCCESS {
		return in, fmt.Errorf("nvml name: %s", nvml.ErrorString(ret))
	}
	in.Name = name
	if mem, ret := g.dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		in.MemoryBytes = int64(mem.Total)
	}
	if v, ret := nvml.SystemGetDriverVersion(); ret == nvml.SUCCESS {
		in.Driver = v
	}
	if v, ret := nvml.SystemGetCudaDriverVersion(); ret == nvml.SUCCESS {
		in.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
	}
	return in, nil
}

// Sample implements Source.
func (g *NVML) Sample() (Sample, error) {
	var s Sample
	u, ret := g.dev.GetUtilizationRates()
	if ret != nvml.SUCCESS {
		return s, fmt.Errorf("nvml utilization: %s", nvml.ErrorString(ret))
	}
	s.Utilization = float64(u.Gpu) / 100
	if mem, ret := g.dev.GetMemoryInfo(); ret == nvml.SUCCESS {
		s.MemoryUsed = int64(mem.Used)
	}
	// PCIe throughput is reported in KB/s over a short window.
	if tx, ret := g.dev.GetPcieThroughput(nvml.PCIE_UTIL_TX_BYTES); ret == nvml.SUCCESS {
		s.PCIeTXPerSec = float64(tx) * 1024
	}
	if rx, ret := g.dev.GetPcieThroughput(nvml.PCIE_UTIL_RX_BYTES); ret == nvml.SUCCESS {
		s.PCIeRXPerSec = float64(rx) * 1024
	}
	return s, nil
}

// Close implements Source.
func (g *NVML) Close() error {
	nvmlMu.Lock()
	defer nvmlMu.Unlock()
	if ret := nvml.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("nvml shutdown: %s", nvml.ErrorString(ret))
	}
	return nil
}
