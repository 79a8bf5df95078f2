package calibrate

import (
	"slices"

	"github.com/tierflow/tierflow/devices"
)

// SetSpread records on p the measured spread of the rates c measured
// (devices.Profile.SetSpread): the disk's read and write rates over
// their samples (the pairs' quarters and the passes: adoptPaired; not
// under a kernel limit, which holds them), its combined rate
// by the both-at-once passes' extent around their median, the checksum
// rate, and the CPU engine's edge rate over its rounds or their
// stretches (ComputeRate.Stretches) — each range
// widened, where rounding leaves it short, to hold the profile's value.
// Rates p does not set, or measured fewer than twice, get none.
func (c Calibration) SetSpread(p *devices.Profile) error {
	p.ClearSpread()
	n := 0
	// set records the extent of samples, measured from count
	// measurements.
	setOf := func(key string, value float64, samples []float64, count int) error {
		if value <= 0 || len(samples) < 2 {
			return nil
		}
		lo, hi := devices.Extent(samples)
		if err := p.SetSpread(key, min(lo, value), max(hi, value)); err != nil {
			return err
		}
		if n == 0 || count < n {
			n = count
		}
		return nil
	}
	set := func(key string, value float64, samples []float64) error {
		return setOf(key, value, samples, len(samples))
	}
	relative := func(value float64, samples []float64) []float64 {
		if len(samples) < 2 {
			return nil
		}
		s := slices.Clone(samples)
		slices.Sort(s)
		med := s[len(s)/2]
		if med <= 0 {
			return nil
		}
		return []float64{value * s[0] / med, value * s[len(s)-1] / med}
	}
	if c.Limit.Read == 0 && c.Limit.Write == 0 {
		if err := set("disk.read", float64(p.Disk.Read), c.Samples.Read); err != nil {
			return err
		}
		if err := set("disk.write", float64(p.Disk.Write), c.Samples.Write); err != nil {
			return err
		}
		if d := p.Disk; d.Combined > 0 {
			r := relative(float64(d.Combined), c.Samples.Both)
			if len(r) == 2 { // held within [max(read, write), read + write] at the extremes by Extremes
				if err := setOf("disk.combined", float64(d.Combined), r, len(c.Samples.Both)); err != nil {
					return err
				}
			}
		}
	}
	if err := set("cpu.checksum", float64(p.CPU.Checksum), c.Samples.Checksum); err != nil {
		return err
	}
	if c.Compute != nil {
		// Over stretches of seconds, as an epoch's buckets run, not over
		// rounds of a fraction of one (ComputeRate.Stretches).
		stretches := c.Compute.Stretches()
		for _, m := range p.CPU.Train.Measured() {
			tc, _ := p.CPU.Train.For(m)
			if m == p.CPU.Train.PairModel {
				m = "pair"
			}
			if err := set("cpu.train."+m+".edges", float64(tc.Edges), stretches); err != nil {
				return err
			}
		}
		if err := set("cpu.batch_edges", float64(p.CPU.BatchEdges), stretches); err != nil {
			return err
		}
	}
	p.Spread.Samples = n
	return nil
}
