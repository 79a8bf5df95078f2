package plots

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sample = Table{
	Header: []string{"policy", "p99 (ms)", "hit %"},
	Rows: [][]string{
		{"lru", "12.5", "81%"},
		{"a|b", "3", "9.5%"},
	},
}

func TestTableMarkdown(t *testing.T) {
	tests := []struct {
		name    string
		table   Table
		want    string
		wantErr string
	}{
		{
			name:  "numeric columns right-aligned, pipe escaped",
			table: sample,
			want: "| policy | p99 (ms) | hit % |\n" +
				"| --- | ---: | ---: |\n" +
				"| lru | 12.5 | 81% |\n" +
				"| a\\|b | 3 | 9.5% |\n",
		},
		{
			name:  "header only",
			table: Table{Header: []string{"a", "b"}},
			want:  "| a | b |\n| --- | --- |\n",
		},
		{
			name:    "no header",
			table:   Table{Rows: [][]string{{"x"}}},
			wantErr: "needs a header",
		},
		{
			name:    "ragged",
			table:   Table{Header: []string{"a", "b"}, Rows: [][]string{{"1"}}},
			wantErr: "row 0 has 1 cells, want 2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tc.table.Markdown(&buf)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, buf.String())
		})
	}
}

func TestTableCSV(t *testing.T) {
	tests := []struct {
		name    string
		table   Table
		want    string
		wantErr bool
	}{
		{
			name:  "sample",
			table: sample,
			want:  "policy,p99 (ms),hit %\nlru,12.5,81%\na|b,3,9.5%\n",
		},
		{
			name:  "quoting",
			table: Table{Header: []string{"k", "v"}, Rows: [][]string{{"a,b", `say "hi"`}}},
			want:  "k,v\n\"a,b\",\"say \"\"hi\"\"\"\n",
		},
		{
			name:    "ragged",
			table:   Table{Header: []string{"a"}, Rows: [][]string{{"1", "2"}}},
			wantErr: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			err := tc.table.CSV(&buf)
			if tc.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, buf.String())
		})
	}
}

func TestTableRender(t *testing.T) {
	tests := []struct {
		name  string
		table Table
	}{
		{"sample", sample},
		{"no header", Table{Rows: [][]string{{"lru", "12.5"}}}},
		{"empty", Table{Header: []string{"policy"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			require.NoError(t, tc.table.Render(&buf))
			out := buf.String()
			for _, h := range tc.table.Header {
				assert.Contains(t, out, h)
			}
			for _, r := range tc.table.Rows {
				for _, c := range r {
					assert.Contains(t, out, c)
				}
			}
		})
	}
	var buf bytes.Buffer
	require.Error(t, Table{Header: []string{"a"}, Rows: [][]string{{}}}.Render(&buf))
}

func goodLine(logY bool) LineChart {
	return LineChart{
		Title: "latency", XLabel: "load", YLabel: "ms", LogY: logY,
		Series: []Series{
			{Name: "lru", X: []float64{1, 2, 3}, Y: []float64{1, 10, 100}},
			{Name: "arc", X: []float64{1, 2, 3}, Y: []float64{2, 5, 50}},
		},
	}
}

func goodBar(logY bool) BarChart {
	return BarChart{
		Title: "throughput", YLabel: "ops/s", LogY: logY,
		Categories: []string{"small", "medium", "large"},
		Series: []BarSeries{
			{Name: "lru", Values: []float64{100, 2000, 30000}},
			{Name: "arc", Values: []float64{150, 1800, 25000}},
			{Name: "fifo", Values: []float64{90, 1000, 1}},
		},
	}
}

type saver interface{ Save(string) error }

// dirEntries lists the names in dir, sorted.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	require.NoError(t, err)
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	return names
}

func TestChartSave(t *testing.T) {
	charts := []struct {
		name  string
		chart saver
	}{
		{"line", goodLine(false)},
		{"line log", goodLine(true)},
		{"line single point", LineChart{Series: []Series{{Name: "one", X: []float64{1}, Y: []float64{5}}}, LogY: true}},
		{"bar", goodBar(false)},
		{"bar log", goodBar(true)},
		{"bar negative", BarChart{Categories: []string{"a", "b"}, Series: []BarSeries{{Name: "s", Values: []float64{-1, 2}}}}},
	}
	for _, tc := range charts {
		for _, ext := range []string{".png", ".svg", ".PNG"} {
			t.Run(tc.name+ext, func(t *testing.T) {
				dir := t.TempDir()
				path := filepath.Join(dir, "chart"+ext)
				require.NoError(t, tc.chart.Save(path))
				data, err := os.ReadFile(path)
				require.NoError(t, err)
				require.NotEmpty(t, data)
				if strings.EqualFold(ext, ".png") {
					assert.True(t, bytes.HasPrefix(data, []byte("\x89PNG\r\n\x1a\n")), "PNG magic")
				} else {
					assert.Contains(t, string(data), "<svg")
				}
				assert.Equal(t, []string{"chart" + ext}, dirEntries(t, dir))
			})
		}
	}
}

func TestChartSaveErrors(t *testing.T) {
	zeroLine := goodLine(true)
	zeroLine.Series[1].Y = []float64{1, 0, 2}
	zeroBar := goodBar(true)
	zeroBar.Series[0].Values[1] = 0
	tests := []struct {
		name    string
		chart   saver
		file    string
		wantErr string
	}{
		{"line bad ext", goodLine(false), "chart.pdf", "chart.pdf"},
		{"line no ext", goodLine(false), "chart", "unsupported extension"},
		{"bar bad ext", goodBar(false), "chart.jpg", "chart.jpg"},
		{"line len mismatch", LineChart{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}, "c.png", "len(X)=2 != len(Y)=1"},
		{"line no series", LineChart{}, "c.png", "no series"},
		{"line empty series", LineChart{Series: []Series{{Name: "s"}}}, "c.svg", "no points"},
		{"line NaN", LineChart{Series: []Series{{Name: "s", X: []float64{1}, Y: []float64{nan()}}}}, "c.png", "NaN"},
		{"line Inf X", LineChart{Series: []Series{{Name: "s", X: []float64{inf()}, Y: []float64{1}}}}, "c.png", "+Inf"},
		{"line log zero", zeroLine, "c.png", "not positive"},
		{"bar len mismatch", BarChart{Categories: []string{"a", "b"}, Series: []BarSeries{{Name: "s", Values: []float64{1}}}}, "c.png", "1 values for 2 categories"},
		{"bar no categories", BarChart{Series: []BarSeries{{Name: "s"}}}, "c.png", "no categories"},
		{"bar no series", BarChart{Categories: []string{"a"}}, "c.svg", "no series"},
		{"bar Inf", BarChart{Categories: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{inf()}}}}, "c.png", "Inf"},
		{"bar log zero", zeroBar, "c.svg", "not positive"},
		{"bar log negative", BarChart{LogY: true, Categories: []string{"a"}, Series: []BarSeries{{Name: "s", Values: []float64{-3}}}}, "c.png", "not positive"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			err := tc.chart.Save(filepath.Join(dir, tc.file))
			require.ErrorContains(t, err, tc.wantErr)
			assert.Empty(t, dirEntries(t, dir), "no file or temp file left behind")
		})
	}
}

func TestChartSaveMissingDir(t *testing.T) {
	dir := t.TempDir()
	err := goodLine(false).Save(filepath.Join(dir, "missing", "c.png"))
	require.Error(t, err)
	assert.Empty(t, dirEntries(t, dir), "no directory created")
}

func TestChartSaveOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c.svg")
	require.NoError(t, os.WriteFile(path, []byte("old"), 0o644))
	require.NoError(t, goodBar(false).Save(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(data), "<svg")
	assert.Equal(t, []string{"c.svg"}, dirEntries(t, dir))
}

func nan() float64 { var z float64; return z / z }
func inf() float64 { var z float64; return 1 / z }

func TestSaveStack(t *testing.T) {
	dir := t.TempDir()
	line := LineChart{Title: "t", XLabel: "x", YLabel: "y", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{3, 4}}}}
	bar := BarChart{Title: "b", YLabel: "s", Categories: []string{"u", "v"}, Series: []BarSeries{{Name: "a", Values: []float64{1, 2}}}}
	for _, ext := range []string{".png", ".svg"} {
		path := filepath.Join(dir, "stack"+ext)
		require.NoError(t, SaveStack(path, bar, line))
		st, err := os.Stat(path)
		require.NoError(t, err)
		assert.Positive(t, st.Size())
	}
	assert.Error(t, SaveStack(filepath.Join(dir, "x.png")))
	assert.Error(t, SaveStack(filepath.Join(dir, "x.gif"), line))
}

// TestNumericColumnsMissing: a column of numbers with some absent is
// right-aligned, and so is one whose numbers are all absent (an epoch
// table before its first evaluation); names and empty cells are not.
func TestNumericColumnsMissing(t *testing.T) {
	tab := Table{Header: []string{"name", "some", "none", "empty"}, Rows: [][]string{
		{"a", "1.5", Missing, ""},
		{"b", Missing, Missing, ""},
	}}
	assert.Equal(t, []bool{false, true, true, false}, tab.numericColumns(4))
}
