// Package telemetry samples a GPU's utilisation, memory and PCIe traffic
// during a training epoch and summarises them for the run's Report.
//
// A Source gives one reading at a time (NVML on a real machine, Fake in
// tests); a Sampler polls it every ~100 ms and integrates the PCIe rates
// into bytes. Nothing here needs a GPU to build or to run: with no driver,
// OpenNVML returns an error that says "no GPU".
package telemetry

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrNoGPU is wrapped by every error that means there is no usable GPU.
var ErrNoGPU = errors.New("no GPU")

// Info is what a GPU is, read once.
type Info struct {
	Name        string `json:"name"`
	MemoryBytes int64  `json:"memory_bytes"`
	Driver      string `json:"driver"`
	CUDA        string `json:"cuda"` // the driver's CUDA version, e.g. "13.0"
	// GEMM says what does the CUDA engine's matrix products: cuBLAS (its
	// version, file and math mode) or the built-in kernel and why.
	GEMM string `json:"gemm,omitempty"`
}

// Sample is one reading.
type Sample struct {
	Seconds      float64 `json:"t"`           // since the sampler started
	Utilization  float64 `json:"utilization"` // 0..1, share of the last period a kernel ran
	MemoryUsed   int64   `json:"memory_used_bytes"`
	PCIeTXPerSec float64 `json:"pcie_tx_bytes_per_second"` // GPU → host
	PCIeRXPerSec float64 `json:"pcie_rx_bytes_per_second"` // host → GPU
}

// Source reads a GPU.
type Source interface {
	Info() (Info, error)
	Sample() (Sample, error)
	Close() error
}

// Report summarises an epoch's samples, with what the engine counted
// itself (bytes it copied, time its kernels ran by CUDA events).
type Report struct {
	Info
	Samples         int     `json:"samples"`
	IntervalSeconds float64 `json:"interval_seconds"`
	// Utilization is the mean sampled utilisation, 0..1.
	Utilization float64 `json:"utilization"`
	// MemoryUsedPeak is the largest sampled memory use.
	MemoryUsedPeak int64 `json:"memory_used_peak_bytes"`
	// PCIeTXBytes and PCIeRXBytes integrate the sampled PCIe rates over
	// the epoch (GPU → host and host → GPU, all traffic on the link).
	PCIeTXBytes int64 `json:"pcie_tx_bytes"`
	PCIeRXBytes int64 `json:"pcie_rx_bytes"`
	// H2DBytes and D2HBytes are the bytes the engine copied itself.
	H2DBytes int64 `json:"h2d_bytes"`
	D2HBytes int64 `json:"d2h_bytes"`
	// KernelSeconds is the training time measured with CUDA events.
	KernelSeconds float64  `json:"kernel_seconds"`
	Timeline      []Sample `json:"samples_timeline,omitempty"`
}

// Sampler polls a Source.
type Sampler struct {
	src   Source
	every time.Duration
	info  Info
	t0    time.Time
	stop  chan struct{}
	done  chan struct{}

	mu      sync.Mutex
	samples []Sample
	err     error
}

// DefaultInterval is how often Start samples.
const DefaultInterval = 100 * time.Millisecond

// NewSampler reads the source's Info; call Tick to sample by hand or Start
// to sample on a timer.
func NewSampler(src Source, every time.Duration) (*Sampler, error) {
	info, err := src.Info()
	if err != nil {
		return nil, fmt.Errorf("gpu info: %w", err)
	}
	if every <= 0 {
		every = DefaultInterval
	}
	return &Sampler{src: src, every: every, info: info, t0: time.Now()}, nil
}

// Tick takes one sample at t seconds since the start.
func (s *Sampler) Tick(t float64) {
	smp, err := s.src.Sample()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		if s.err == nil {
			s.err = err
		}
		return
	}
	smp.Seconds = t
	s.samples = append(s.samples, smp)
}

// Start samples every interval on a goroutine until Stop.
func (s *Sampler) Start() {
	s.t0 = time.Now()
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		tk := time.NewTicker(s.every)
		defer tk.Stop()
		s.Tick(0)
		for {
			select {
			case <-s.stop:
				s.Tick(time.Since(s.t0).Seconds())
				return
			case <-tk.C:
				s.Tick(time.Since(s.t0).Seconds())
			}
		}
	}()
}

// Stop ends a Start and returns the summary (Report also works after
// Tick-driven sampling). The error is the first failed reading, if any;
// the report still holds every good one.
func (s *Sampler) Stop() (Report, error) {
	if s.stop != nil {
		close(s.stop)
		<-s.done
		s.stop = nil
	}
	return s.Report()
}

// Report summarises the samples so far.
func (s *Sampler) Report() (Report, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return Summarise(s.info, s.samples), s.err
}

// Summarise turns samples (in time order) into a Report: the mean
// utilisation, the peak memory, and PCIe bytes integrated with the
// trapezoid rule between consecutive samples.
func Summarise(info Info, samples []Sample) Report {
	r := Report{Info: info, Samples: len(samples), Timeline: append([]Sample(nil), samples...)}
	if len(samples) == 0 {
		return r
	}
	var util, tx, rx float64
	for i, s := range samples {
		util += s.Utilization
		r.MemoryUsedPeak = max(r.MemoryUsedPeak, s.MemoryUsed)
		if i > 0 {
			dt := s.Seconds - samples[i-1].Seconds
			tx += dt * (s.PCIeTXPerSec + samples[i-1].PCIeTXPerSec) / 2
			rx += dt * (s.PCIeRXPerSec + samples[i-1].PCIeRXPerSec) / 2
		}
	}
	r.Utilization = util / float64(len(samples))
	r.PCIeTXBytes, r.PCIeRXBytes = int64(tx), int64(rx)
	if len(samples) > 1 {
		r.IntervalSeconds = (samples[len(samples)-1].Seconds - samples[0].Seconds) / float64(len(samples)-1)
	}
	return r
}

// Fake is a Source that replays fixed readings (tests, and the CPU
// engine's documentation of the JSON).
type Fake struct {
	GPU      Info
	Readings []Sample
	next     int
	Closed   bool
}

// Info implements Source.
func (f *Fake) Info() (Info, error) { return f.GPU, nil }

// Sample implements Source: the readings in turn, then the last again.
func (f *Fake) Sample() (Sample, error) {
	if len(f.Readings) == 0 {
		return Sample{}, fmt.Errorf("fake: no readings")
	}
	s := f.Readings[min(f.next, len(f.Readings)-1)]
	f.next++
	return s, nil
}

// Close implements Source.
func (f *Fake) Close() error { f.Closed = true; return nil }
