package main

import (
	"slices"

	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/validate"
)

// spreadComparison is a row of --compare-sim's human table on a profile
// with a measured spread: the predicted epoch with its range, and whether
// the measured epoch lies within it.
type spreadComparison struct {
	validate.Comparison
	PredictedText, InRangeText string
}

// hasSpread reports whether the comparisons were predicted with a range
// (the profile had a measured spread).
func hasSpread(cs []validate.Comparison) bool {
	return slices.ContainsFunc(cs, func(c validate.Comparison) bool { return c.PredictedRange().Has() })
}

// spreadComparisons are cs as rows of the table comparisonSpreadColumns
// makes.
func spreadComparisons(cs []validate.Comparison) []spreadComparison {
	rows := make([]spreadComparison, len(cs))
	for i, c := range cs {
		rows[i] = spreadComparison{Comparison: c, PredictedText: c.PredictedRange().Text(c.Predicted.EpochSeconds, 1, 2), InRangeText: "no"}
		if c.InRange {
			rows[i].InRangeText = "yes"
		}
	}
	return rows
}

// comparisonSpreadColumns are comparisonColumns on a profile with a
// spread: the predicted epoch with its range and an "in range" column
// after it in the human table; the range and InRange in the CSV.
func comparisonSpreadColumns(cols plots.Columns) plots.Columns {
	var out plots.Columns
	for _, c := range cols {
		if c.Field != "Predicted.EpochSeconds" {
			out = append(out, c)
			continue
		}
		head := c.Head
		c.Head = ""
		out = append(out, c,
			plots.Column{Field: "PredictedText", Head: head + " (range)", NoCSV: true, Wide: c.Wide},
			plots.Column{Field: "PredictedLow", CSVPrec: 2}, plots.Column{Field: "PredictedHigh", CSVPrec: 2},
			plots.Column{Field: "InRangeText", Head: "in\nrange", NoCSV: true, Wide: c.Wide},
			plots.Column{Field: "InRange"})
	}
	return out
}
