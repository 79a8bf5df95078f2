package main

import (
	"fmt"
	"io"

	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/sim"
	"github.com/tierflow/tierflow/sim/sweep"
)

// A device with a measured spread (devices.Spread) adds to the outputs:
// the human table shows each epoch as its median with its range and
// each place with what the spread allows of it; --csv adds the range and
// the places, --json their fields (sim.EpochRange, sim.Place). Without a
// spread the outputs are as they were.

// spreadResult is a row of simulate's human table on a device with a
// spread.
type spreadResult struct {
	sim.Result
	EpochText, RankText, PlacesText string
}

// spreadRow is a row of simulate sweep's human table (with a spread's
// text where the device has one); What is its ordering, or the name of a
// system that keeps every parameter in memory.
type spreadRow struct {
	sweep.Row
	EpochText, RankText, PlacesText string
	What                            string
}

// spreadNote explains the range and the places under a table.
const spreadNote = "epoch: the median (the device's rates as given) and, in brackets, its range over the device's measured spread; " +
	"≈: its range overlaps that of the one ranked just above, so the spread can swap the two (no ≈: that order is certain); places: the ranks its range allows"

// withSpread is cols on a device with a spread: the human table's epoch
// column holds the median and its range (EpochText), the CSV adds the
// range after the epoch; rank, when given, replaces the human table's
// Rank column (sweep) or is added (simulate).
func withSpread(cols plots.Columns, rankCSV bool) plots.Columns {
	var out plots.Columns
	ranked := false
	for _, c := range cols {
		switch c.Field {
		case "EpochSeconds":
			head := c.Head
			c.Head = ""
			out = append(out, c, plots.Column{Field: "EpochText", Head: head, NoCSV: true, Wide: c.Wide},
				plots.Column{Field: "Low", CSVPrec: 3}, plots.Column{Field: "High", CSVPrec: 3})
		case "Rank":
			ranked = true
			out = append(out, plots.Column{Field: "RankText", Head: c.Head, NoCSV: true}, plots.Column{Field: "PlacesText", Head: "places", NoCSV: true})
		default:
			out = append(out, c)
		}
	}
	if !ranked {
		out = append(out, plots.Column{Field: "RankText", Head: "rank", NoCSV: true}, plots.Column{Field: "PlacesText", Head: "places", NoCSV: true})
	}
	if rankCSV {
		out = append(out, plots.Column{Field: "Rank"})
	}
	return append(out, plots.Column{Field: "RankBest"}, plots.Column{Field: "RankWorst"}, plots.Column{Field: "WithinSpread"})
}

// spreadResults are out's results as rows of the table withSpread makes.
func spreadResults(out Output) []spreadResult {
	rows := make([]spreadResult, len(out.Results))
	for i, r := range out.Results {
		rows[i] = spreadResult{Result: r, EpochText: epochText(r.EpochSeconds, r.EpochRange), RankText: r.Place.Marked(), PlacesText: r.Place.Span()}
	}
	return rows
}

// spreadRows are sweep rows as rows of the table withSpread makes.
func spreadRows(rows []sweep.Row) []spreadRow {
	out := make([]spreadRow, len(rows))
	for i, r := range rows {
		out[i] = spreadRow{Row: r, EpochText: epochText(r.EpochSeconds, r.EpochRange), What: r.Ordering}
		if r.InMemory {
			out[i].What = r.System
		}
		if r.Fits {
			p := r.Place()
			out[i].RankText, out[i].PlacesText = p.Marked(), p.Span()
		}
	}
	return out
}

// fastestSpread is what the sweep's "fastest" line adds on a device with
// a spread: the best row's range and how many rows could be fastest.
func fastestSpread(w io.Writer, fit []sweep.Row) {
	b := fit[0]
	if !b.EpochRange.Has() {
		return
	}
	could := 0
	for _, r := range fit {
		if r.RankBest == 1 {
			could++
		}
	}
	fmt.Fprintf(w, "over the device's spread its epoch is %s", epochText(b.EpochSeconds, b.EpochRange))
	if could > 1 {
		fmt.Fprintf(w, "; %d configurations could be the fastest within the spread", could)
	} else {
		fmt.Fprint(w, "; it is the fastest over the whole spread")
	}
	fmt.Fprintln(w)
}

// epochText is an epoch and, when the device has a spread, its range, in
// the unit that fits it (plots.DurationRange).
func epochText(median float64, r sim.EpochRange) string {
	if !r.Has() {
		return plots.Duration(median)
	}
	return plots.DurationRange(median, r.Low, r.High)
}
