package cuda

// The engine's epoch hooks: its transfer, kernel and GPU telemetry measurement.

import (
	"time"

	"github.com/tierflow/tierflow/report"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/telemetry"
)

// StartEpoch implements realrun.EpochHooks: resets the counters and
// starts sampling the GPU every 100 ms.
func (e *Engine) StartEpoch(epoch int) error {
	e.mu.Lock()
	e.h2d, e.d2h, e.slotIn, e.slotOut, e.kernelSeconds = 0, 0, 0, 0, 0
	e.t0, e.copySpans, e.trainSpans, e.stageSeconds = time.Now(), nil, nil, 0
	e.mu.Unlock()
	if e.sampler != nil { // a failed epoch never finished
		e.sampler.Stop()
	}
	e.sampler = nil
	if e.nvml != nil {
		s, err := telemetry.NewSampler(e.nvml, telemetry.DefaultInterval)
		if err != nil {
			return err
		}
		e.sampler = s
		s.Start()
	}
	return nil
}

// FinishEpoch implements realrun.EpochHooks: the telemetry goes into ep.
func (e *Engine) FinishEpoch(ep *realrun.Epoch) error {
	rep := telemetry.Report{Info: e.info}
	if e.sampler != nil {
		var err error
		if rep, err = e.sampler.Stop(); err != nil {
			ep.Warnings = append(ep.Warnings, "gpu telemetry: "+err.Error())
		}
		rep.Info = e.info // the sampler's is NVML's alone
		e.sampler = nil
	} else {
		ep.Warnings = append(ep.Warnings, "gpu telemetry: NVML unavailable; utilisation and PCIe bytes not sampled")
	}
	e.mu.Lock()
	rep.H2DBytes, rep.D2HBytes, rep.KernelSeconds = e.h2d, e.d2h, e.kernelSeconds
	// Whole-partition copies overlap training (copy stream); --buffer
	// host's row copies sit between a batch's kernels and hide nothing.
	ep.TransferSeconds = report.Busy(e.copySpans) + e.stageSeconds
	ep.HiddenTransferSeconds = report.Overlap(e.copySpans, e.trainSpans)
	// The buffer manager frees its buffers after the epoch: unpin them now
	// (with the context current on this thread, as every driver call).
	if done, err := e.bind(); err == nil {
		e.unregisterAll()
		done()
	}
	e.mu.Unlock()
	realrun.ApplyGPU(ep, rep)
	return nil
}

// Transfers are the bytes an epoch copied between host and GPU.
type Transfers struct {
	H2D, D2H        int64 // everything
	SlotIn, SlotOut int64 // whole partitions into and out of GPU slots (--buffer gpu)
}

// Transfers returns the bytes copied so far this epoch.
func (e *Engine) Transfers() Transfers {
	e.mu.Lock()
	defer e.mu.Unlock()
	return Transfers{H2D: e.h2d, D2H: e.d2h, SlotIn: e.slotIn, SlotOut: e.slotOut}
}
