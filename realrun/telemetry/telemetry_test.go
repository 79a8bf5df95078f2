package telemetry

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func fakeH100() *Fake {
	return &Fake{
		GPU: Info{Name: "NVIDIA H100 80GB HBM3 (fake)", MemoryBytes: 80 << 30, Driver: "580.00", CUDA: "13.0"},
		Readings: []Sample{
			{Utilization: 0.5, MemoryUsed: 1 << 30, PCIeTXPerSec: 1e9, PCIeRXPerSec: 2e9},
			{Utilization: 1.0, MemoryUsed: 3 << 30, PCIeTXPerSec: 3e9, PCIeRXPerSec: 4e9},
			{Utilization: 0.0, MemoryUsed: 2 << 30, PCIeTXPerSec: 1e9, PCIeRXPerSec: 0},
		},
	}
}

func TestSummarise(t *testing.T) {
	tests := []struct {
		name     string
		ticks    []float64
		util     float64
		peak     int64
		tx, rx   int64
		interval float64
	}{
		{"none", nil, 0, 0, 0, 0, 0},
		{"one", []float64{0}, 0.5, 1 << 30, 0, 0, 0},
		// Trapezoids: tx (1+3)/2·0.1 + (3+1)/2·0.1 = 0.4 GB; rx (2+4)/2·0.1 + (4+0)/2·0.1 = 0.5 GB.
		{"three", []float64{0, 0.1, 0.2}, 0.5, 3 << 30, 400_000_000, 500_000_000, 0.1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := NewSampler(fakeH100(), 0)
			require.NoError(t, err)
			for _, x := range tc.ticks {
				s.Tick(x)
			}
			r, err := s.Report()
			require.NoError(t, err)
			assert.Equal(t, len(tc.ticks), r.Samples)
			assert.InDelta(t, tc.util, r.Utilization, 1e-12)
			assert.Equal(t, tc.peak, r.MemoryUsedPeak)
			assert.InDelta(t, tc.tx, r.PCIeTXBytes, 1)
			assert.InDelta(t, tc.rx, r.PCIeRXBytes, 1)
			assert.InDelta(t, tc.interval, r.IntervalSeconds, 1e-12)
			assert.Equal(t, "NVIDIA H100 80GB HBM3 (fake)", r.Name)
		})
	}
}

// TestStartStop: Start samples at once and then every interval on its own
// goroutine; Stop samples a last time and ends that goroutine. The test
// runs in a synctest bubble, whose clock is fake: the sleep advances it by
// exactly 25 ms without waiting, so the samples fall at 0, 10, 20 and
// 25 ms, and synctest.Test fails if the sampler's goroutine outlives Stop.
func TestStartStop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := NewSampler(fakeH100(), 10*time.Millisecond)
		require.NoError(t, err)
		s.Start()
		time.Sleep(25 * time.Millisecond) // the epoch being sampled (fake time)
		r, err := s.Stop()
		require.NoError(t, err)
		var at []float64
		for _, x := range r.Timeline {
			at = append(at, x.Seconds)
		}
		assert.Equal(t, []float64{0, 0.01, 0.02, 0.025}, at, "a first sample, one per tick, a last one at Stop")
		assert.Equal(t, 4, r.Samples)
		assert.InDelta(t, 0.025/3, r.IntervalSeconds, 1e-12, "the mean gap")
		assert.Equal(t, int64(3<<30), r.MemoryUsedPeak)
		// Readings 0.5, 1, 0 and the last again: (0.5+1+0+0)/4.
		assert.InDelta(t, 0.375, r.Utilization, 1e-12)
		// TX 1, 3, 1, 1 GB/s: (1+3)/2·0.01 + (3+1)/2·0.01 + (1+1)/2·0.005 = 0.045 GB.
		assert.InDelta(t, 45_000_000, r.PCIeTXBytes, 1)
		_, err = s.Stop()
		assert.NoError(t, err, "a second Stop is harmless")
	})
}

func TestFailedReading(t *testing.T) {
	s, err := NewSampler(&Fake{}, 0)
	require.NoError(t, err)
	s.Tick(0)
	r, err := s.Report()
	assert.Error(t, err)
	assert.Zero(t, r.Samples)
}

// On a machine without a GPU (this project's CI) NVML must report "no GPU"
// as an error value; on a GPU machine it must name the GPU.
func TestOpenNVML(t *testing.T) {
	src, err := OpenNVML(0)
	if err != nil {
		assert.True(t, errors.Is(err, ErrNoGPU), "want ErrNoGPU, got %v", err)
		t.Logf("no GPU here: %v", err)
		return
	}
	defer src.Close()
	in, err := src.Info()
	require.NoError(t, err)
	assert.NotEmpty(t, in.Name)
	_, err = src.Sample()
	assert.NoError(t, err)
}
