// Package plots renders experiment results as terminal/Markdown/CSV tables (tablewriter) and PNG/SVG charts (gonum/plot).
package plots

import (
	"encoding/csv"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
)

// Table is a rectangular table of already-formatted cells.
type Table struct {
	Header []string
	Rows   [][]string
}

// columns returns the number of columns of t and checks that every row has
// exactly that many cells. The width is taken from the header, or from the
// first row when there is no header.
func (t Table) columns() (int, error) {
	n := len(t.Header)
	if n == 0 && len(t.Rows) > 0 {
		n = len(t.Rows[0])
	}
	for i, r := range t.Rows {
		if len(r) != n {
			return 0, fmt.Errorf("plots: table row %d has %d cells, want %d", i, len(r), n)
		}
	}
	return n, nil
}

// numericColumns reports, per column, whether every non-empty body cell
// other than Missing looks like a number (optionally followed by '%' or 'x'), so it can be right-aligned;
// a column of nothing but Missing is numeric too (its numbers are all absent).
func (t Table) numericColumns(n int) []bool {
	num := make([]bool, n)
	for c := range n {
		seen := false // a number, or Missing (an absent number)
		ok := true
		for _, r := range t.Rows {
			s := strings.TrimSpace(r[c])
			if s == Missing {
				seen = true
			}
			if s == "" || s == Missing {
				continue
			}
			seen = true
			if !isNumber(s) {
				ok = false
				break
			}
		}
		num[c] = seen && ok
	}
	return num
}

func isNumber(s string) bool {
	if isDuration(s) {
		return true
	}
	s = strings.TrimSuffix(strings.TrimSuffix(s, "%"), "x")
	s = strings.ReplaceAll(s, ",", "")
	_, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil
}

// Render writes t as a human-readable terminal table. Columns whose cells are
// all numeric are right-aligned.
func (t Table) Render(w io.Writer) error {
	n, err := t.columns()
	if err != nil {
		return err
	}
	aligns := make([]tw.Align, n)
	for i, isNum := range t.numericColumns(n) {
		aligns[i] = tw.AlignLeft
		if isNum {
			aligns[i] = tw.AlignRight
		}
	}
	tbl := tablewriter.NewTable(w)
	tbl.Configure(func(cfg *tablewriter.Config) {
		cfg.Header.Formatting.AutoFormat = tw.Off
		cfg.Row.Alignment.PerColumn = aligns
	})
	if len(t.Header) > 0 {
		tbl.Header(t.Header)
	}
	for i, r := range t.Rows {
		if err := tbl.Append(r); err != nil {
			return fmt.Errorf("plots: table row %d: %w", i, err)
		}
	}
	if err := tbl.Render(); err != nil {
		return fmt.Errorf("plots: render table: %w", err)
	}
	return nil
}

// Markdown writes t as a GitHub-flavoured Markdown pipe table. Numeric columns
// are right-aligned; '|' in cells is escaped and line breaks become "<br>".
// A header is required.
func (t Table) Markdown(w io.Writer) error {
	n, err := t.columns()
	if err != nil {
		return err
	}
	if len(t.Header) == 0 {
		return fmt.Errorf("plots: markdown table needs a header")
	}
	var b strings.Builder
	writeRow := func(cells []string) {
		b.WriteString("|")
		for _, c := range cells {
			b.WriteString(" ")
			b.WriteString(escapeMarkdown(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	writeRow(t.Header)
	b.WriteString("|")
	for _, isNum := range t.numericColumns(n) {
		if isNum {
			b.WriteString(" ---: |")
		} else {
			b.WriteString(" --- |")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		writeRow(r)
	}
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("plots: write markdown table: %w", err)
	}
	return nil
}

var markdownEscaper = strings.NewReplacer("|", `\|`, "\r\n", "<br>", "\n", "<br>", "\r", "<br>")

func escapeMarkdown(s string) string {
	return markdownEscaper.Replace(s)
}

// CSV writes t with encoding/csv, header row first (if any).
func (t Table) CSV(w io.Writer) error {
	if _, err := t.columns(); err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	if len(t.Header) > 0 {
		if err := cw.Write(t.Header); err != nil {
			return fmt.Errorf("plots: write csv header: %w", err)
		}
	}
	if err := cw.WriteAll(t.Rows); err != nil {
		return fmt.Errorf("plots: write csv rows: %w", err)
	}
	return nil
}

// Width is the width in terminal columns of the widest line of s, a
// rendered table (one column a rune: box drawing and the symbols our
// headers use are one column wide).
func Width(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, utf8.RuneCountInString(line))
	}
	return w
}
