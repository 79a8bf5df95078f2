package plots

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// report stands for sim.Report: a newcomer adds a metric by adding the
// field (StallShare below) and one Column — the CSV header comes from the
// JSON tag, the human header from the Column.
type report struct {
	Counts
	EpochSeconds float64 `json:"epoch_seconds"`
	StallShare   float64 `json:"stall_share"` // the new metric: line 1
}

type Counts struct {
	Swaps int `json:"swaps"`
}

type row struct {
	report
	Ordering string `json:"ordering"`
	Nested   report `json:"nested"`
}

func TestColumnsDeriveCSVAndTable(t *testing.T) {
	cols := Columns{
		{Field: "Ordering", Head: "ordering"},
		{Field: "Swaps", Head: "swaps"},
		{Field: "EpochSeconds", Head: "epoch min", Scale: 1.0 / 60, Prec: 1, CSVPrec: 3},
		{Field: "StallShare", Head: "stall %", Scale: 100, Prec: 0, CSVPrec: 4}, // the new metric: line 2
		{Field: "Nested.EpochSeconds", CSVPrec: 1},
		{Field: "Nested.Swaps", Key: "nested_swap_count", Head: "n"},
	}
	rows := []row{{report: report{Counts{3}, 120, 0.25}, Ordering: "beta", Nested: report{Counts{7}, 1.5, 0}}}
	csv := cols.CSV(rows)
	assert.Equal(t, []string{"ordering", "swaps", "epoch_seconds", "stall_share", "nested_epoch_seconds", "nested_swap_count"}, csv.Header)
	assert.Equal(t, [][]string{{"beta", "3", "120.000", "0.2500", "1.5", "7"}}, csv.Rows)
	human := cols.Human(rows)
	assert.Equal(t, []string{"ordering", "swaps", "epoch min", "stall %", "n"}, human.Header)
	assert.Equal(t, [][]string{{"beta", "3", "2.0", "25", "7"}}, human.Rows)
	var buf bytes.Buffer
	require.NoError(t, human.Render(&buf))
	assert.Contains(t, buf.String(), "stall %")
	assert.Equal(t, []string{"ordering"}, cols[:1].Keys(row{}))
	assert.Equal(t, []string{"ordering", "swaps", "epoch min", "stall %"}, cols[:4].DropHuman("Nested.Swaps").Human(rows).Header)
	assert.Equal(t, []string{"ordering", "epoch min", "stall %"}, cols[:4].DropHuman("Swaps").Human(rows).Header)
}

func TestColumnsPanicOnAMisspelledField(t *testing.T) {
	assert.Panics(t, func() { Columns{{Field: "Nope", Head: "x"}}.Human([]row{{}}) })
	assert.Panics(t, func() { Columns{{Field: "Nope"}}.CSV([]row{{}}) })
}

// TestColumnsWide: a Wide column is in the CSV but only in the human
// table of All (--wide); Select picks between them.
func TestColumnsWide(t *testing.T) {
	cols := Columns{
		{Field: "Ordering", Head: "ordering"},
		{Field: "Swaps", Head: "swaps", Wide: true},
		{Field: "EpochSeconds", Head: "epoch s", Prec: 1},
	}
	rows := []row{{report: report{Counts{3}, 120, 0}, Ordering: "beta"}}
	assert.Equal(t, []string{"ordering", "epoch s"}, cols.Human(rows).Header)
	assert.Equal(t, [][]string{{"beta", "120.0"}}, cols.Human(rows).Rows)
	assert.Equal(t, []string{"ordering", "swaps", "epoch s"}, cols.All().Human(rows).Header)
	assert.Equal(t, cols.All(), cols.Select(true))
	assert.Equal(t, cols, cols.Select(false))
	assert.True(t, cols[1].Wide, "All copies; the list is unchanged")
	assert.Equal(t, []string{"ordering", "swaps", "epoch_seconds"}, cols.CSV(rows).Header)
	var buf bytes.Buffer
	require.NoError(t, cols.Human(rows).Render(&buf))
	assert.Equal(t, 22, Width(buf.String()), buf.String())
}
