package sim

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/tierflow/tierflow/report"
)

// EpochRange is the range of an epoch over every combination of the
// profile's rates within their measured spread (devices.Spread): Low is
// the epoch on the profile with every such rate at its fastest, High at
// its slowest. It is zero when the profile has no spread.
type EpochRange struct {
	Low  float64 `json:"epoch_seconds_low,omitempty"`
	High float64 `json:"epoch_seconds_high,omitempty"`
}

// Has reports whether r is a range (the profile had a spread).
func (r EpochRange) Has() bool { return r.High > 0 }

// Contains reports whether seconds lies within r.
func (r EpochRange) Contains(seconds float64) bool { return r.Low <= seconds && seconds <= r.High }

// Text writes median with r as "93.4 (81.0–110.2)", each divided by div
// (60: minutes) with prec decimals; without a range, the median alone.
func (r EpochRange) Text(median, div float64, prec int) string {
	if !r.Has() {
		return fmt.Sprintf("%.*f", prec, median/div)
	}
	return fmt.Sprintf("%.*f (%.*f–%.*f)", prec, median/div, prec, r.Low/div, prec, r.High/div)
}

// RunRange simulates cfg's epoch on its profile as given (the Report: the
// median, where a calibration's rates are their measurements' medians)
// and, when the profile has a spread, on its two Extremes: an epoch takes
// no longer when any rate is faster, so those two bound the epoch over
// every combination of rates within their ranges. The range is widened
// to hold the median should a schedule's tie-breaks make the model not
// quite monotone. Without a spread it is Run, with a zero range.
func RunRange(cfg Config) (report.Report, EpochRange, error) {
	cfg.Profile = forOrdering(cfg)
	rep, err := Run(cfg)
	if err != nil || !cfg.Profile.HasSpread() {
		return rep, EpochRange{}, err
	}
	fast, slow := cfg.Profile.Extremes()
	ext := cfg
	ext.Trace, ext.TimelineSlices = false, 1
	ext.Profile = fast
	f, err := Run(ext)
	if err != nil {
		return rep, EpochRange{}, fmt.Errorf("the fast end of the device's spread: %w", err)
	}
	ext.Profile = slow
	sl, err := Run(ext)
	if err != nil {
		return rep, EpochRange{}, fmt.Errorf("the slow end of the device's spread: %w", err)
	}
	return rep, EpochRange{
		Low:  min(f.EpochSeconds, rep.EpochSeconds, sl.EpochSeconds),
		High: max(f.EpochSeconds, rep.EpochSeconds, sl.EpochSeconds),
	}, nil
}

// Place is an entry's place in a ranking by predicted epoch (the median),
// and what the spread allows of it. The order of two entries is certain
// only when their ranges do not overlap.
type Place struct {
	// Rank is its place by median epoch (1: fastest).
	Rank int `json:"rank,omitempty"`
	// RankBest and RankWorst are the places its range allows: one more
	// than the entries surely faster (their whole range below its own),
	// and the entries less those surely slower.
	RankBest  int `json:"rank_best,omitempty"`
	RankWorst int `json:"rank_worst,omitempty"`
	// WithinSpread is true when its range overlaps that of the entry
	// ranked just above it: the spread can swap the two. False for the
	// first, and where the order to the one above is certain.
	WithinSpread bool `json:"within_spread_of_above,omitempty"`
}

// Ranked is an entry to rank: its median epoch and its range (zero: no
// spread, the median alone).
type Ranked struct {
	Median float64
	Range  EpochRange
}

func (r Ranked) bounds() (lo, hi float64) {
	if !r.Range.Has() {
		return r.Median, r.Median
	}
	return r.Range.Low, r.Range.High
}

// Rank places entries (in any order) by median epoch, ties keeping their
// order, and says which places the spread can swap (Place). The places
// come back in the entries' order.
func Rank(entries []Ranked) []Place {
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(entries[a].Median, entries[b].Median) })
	places := make([]Place, len(entries))
	for k, i := range order {
		lo, hi := entries[i].bounds()
		p := Place{Rank: k + 1, RankBest: 1, RankWorst: len(entries)}
		for j, e := range entries {
			if j == i {
				continue
			}
			jlo, jhi := e.bounds()
			switch {
			case jhi < lo:
				p.RankBest++
			case jlo > hi:
				p.RankWorst--
			}
		}
		if k > 0 {
			_, ahi := entries[order[k-1]].bounds()
			p.WithinSpread = ahi >= lo
		}
		places[i] = p
	}
	return places
}

// Span writes the places p's range allows: "3" when it is certain, else
// "2–4".
func (p Place) Span() string {
	if p.RankBest == p.RankWorst {
		return fmt.Sprint(p.RankBest)
	}
	return fmt.Sprintf("%d–%d", p.RankBest, p.RankWorst)
}

// Marked writes p's rank with "≈" when the spread can swap it with the
// place above ("2 ≈"), else the rank alone.
func (p Place) Marked() string {
	if p.WithinSpread {
		return fmt.Sprintf("%d ≈", p.Rank)
	}
	return fmt.Sprint(p.Rank)
}
