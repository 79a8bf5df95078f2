package chrometrace

import (
	"math"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/report"
)

// Summary is what one process of a trace file did, read back from the
// file: each track's spans (its lanes merged), the disk's busy time with
// reads and writes merged, and the trainer's waits by name. Seconds are
// the file's microseconds over 10⁶.
type Summary struct {
	Process string
	// Seconds is the end of the process's last span.
	Seconds float64
	Tracks  []TrackSummary
	// DiskBusySeconds is how long any disk read or write was in flight
	// (the union of their spans) and DiskBytes what they moved.
	DiskBusySeconds float64
	DiskBytes       float64
	// Waits are the seconds the trainer waited, by the wait's name (one
	// per bucket: report.WaitName).
	Waits map[string]float64
	// Loads are the disk read track's transfers by how long before each
	// its partition was last written in this run (LoadAges).
	Loads []LoadClass
}

// LoadClass is a set of loads and the 10th, 50th and 90th percentile of
// their rates (bytes/s).
type LoadClass struct {
	Class                     string
	Loads                     int
	RateP10, RateP50, RateP90 float64
}

// LoadAges are the classes of Summary.Loads: the buffer's fill (loads
// that end before the run's first write begins), loads of a partition not
// written before in the run, and loads of one written less than 0.25 s,
// 0.25–1 s, 1–3 s and 3 s or more before the load began.
var LoadAges = []string{"fill (done before any write)", "not written before", "written < 0.25 s before", "0.25–1 s", "1–3 s", "≥ 3 s"}

// TrackSummary is one track of a process: its spans, their total time and
// the bytes they moved, and for the spans that moved bytes the 10th, 50th
// and 90th percentile of their rate (bytes over duration, bytes/s).
type TrackSummary struct {
	Track                     string
	Spans                     int
	BusySeconds               float64
	Bytes                     float64
	RateP10, RateP50, RateP90 float64
}

// Summarize reads back every process of f (Build's output: complete
// events carry their track as the category).
func Summarize(f File) []Summary {
	names := map[int]string{}
	var pids []int
	for _, e := range f.TraceEvents {
		if e.Ph == "M" && e.Name == "process_name" {
			names[e.Pid], _ = e.Args["name"].(string)
			pids = append(pids, e.Pid)
		}
	}
	var out []Summary
	for _, pid := range pids {
		s := Summary{Process: names[pid], Waits: map[string]float64{}}
		byTrack := map[string]*TrackSummary{}
		rates := map[string][]float64{}
		var order []string
		var disk [][2]float64
		var reads, writes []transfer
		for _, e := range f.TraceEvents {
			if e.Pid != pid || e.Ph != "X" || e.Dur == nil {
				continue
			}
			start, dur := e.Ts/us, *e.Dur/us
			s.Seconds = max(s.Seconds, start+dur)
			t := byTrack[e.Cat]
			if t == nil {
				t = &TrackSummary{Track: e.Cat}
				byTrack[e.Cat] = t
				order = append(order, e.Cat)
			}
			t.Spans++
			t.BusySeconds += dur
			if b, ok := e.Args["bytes"].(float64); ok {
				t.Bytes += b
				if dur > 0 {
					rates[e.Cat] = append(rates[e.Cat], b/dur)
				}
				if e.Cat == report.DiskRead || e.Cat == report.DiskWrite {
					disk = append(disk, [2]float64{start, start + dur})
					s.DiskBytes += b
					if part, ok := e.Args["partition"].(float64); ok && dur > 0 {
						tf := transfer{int(part), start, start + dur, b / dur}
						if e.Cat == report.DiskRead {
							reads = append(reads, tf)
						} else {
							writes = append(writes, tf)
						}
					}
				}
			}
			if e.Cat == report.Waiting {
				s.Waits[e.Name] += dur
			}
		}
		for _, tr := range order {
			t := byTrack[tr]
			if r := rates[tr]; len(r) > 0 {
				t.RateP10, t.RateP50, t.RateP90 = percentiles(r)
			}
			s.Tracks = append(s.Tracks, *t)
		}
		s.DiskBusySeconds = union(disk)
		s.Loads = loadAges(reads, writes)
		out = append(out, s)
	}
	return out
}

// transfer is one disk transfer of a partition, in seconds, and its rate.
type transfer struct {
	part       int
	start, end float64
	rate       float64
}

// loadAges sorts loads into LoadAges by the last write of their partition
// that ended before they began.
func loadAges(reads, writes []transfer) []LoadClass {
	firstWrite := math.Inf(1)
	for _, w := range writes {
		firstWrite = min(firstWrite, w.start)
	}
	rates := make([][]float64, len(LoadAges))
	for _, r := range reads {
		last := math.Inf(-1)
		for _, w := range writes {
			if w.part == r.part && w.end <= r.start {
				last = max(last, w.end)
			}
		}
		age := r.start - last
		class := 5
		switch {
		case r.end <= firstWrite:
			class = 0
		case math.IsInf(last, -1):
			class = 1
		case age < 0.25:
			class = 2
		case age < 1:
			class = 3
		case age < 3:
			class = 4
		}
		rates[class] = append(rates[class], r.rate)
	}
	var out []LoadClass
	for i, r := range rates {
		if len(r) == 0 {
			continue
		}
		c := LoadClass{Class: LoadAges[i], Loads: len(r)}
		c.RateP10, c.RateP50, c.RateP90 = percentiles(r)
		out = append(out, c)
	}
	return out
}

// percentiles are the 10th, 50th and 90th percentile of xs (sorted in
// place; nearest rank below).
func percentiles(xs []float64) (p10, p50, p90 float64) {
	slices.Sort(xs)
	n := len(xs)
	return xs[n/10], xs[n/2], xs[9*n/10]
}

// union is the total length of a set of intervals.
func union(iv [][2]float64) float64 {
	slices.SortFunc(iv, func(a, b [2]float64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	var total, lo, hi float64
	for i, v := range iv {
		if i == 0 || v[0] > hi {
			total += hi - lo
			lo, hi = v[0], v[1]
			continue
		}
		hi = max(hi, v[1])
	}
	return total + hi - lo
}

// Pair is a prediction and a measurement of one ordering in one file
// (realrun --compare-sim --trace): the buckets the trainer waited for at
// least the given seconds in both, only in the prediction, only in the
// measurement.
type Pair struct {
	Ordering                          string
	Predicted, Measured               *Summary
	Both, OnlyPredicted, OnlyMeasured int
}

// Pairs matches every "predicted: ORDERING …" process with the next
// "measured: ORDERING …" one and compares their waits of at least minWait
// seconds bucket by bucket.
func Pairs(sums []Summary, minWait float64) []Pair {
	var out []Pair
	for i := range sums {
		o, ok := ordering(sums[i].Process, "predicted: ")
		if !ok {
			continue
		}
		for j := i + 1; j < len(sums); j++ {
			if m, ok := ordering(sums[j].Process, "measured: "); ok && m == o {
				p := Pair{Ordering: o, Predicted: &sums[i], Measured: &sums[j]}
				for name, w := range p.Predicted.Waits {
					if w < minWait {
						continue
					}
					if p.Measured.Waits[name] >= minWait {
						p.Both++
					} else {
						p.OnlyPredicted++
					}
				}
				for name, w := range p.Measured.Waits {
					if w >= minWait && p.Predicted.Waits[name] < minWait {
						p.OnlyMeasured++
					}
				}
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// ordering is the ordering a process name starting with prefix is of.
func ordering(process, prefix string) (string, bool) {
	rest, ok := strings.CutPrefix(process, prefix)
	if !ok {
		return "", false
	}
	o, _, _ := strings.Cut(rest, " ")
	return o, true
}
