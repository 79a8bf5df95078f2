package eval

import (
	"bufio"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
)

// ExportFormats are the export formats: ExportFile's and ExportRelations'
// (npy, tsv, csv), and pbg (PyTorch-BigGraph's checkpoint layout, a
// directory: realrun/pbgio).
var ExportFormats = []string{"npy", "tsv", "csv", "pbg"}

// extFormats are the export formats a file's extension names.
var extFormats = map[string]string{".npy": "npy", ".tsv": "tsv", ".txt": "tsv", ".csv": "csv"}

// FormatError is why ExportFormat refuses an export: Format is not one
// of ExportFormats (Unknown), or Path's extension Ext names no format
// and none is given (Format ""), or it names Want, another format than
// the one given.
type FormatError struct {
	Path, Ext, Format, Want string
	Unknown                 bool
}

func (e *FormatError) Error() string {
	switch {
	case e.Unknown:
		return fmt.Sprintf("unknown export format %q (want %s)", e.Format, FormatList())
	case e.Want != "":
		return fmt.Sprintf("%s: a %s file, but the format is %s (%s writes it)", e.Path, e.Ext, e.Format, e.Want)
	case e.Ext == "":
		return fmt.Sprintf("%s: no extension to tell the export format by (%s); name one or give the format (%s)", e.Path, ExtList(), FormatList())
	}
	return fmt.Sprintf("%s: cannot tell the export format from the extension %q (%s); name one or give the format (%s)", e.Path, e.Ext, ExtList(), FormatList())
}

// FormatList is "npy, tsv, csv or pbg".
func FormatList() string {
	return strings.Join(ExportFormats[:len(ExportFormats)-1], ", ") + " or " + ExportFormats[len(ExportFormats)-1]
}

// ExtList is ".npy, .tsv, .txt or .csv", the extensions that name a format.
func ExtList() string { return ".npy, .tsv, .txt or .csv" }

// ExportFormat is the format an export to path is written in, the same
// for every export (training's and a trained work directory's): format
// when given (one of ExportFormats, in any case), else the one path's
// extension names, in any case — .npy npy, .tsv and .txt tsv, .csv csv.
// It refuses (*FormatError) an unknown format, a path whose extension
// names none when no format is given, and one whose extension names
// another format than the one given (pbg, a directory, takes any name).
func ExportFormat(path, format string) (string, error) {
	ext := strings.ToLower(filepath.Ext(path))
	want := extFormats[ext]
	if format == "" {
		if want == "" {
			return "", &FormatError{Path: path, Ext: filepath.Ext(path)}
		}
		return want, nil
	}
	f := strings.ToLower(strings.TrimSpace(format))
	if !slices.Contains(ExportFormats, f) {
		return "", &FormatError{Path: path, Format: format, Unknown: true}
	}
	if f != "pbg" && want != "" && want != f {
		return "", &FormatError{Path: path, Ext: ext, Format: f, Want: want}
	}
	return f, nil
}

// ExportFile writes the node embeddings of the store's current checkpoint
// to path, atomically, in input id order (row i is node i of the input),
// holding one partition in memory at a time:
//
//   - "npy": a NumPy .npy array of float32, nodes × d; each partition's
//     rows are written at their offsets in the file.
//   - "tsv": lines "name<TAB>v1 v2 …", names from the work directory's
//     ids.tsv (the node's number without one). A typed work directory's
//     lines have a type column first: "type<TAB>name<TAB>v1 v2 …" (names
//     are per type), in input id order, which is type after type in the
//     schema's order (npy's rows too). Each partition's lines
//     are written to a sorted run beside path, and the runs are merged in
//     id order while ids.tsv is read once, front to back.
//   - "csv": the same as rows "name,v1,v2,…" ("type,name,v1,v2,…" when
//     typed; RFC 4180: a name holding a comma, a quote, a line break or
//     leading or trailing space is quoted); no header row.
//
// Besides a partition (and a typed directory's resident table), it holds
// the relabelling (4 bytes a node).
func ExportFile(path, format string, st *store.Store) error {
	// The npy header is at most a few hundred bytes; tsv needs about
	// twice the binary size (and as much again for the runs).
	need := st.M.Nodes*int64(st.M.Dim)*4 + 256
	var err error
	switch format {
	case "npy":
		err = atomicfile.Write(path, func(w io.Writer) error {
			wa, ok := w.(io.WriterAt)
			if !ok {
				return fmt.Errorf("npy export needs a file it can write at offsets")
			}
			return exportNPY(w, wa, st)
		})
	case "tsv", "csv":
		need *= 4
		err = atomicfile.Write(path, func(w io.Writer) error { return exportText(w, path, st, textFormats[format]) })
	default:
		return fmt.Errorf("unknown export format %q (want npy, tsv or csv)", format)
	}
	return store.SpaceError(path, need, err)
}

// npyHeader is the .npy header of a little-endian float32 array of the
// given shape: magic, version 1.0, header length, and the header padded
// with spaces so the data starts at a multiple of 64 bytes.
func npyHeader(shape ...int64) []byte {
	dims := make([]string, len(shape))
	for i, n := range shape {
		dims[i] = strconv.FormatInt(n, 10)
	}
	s := strings.Join(dims, ", ")
	if len(shape) == 1 {
		s += ","
	}
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }", s)
	total := 10 + len(header) + 1
	header += fmt.Sprintf("%*s\n", (64-total%64)%64, "")
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(header)))
	return append(out, header...)
}

// partitions streams the current checkpoint's partitions one at a time
// (checked against their checksums), then its resident table if it has
// one, and calls fn with each one's first store node and embeddings.
func partitions(st *store.Store, fn func(lo int64, emb []float32) error) error {
	r := &ranker{st: st, d: st.M.Dim, progress: func(string, int, int) {}}
	return r.stream(AllParts(st.M), 1, "export", func(p int, emb []float32) error {
		lo, _ := Span(st.M, p)
		return fn(lo, emb)
	})
}

// exportNPY writes the header through w and every row at its offset
// through wa.
func exportNPY(w io.Writer, wa io.WriterAt, st *store.Store) error {
	header := npyHeader(st.M.Nodes, int64(st.M.Dim))
	if _, err := w.Write(header); err != nil {
		return err
	}
	inv, err := inverseOf(st)
	if err != nil {
		return err
	}
	d := st.M.Dim
	rowBytes := int64(d) * 4
	buf := make([]byte, rowBytes)
	return partitions(st, func(lo int64, emb []float32) error {
		for j := 0; j*d < len(emb); j++ {
			for k, x := range emb[j*d : (j+1)*d] {
				binary.LittleEndian.PutUint32(buf[4*k:], math.Float32bits(x))
			}
			if _, err := wa.WriteAt(buf, int64(len(header))+int64(inv[lo+int64(j)])*rowBytes); err != nil {
				return err
			}
		}
		return nil
	})
}

// inverseOf returns, for every store row, its node's input id.
func inverseOf(st *store.Store) ([]int32, error) {
	perm, err := st.Permutation()
	if err != nil {
		return nil, err
	}
	inv := make([]int32, len(perm))
	for i, v := range perm {
		inv[v] = int32(i)
	}
	return inv, nil
}

// textFormat is how a text export writes a row: the name, then sep,
// then the values separated by valueSep; quote, if set, quotes a name
// that needs it.
type textFormat struct {
	sep, valueSep byte
	quote         func(string) string
}

var textFormats = map[string]textFormat{
	"tsv": {sep: '\t', valueSep: ' '},
	"csv": {sep: ',', valueSep: ',', quote: csvField},
}

// csvField is name as an RFC 4180 field: quoted, its quotes doubled,
// when it holds a comma, a quote, a line break or leading or trailing
// space.
func csvField(name string) string {
	if name == "" || !strings.ContainsAny(name, ",\"\r\n") && strings.TrimSpace(name) == name {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}

// formatRow appends the values of one row, separated by sep.
func formatRow(b []byte, row []float32, sep byte) []byte {
	for k, x := range row {
		if k > 0 {
			b = append(b, sep)
		}
		b = strconv.AppendFloat(b, float64(x), 'g', 7, 32)
	}
	return b
}

// exportText writes one sorted run per partition ("id<TAB>values" lines
// in input id order, the values as tf writes them) into a temporary
// directory beside path, then merges them into w, naming each node from
// ids.tsv read front to back.
func exportText(w io.Writer, path string, st *store.Store, tf textFormat) (err error) {
	inv, err := inverseOf(st)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(path), "."+filepath.Base(path)+".runs-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	d := st.M.Dim
	var runs []string
	err = partitions(st, func(lo int64, emb []float32) error {
		n := len(emb) / d
		order := make([]int, n)
		for j := range order {
			order[j] = j
		}
		slices.SortFunc(order, func(a, b int) int { return int(inv[lo+int64(a)]) - int(inv[lo+int64(b)]) })
		name := filepath.Join(tmp, fmt.Sprintf("run-%06d", len(runs)))
		runs = append(runs, name)
		f, err := os.Create(name)
		if err != nil {
			return err
		}
		bw := bufio.NewWriterSize(f, 1<<16)
		var line []byte
		for _, j := range order {
			line = strconv.AppendInt(line[:0], int64(inv[lo+int64(j)]), 10)
			line = append(line, '\t')
			line = append(formatRow(line, emb[j*d:(j+1)*d], tf.valueSep), '\n')
			bw.Write(line)
		}
		if err := bw.Flush(); err != nil {
			f.Close()
			return err
		}
		return f.Close()
	})
	if err != nil {
		return err
	}
	names, closeNames, err := openNames(filepath.Join(st.Dir, "ids.tsv"))
	if err != nil {
		return err
	}
	defer closeNames()
	return mergeRuns(w, runs, names, tf)
}

// openNames returns a function giving the name of node i, called with
// i = 0, 1, 2, … in order: the next line of ids.tsv ("id<TAB>name", in id
// order; a typed directory's "id<TAB>type<TAB>name" gives the name
// "type<TAB>name"), or the number when the work directory has no ids.tsv.
func openNames(path string) (func(i int64) (string, error), func(), error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return func(i int64) (string, error) { return strconv.FormatInt(i, 10), nil }, func() {}, nil
	}
	if err != nil {
		return nil, nil, err
	}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 1<<24)
	return func(i int64) (string, error) {
		if !sc.Scan() {
			if err := sc.Err(); err != nil {
				return "", fmt.Errorf("%s: %w", path, err)
			}
			return "", fmt.Errorf("%s: ends before node %d", path, i)
		}
		id, name, ok := strings.Cut(sc.Text(), "\t")
		if n, err := strconv.ParseInt(id, 10, 64); !ok || err != nil || n != i {
			return "", fmt.Errorf("%s: line %d is %q, want node %d's id and name", path, i+1, truncate(sc.Text()), i)
		}
		return name, nil
	}, func() { f.Close() }, nil
}

func truncate(s string) string {
	if len(s) > 60 {
		return s[:60] + "…"
	}
	return s
}

// run is one sorted run being merged: its reader and current line.
type run struct {
	sc   *bufio.Scanner
	id   int64
	rest string
}

type runHeap []*run

func (h runHeap) Len() int           { return len(h) }
func (h runHeap) Less(i, j int) bool { return h[i].id < h[j].id }
func (h runHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *runHeap) Push(x any)        { *h = append(*h, x.(*run)) }
func (h *runHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// next reads the run's next line; false at its end.
func (r *run) next() (bool, error) {
	if !r.sc.Scan() {
		return false, r.sc.Err()
	}
	id, rest, _ := strings.Cut(r.sc.Text(), "\t")
	n, err := strconv.ParseInt(id, 10, 64)
	if err != nil {
		return false, fmt.Errorf("export run: %w", err)
	}
	r.id, r.rest = n, rest
	return true, nil
}

// mergeRuns merges the sorted runs into w as "name<sep>values" lines.
func mergeRuns(w io.Writer, paths []string, name func(i int64) (string, error), tf textFormat) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	var h runHeap
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		sc := bufio.NewScanner(bufio.NewReaderSize(f, 1<<16))
		sc.Buffer(make([]byte, 1<<16), 1<<26)
		r := &run{sc: sc}
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			h = append(h, r)
		}
	}
	heap.Init(&h)
	for want := int64(0); h.Len() > 0; want++ {
		r := h[0]
		if r.id != want {
			return fmt.Errorf("export: node %d missing from the partitions", want)
		}
		n, err := name(r.id)
		if err != nil {
			return err
		}
		if typ, name, typed := strings.Cut(n, "\t"); typed {
			// A typed directory's "type<TAB>name": a type column first.
			if tf.quote != nil {
				typ, name = tf.quote(typ), tf.quote(name)
			}
			bw.WriteString(typ)
			bw.WriteByte(tf.sep)
			n = name
		} else if tf.quote != nil {
			n = tf.quote(n)
		}
		bw.WriteString(n)
		bw.WriteByte(tf.sep)
		bw.WriteString(r.rest)
		bw.WriteByte('\n')
		ok, err := r.next()
		if err != nil {
			return err
		}
		if ok {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	return bw.Flush()
}

// ExportRelations writes relation embeddings rel (the work directory's
// relations, each a row of len(rel)/relations floats: the model's
// RelWidth(d)) to path, atomically: "npy" as a relations × width float32
// array in relation id order, "tsv" as lines "name<TAB>v1 v2 …" ("csv": rows "name,v1,v2,…",
// as ExportFile's) named from the work directory's relations.tsv
// ("id<TAB>name") where it has one, else by number. A model without relation parameters (dot) is an error.
func ExportRelations(path, format string, st *store.Store, rel []float32) error {
	if len(rel) == 0 {
		return fmt.Errorf("the model has no relation parameters (dot scores s·d)")
	}
	n := st.M.Relations
	if n <= 0 || len(rel)%n != 0 {
		return fmt.Errorf("%d relation floats for %d relations", len(rel), n)
	}
	d := len(rel) / n // a relation row's width
	names, err := graph.ReadNames(filepath.Join(st.Dir, "relations.tsv"), int64(n))
	if err != nil {
		return err
	}
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriter(w)
		switch format {
		case "npy":
			bw.Write(npyHeader(int64(n), int64(d)))
			for _, x := range rel[:n*d] {
				binary.Write(bw, binary.LittleEndian, math.Float32bits(x))
			}
		case "tsv", "csv":
			tf := textFormats[format]
			var line []byte
			for i := 0; i < n; i++ {
				name := names[i]
				if tf.quote != nil {
					name = tf.quote(name)
				}
				line = append(append(line[:0], name...), tf.sep)
				line = append(formatRow(line, rel[i*d:(i+1)*d], tf.valueSep), '\n')
				bw.Write(line)
			}
		default:
			return fmt.Errorf("unknown export format %q (want npy, tsv or csv)", format)
		}
		return bw.Flush()
	})
}
