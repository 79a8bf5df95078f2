package calibrate

import (
	"errors"
	"math"
	"time"

	"github.com/tierflow/tierflow/realrun/store"
)

// PairedDisk is the disk measured the way the buffer manager drives it
// in a swap (executor.Policy.WriteAfterRead): the loader reads the next
// partition into the spare buffer while the writer checksums the evicted
// one; the writer writes once the read has arrived, while the loader
// verifies what it read; and the next pair starts only when both are
// done — the loader waits for the writer to hand the spare buffer back.
// A read and a write never share the device; each moves after the other,
// as it does in a run. Pairs run back to back for at least a floor that
// grows with the pass (pairedFor: up to PairedSeconds), so that a device
// that bursts shows its rate after the burst too.
type PairedDisk struct {
	// ReadBW and WriteBW are each direction's rate in this pattern over
	// the pairs of the steady part (the second half of the run): each
	// transfer's bytes over its own time.
	ReadBW  float64 `json:"read_bytes_per_s"`
	WriteBW float64 `json:"write_bytes_per_s"`
	// Pairs, Seconds and Bytes are what was measured: pairs of
	// partition-sized transfers, their time, and the bytes both
	// directions moved.
	Pairs   int     `json:"pairs"`
	Seconds float64 `json:"seconds"`
	Bytes   int64   `json:"bytes"`
	// FirstRate is the pairs' rate (bytes both ways over time) over the
	// first BurstWindow, SteadyRate over the second half; Burst is true
	// when the first is more than BurstRatio times the steady one (a
	// cloud volume's burst allowance, a write-back cache filling).
	FirstRate  float64 `json:"first_bytes_per_s"`
	SteadyRate float64 `json:"steady_bytes_per_s"`
	Burst      bool    `json:"burst"`
	// ReadSamples and WriteSamples are each direction's rate over each
	// quarter of the steady pairs (the spread the profile carries).
	ReadSamples  []float64 `json:"read_samples,omitempty"`
	WriteSamples []float64 `json:"write_samples,omitempty"`
	// ChecksumBW is the checksum's rate in the pattern over the steady
	// pairs, the loader's verify of what it read (beside the write) and
	// the writer's checksum of what it writes (beside the read) together;
	// VerifyBW and SumBW each alone; ChecksumSamples by quarter.
	ChecksumBW      float64   `json:"checksum_bytes_per_s,omitempty"`
	VerifyBW        float64   `json:"verify_bytes_per_s,omitempty"`
	SumBW           float64   `json:"sum_bytes_per_s,omitempty"`
	ChecksumSamples []float64 `json:"checksum_samples,omitempty"`
}

// PairedSeconds is the longest floor of a paired measurement's time
// (pairedFor), and the floor when not asked otherwise; BurstWindow its
// first stretch, read against the steady second half; BurstRatio how
// much faster that stretch must be to count as a burst.
const (
	PairedSeconds = 8.0
	BurstWindow   = 2.0
	BurstRatio    = 1.25
)

// pairTimes are one pair's transfers, in seconds since the run began:
// the read's and the write's start and end (checksums excluded), and the
// seconds the loader's verify and the writer's checksum took.
type pairTimes struct{ rs, re, ws, we, verify, sum float64 }

// paired runs read-then-write pairs over the bench's files, cycling, for
// at least b.pairedSeconds and 2·n pairs, and reads each direction's
// rate off them (fitPaired).
func (b *diskBench) paired(cal *Calibration) error {
	var pairs []pairTimes
	start := time.Now()
	since := func() float64 { return time.Since(start).Seconds() }
	for k := 0; since() < b.pairedSeconds || k < 2*b.n; k++ {
		var p pairTimes
		var werr error
		arrived := make(chan struct{})
		wrote := make(chan struct{})
		go func() { // the writer: checksum, wait for the read, write
			defer close(wrote)
			t := since()
			store.Checksum(b.other.Bytes())
			p.sum = since() - t
			<-arrived
			p.ws = since()
			_, werr = b.st.WritePartition(b.n+k%b.n, b.other)
			p.we = since()
		}()
		p.rs = since()
		_, rerr := b.st.ReadPartition(k%b.n, b.buf)
		p.re = since()
		close(arrived)
		store.Checksum(b.buf.Bytes()) // the loader verifies what it read
		p.verify = since() - p.re
		<-wrote
		if err := errors.Join(rerr, werr); err != nil {
			return err
		}
		pairs = append(pairs, p)
	}
	pd := fitPaired(pairs, float64(b.size))
	cal.Paired = &pd
	return nil
}

// fitPaired reads each direction's rate off pairs of size-byte
// transfers: over the steady half, a read's bytes over its time and a
// write's over its own (they do not overlap), and the checksums' bytes
// over theirs, as a whole and by quarter; and the first and steady rates
// of the pairs as a whole.
func fitPaired(pairs []pairTimes, size float64) PairedDisk {
	pd := PairedDisk{Pairs: len(pairs), Bytes: int64(2 * size * float64(len(pairs)))}
	if len(pairs) == 0 {
		return pd
	}
	end := func(p pairTimes) float64 { return math.Max(p.re, p.we) }
	pd.Seconds = end(pairs[len(pairs)-1])
	rate := func(ps []pairTimes, from float64) float64 {
		if len(ps) == 0 {
			return 0
		}
		if t := end(ps[len(ps)-1]) - from; t > 0 {
			return 2 * size * float64(len(ps)) / t
		}
		return 0
	}
	var first []pairTimes
	for _, p := range pairs {
		if end(p) <= BurstWindow || len(first) == 0 {
			first = append(first, p)
		}
	}
	half := len(pairs) / 2
	steady := pairs[half:]
	from := 0.0
	if half > 0 {
		from = end(pairs[half-1])
	}
	pd.FirstRate, pd.SteadyRate = rate(first, 0), rate(steady, from)
	pd.Burst = pd.SteadyRate > 0 && pd.FirstRate > BurstRatio*pd.SteadyRate
	// rates are the read's, the write's, the checksums' (both, the
	// loader's, the writer's) over ps; 0 where one took no time.
	rates := func(ps []pairTimes) (read, write, sums, verify, sum float64) {
		var rt, wt, vt, st float64
		for _, p := range ps {
			rt, wt, vt, st = rt+p.re-p.rs, wt+p.we-p.ws, vt+p.verify, st+p.sum
		}
		b := size * float64(len(ps))
		per := func(t float64) float64 {
			if t <= 0 {
				return 0
			}
			return b / t
		}
		return per(rt), per(wt), 2 * per(vt+st), per(vt), per(st)
	}
	pd.ReadBW, pd.WriteBW, pd.ChecksumBW, pd.VerifyBW, pd.SumBW = rates(steady)
	if q := len(steady) / 4; q > 0 {
		for i := 0; i < 4; i++ {
			r, w, c, _, _ := rates(steady[i*q : (i+1)*q])
			pd.ReadSamples, pd.WriteSamples, pd.ChecksumSamples = append(pd.ReadSamples, r), append(pd.WriteSamples, w), append(pd.ChecksumSamples, c)
		}
	}
	return pd
}
