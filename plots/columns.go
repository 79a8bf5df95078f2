package plots

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
)

// Column declares one column of a command's output once: the human table
// and the CSV are both derived from it, and the CSV header is the field's
// JSON name, so a field's machine name is written in exactly one place (its
// struct tag). Adding a metric to an output is adding the field to its
// struct and one Column to its list.
type Column struct {
	// Field is the Go field of the row, a dotted path through nested or
	// embedded structs ("Measured.EpochSeconds"); promoted fields of
	// embedded structs may be named directly.
	Field string
	// Key overrides the CSV header; by default it is the JSON names along
	// the path joined with "_" ("measured_epoch_seconds").
	Key string
	// Head is the human table's header; empty leaves the column out of the
	// human table.
	Head string
	// Scale multiplies the value in the human table (0 means 1): 1e-9 for
	// GB, 100 for a percentage.
	Scale float64
	// Seconds: the value is a time in seconds, and the human table writes
	// each cell in the unit that fits it (Duration: "850 ms", "4.27 min");
	// Scale and Prec then play no part. The CSV keeps seconds.
	Seconds bool
	// Prec is the number of decimals of a float (or scaled) value in the
	// human table; CSVPrec in the CSV.
	Prec, CSVPrec int
	// ZeroMissing: a zero value (0, "") is absent from a row (a row with
	// no p, say), and the human table writes Missing; the CSV keeps it.
	ZeroMissing bool
	// NoCSV leaves the column out of the CSV.
	NoCSV bool
	// Wide leaves the column out of the default human table, which fits
	// a 100-column terminal: it is shown only by the table of All (a
	// command's --wide). The CSV and the JSON always carry it.
	Wide bool
}

// Columns is an output's column list.
type Columns []Column

// Human returns the human table of rows (a slice of structs): the
// columns with a Head that are not Wide.
func (cs Columns) Human(rows any) Table { return cs.table(rows, true) }

// All returns a copy of cs whose human table shows every column with a
// Head, the Wide ones included (a command's --wide).
func (cs Columns) All() Columns {
	out := append(Columns(nil), cs...)
	for i := range out {
		out[i].Wide = false
	}
	return out
}

// Select is cs for a human table: All when wide, else cs.
func (cs Columns) Select(wide bool) Columns {
	if wide {
		return cs.All()
	}
	return cs
}

// shown reports whether c is a column of the human table (human) or of
// the CSV.
func (c Column) shown(human bool) bool {
	if human {
		return c.Head != "" && !c.Wide
	}
	return !c.NoCSV
}

// CSV returns the machine table of rows: the header is the JSON names.
func (cs Columns) CSV(rows any) Table { return cs.table(rows, false) }

// Keys returns the CSV header of rows of type T.
func (cs Columns) Keys(row any) []string {
	t := reflect.TypeOf(row)
	var keys []string
	for _, c := range cs {
		if !c.NoCSV {
			keys = append(keys, c.key(t))
		}
	}
	return keys
}

func (cs Columns) table(rows any, human bool) Table {
	rv := reflect.ValueOf(rows)
	if rv.Kind() != reflect.Slice {
		panic(fmt.Sprintf("plots: Columns want a slice of rows, got %T", rows))
	}
	var t Table
	et := rv.Type().Elem()
	for _, c := range cs {
		switch {
		case !c.shown(human):
		case human:
			t.Header = append(t.Header, c.Head)
		default:
			t.Header = append(t.Header, c.key(et))
		}
	}
	for i := 0; i < rv.Len(); i++ {
		row := rv.Index(i)
		var cells []string
		for _, c := range cs {
			switch {
			case !c.shown(human):
			case human && c.ZeroMissing && c.isZero(row):
				cells = append(cells, Missing)
			case human && c.Seconds:
				cells = append(cells, c.duration(row))
			case human:
				cells = append(cells, c.format(row, c.Scale, c.Prec, Missing))
			default:
				cells = append(cells, c.format(row, 0, c.CSVPrec, ""))
			}
		}
		t.Rows = append(t.Rows, cells)
	}
	return t
}

// key is the CSV header of c in rows of type t.
func (c Column) key(t reflect.Type) string {
	if c.Key != "" {
		return c.Key
	}
	var parts []string
	for _, name := range strings.Split(c.Field, ".") {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		f, ok := t.FieldByName(name)
		if !ok {
			panic(fmt.Sprintf("plots: %s has no field %s", t, c.Field))
		}
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "" || tag == "-" {
			panic(fmt.Sprintf("plots: field %s of %s has no JSON name: give the Column a Key", c.Field, t))
		}
		parts = append(parts, tag)
		t = f.Type
	}
	return strings.Join(parts, "_")
}

// Missing is what the human table prints for a value that is absent (a
// nil pointer on the field's path, such as an evaluation that was
// skipped); the CSV leaves the cell empty.
const Missing = "—"

// duration renders the field of row, a time in seconds, in its unit
// (Duration), or Missing when a pointer on its path is nil.
func (c Column) duration(row reflect.Value) string {
	v, ok := c.value(row)
	if !ok {
		return Missing
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return Duration(float64(v.Int()))
	case reflect.Float32, reflect.Float64:
		return Duration(v.Float())
	}
	panic(fmt.Sprintf("plots: field %s is a %s, not a time in seconds", c.Field, v.Kind()))
}

// isZero reports whether the field of row is its type's zero value (or
// absent).
func (c Column) isZero(row reflect.Value) bool {
	v, ok := c.value(row)
	return !ok || v.IsZero()
}

// value is the field of row; false when a pointer on its path is nil.
func (c Column) value(row reflect.Value) (reflect.Value, bool) {
	v := row
	for _, name := range strings.Split(c.Field, ".") {
		for v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return v, false
			}
			v = v.Elem()
		}
		v = v.FieldByName(name)
		if !v.IsValid() {
			panic(fmt.Sprintf("plots: %s has no field %s", row.Type(), c.Field))
		}
	}
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

// format renders the field of row, scaled (scale 0: as it is), or missing
// when a pointer on its path is nil.
func (c Column) format(row reflect.Value, scale float64, prec int, missing string) string {
	v, ok := c.value(row)
	if !ok {
		return missing
	}
	var x float64
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if scale == 0 {
			return strconv.FormatInt(v.Int(), 10)
		}
		x = float64(v.Int())
	case reflect.Float32, reflect.Float64:
		x = v.Float()
		if scale == 0 {
			scale = 1
		}
	default:
		panic(fmt.Sprintf("plots: field %s is a %s, not a number, string or bool", c.Field, v.Kind()))
	}
	// A scale below one that is the inverse of a whole number (1/60,
	// 1e-9) divides, so the value rounds as x ÷ 60 or x ÷ 1e9 would:
	// 43.05e9 × 1e-9 is 43.050000000000004, 43.05e9 ÷ 1e9 is 43.05.
	if inv := math.Round(1 / scale); scale < 1 && math.Abs(inv*scale-1) < 1e-12 {
		return strconv.FormatFloat(x/inv, 'f', prec, 64)
	}
	return strconv.FormatFloat(x*scale, 'f', prec, 64)
}

// DropHuman returns a copy of cs without the named field in the human
// table (the CSV keeps it).
func (cs Columns) DropHuman(field string) Columns {
	out := append(Columns(nil), cs...)
	for i := range out {
		if out[i].Field == field {
			out[i].Head = ""
		}
	}
	return out
}
