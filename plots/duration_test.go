package plots

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestDuration(t *testing.T) {
	for _, tt := range []struct {
		seconds float64
		want    string
	}{
		{0, "0 s"},
		{3e-10, "<0.001 ms"},
		{2.5e-6, "0.00250 ms"},
		{0.000123, "0.123 ms"},
		{0.0042, "4.20 ms"},
		{0.0125, "12.5 ms"},
		{0.85, "850 ms"},
		{0.9996, "1.00 s"}, // rounds into the next unit
		{1, "1.00 s"},
		{9.996, "10.0 s"}, // rounds into one more digit
		{12.34, "12.3 s"},
		{59.9, "59.9 s"},
		{59.96, "1.00 min"},
		{60, "1.00 min"},
		{256.2, "4.27 min"},
		{45 * 60, "45.0 min"},
		{3599, "1.00 h"},
		{5472, "1.52 h"},
		{100 * 3600, "100 h"},
		{1234.4 * 3600, "1234 h"},
		{1234.6 * 3600, "1235 h"},
		{-90, "-1.50 min"},
		{math.Inf(1), "+Inf s"},
	} {
		assert.Equal(t, tt.want, Duration(tt.seconds), "%v s", tt.seconds)
		if tt.seconds > 0 {
			assert.NotContains(t, Duration(tt.seconds), "0.0 min", "never a time as zero minutes")
		}
	}
}

func TestDurationRange(t *testing.T) {
	for _, tt := range []struct {
		median, low, high float64
		want              string
	}{
		{256.2, 234, 276.6, "4.27 min (3.90–4.61)"},
		{0.0125, 0.011, 0.0141, "12.5 ms (11.0–14.1)"},
		{5472, 5000, 6000, "1.52 h (1.39–1.67)"},
		{0, 0, 0, "0 s (0 s–0 s)"},
	} {
		assert.Equal(t, tt.want, DurationRange(tt.median, tt.low, tt.high))
	}
}

func TestDurationUnit(t *testing.T) {
	for _, tt := range []struct {
		seconds float64
		name    string
		secs    float64
	}{
		{0, "s", 1}, {0.2, "ms", 1e-3}, {30, "s", 1}, {600, "min", 60}, {7200, "h", 3600},
	} {
		name, secs := DurationUnit(tt.seconds)
		assert.Equal(t, tt.name, name, "%v s", tt.seconds)
		assert.Equal(t, tt.secs, secs, "%v s", tt.seconds)
	}
}

// TestSecondsColumn: a Seconds column writes each cell in its own unit in
// the human table, seconds in the CSV, and the table right-aligns it.
func TestSecondsColumn(t *testing.T) {
	type row struct {
		Name         string   `json:"name"`
		EpochSeconds float64  `json:"epoch_seconds"`
		Stall        *float64 `json:"stall_seconds"`
	}
	stall := 0.004
	cols := Columns{
		{Field: "Name", Head: "name"},
		{Field: "EpochSeconds", Head: "epoch", Seconds: true, CSVPrec: 3},
		{Field: "Stall", Head: "stall", Seconds: true, CSVPrec: 3},
	}
	rows := []row{{"tiny", 0.0125, &stall}, {"big", 5472, nil}}
	assert.Equal(t, [][]string{{"tiny", "12.5 ms", "4.00 ms"}, {"big", "1.52 h", Missing}}, cols.Human(rows).Rows)
	assert.Equal(t, [][]string{{"tiny", "0.013", "0.004"}, {"big", "5472.000", ""}}, cols.CSV(rows).Rows)
	assert.Equal(t, []bool{false, true, true}, cols.Human(rows).numericColumns(3))
}

func TestZeroMissingColumn(t *testing.T) {
	type row struct {
		P        int    `json:"p"`
		Ordering string `json:"ordering"`
	}
	cols := Columns{{Field: "P", Head: "p", ZeroMissing: true}, {Field: "Ordering", Head: "ordering", ZeroMissing: true}}
	rows := []row{{8, "beta"}, {0, ""}}
	assert.Equal(t, [][]string{{"8", "beta"}, {Missing, Missing}}, cols.Human(rows).Rows)
	assert.Equal(t, [][]string{{"8", "beta"}, {"0", ""}}, cols.CSV(rows).Rows)
}
