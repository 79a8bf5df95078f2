package calibrate

import (
	"errors"
	"math"
	"sync"
	"time"

	"github.com/tierflow/tierflow/realrun/store"
)

// PairedDisk is the disk measured the way the buffer manager drives it
// in a swap: the writer writes an evicted partition (checksumming it
// first) while the loader reads the next one into the spare buffer
// (verifying it after), and the next pair starts only when both are done
// — the loader waits for the writer to hand the spare buffer back. Pairs
// run back to back for at least a floor that grows with the pass
// (pairedFor: up to PairedSeconds), so that a device that bursts shows
// its rate after the burst too.
type PairedDisk struct {
	// ReadBW and WriteBW are each direction's rate while the other ran
	// beside it, over the pairs of the steady part (the second half of
	// the run), as fitPaired reads them: the simulator's shared disk as
	// the engine's own pattern sees it.
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
// the read's and the write's start and end (checksums excluded).
type pairTimes struct{ rs, re, ws, we float64 }

// paired runs read+write pairs over the bench's files, cycling, for at
// least b.pairedSeconds and 2·n pairs, and reads the shared disk off
// them (fitPaired).
func (b *diskBench) paired(cal *Calibration) error {
	var pairs []pairTimes
	start := time.Now()
	since := func() float64 { return time.Since(start).Seconds() }
	for k := 0; since() < b.pairedSeconds || k < 2*b.n; k++ {
		var p pairTimes
		var werr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the writer: checksum, then write
			defer wg.Done()
			store.Checksum(b.other.Bytes())
			p.ws = since()
			_, werr = b.st.WritePartition(b.n+k%b.n, b.other)
			p.we = since()
		}()
		p.rs = since()
		_, rerr := b.st.ReadPartition(k%b.n, b.buf)
		p.re = since()
		store.Checksum(b.buf.Bytes()) // the loader verifies what it read
		wg.Wait()
		if err := errors.Join(rerr, werr); err != nil {
			return err
		}
		pairs = append(pairs, p)
	}
	pd := fitPaired(pairs, float64(b.size), cal.ReadBW)
	cal.Paired = &pd
	return nil
}

// fitPaired reads the shared disk off pairs of size-byte transfers, the
// read alone moving at readAlone bytes/s (the reads pass; 0: unknown):
// over the steady half, each direction's rate while the other ran beside
// it, in the simulator's terms — a write from its start to its end (it
// starts once the read is in flight and, where the read ends first, keeps
// its pace: devices.Disk.KeepSharedRate), a read from the write's start
// to its own end, with the bytes it moved alone before the write began
// (the writer's checksum) taken off at readAlone. A read counted over its
// whole time instead would credit the write with slowing its alone part:
// with huge-page buffers this disk serves a 27.6 MB read alone at about
// 3 GB/s and holds its tail behind a write begun beside it, and the
// simulator, moving the alone part at the rate alone and the rest at a
// whole-time rate, ran such reads 1.6× faster than the pairs and the
// engine did. Where the reads moved under a twentieth of their bytes
// beside writes, or readAlone is unknown, a read counts over its whole
// time. It also gives the first and steady rates of the whole. (Fitting
// the overlap alone with each side at its rate alone outside it fails
// where the device runs a write alone slower in this pattern than in a
// pass of writes alone, as this machine's virtual disk does: the write's
// share comes out nil.)
func fitPaired(pairs []pairTimes, size, readAlone float64) PairedDisk {
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
	var rt, wt, besideBytes, besideTime float64
	for _, p := range steady {
		rt += p.re - p.rs
		wt += p.we - p.ws
		if readAlone > 0 && p.ws < p.re {
			alone := math.Min(size, readAlone*math.Max(p.ws-p.rs, 0))
			besideBytes += size - alone
			besideTime += p.re - math.Max(p.ws, p.rs)
		}
	}
	if rt > 0 && wt > 0 {
		n := float64(len(steady))
		pd.ReadBW, pd.WriteBW = size*n/rt, size*n/wt
		if besideTime > 0 && besideBytes >= size*n/20 {
			pd.ReadBW = besideBytes / besideTime
		}
	}
	return pd
}
