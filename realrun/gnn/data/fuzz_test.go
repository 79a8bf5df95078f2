package data

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/tierflow/tierflow/realrun/graph"
)

// FuzzFeaturesTSV: the feature reader never panics, and what it accepts
// is consistent: rows of one width, each name once, finite values unless
// left out.
func FuzzFeaturesTSV(f *testing.F) {
	for _, s := range []string{
		"a\t1 2\nb\t3 4\n", "a\t1\t2\n\nb\t3 4", "\ufeffa b\t1e3 -2\r\n", "a\tNaN 1\n", "a\t1\na\t2\n",
		"a 1 2\n", "a\t1 2\nb\t1\n", "\t1\n", "a\t\n", "a\t1e39\n", "a\tinf\n", "a\t0x1p-2\n", "a\t\x00\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, skip bool) {
		l := &loader{f: Files{Skip: skip}, ids: graph.NewIDs(), skipped: map[string]int64{}}
		err := l.featuresTSV(strings.NewReader(s), "f.tsv")
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "f.tsv:") {
				t.Fatalf("error %q: not one line naming the file", err)
			}
			return
		}
		if l.nFeat == 0 || l.width == 0 || len(l.x) != l.nFeat*l.width || len(l.bad) != l.nFeat || int(l.ids.Len()) != l.nFeat {
			t.Fatalf("%d rows of width %d, %d values, %d flags, %d names", l.nFeat, l.width, len(l.x), len(l.bad), l.ids.Len())
		}
		for v := 0; v < l.nFeat; v++ {
			name := l.ids.Name(int64(v))
			if name == "" || strings.ContainsAny(name, "\t\n") || trimName(name) != name {
				t.Fatalf("name %q", name)
			}
			for _, x := range l.x[v*l.width : (v+1)*l.width] {
				if (math.IsNaN(float64(x)) || math.IsInf(float64(x), 0)) && !l.bad[v] {
					t.Fatalf("row %d: %v accepted", v, x)
				}
			}
			if l.bad[v] && !skip {
				t.Fatal("a row left out without Skip")
			}
		}
	})
}

// FuzzLabels: the label reader never panics; classes are sorted and
// distinct, and every label it keeps is a class.
func FuzzLabels(f *testing.F) {
	for _, s := range []string{
		"a\tx\nb\ty\n", "a x\n", "a\t\n", "\tx\n", "a\tx\ta\n", "a\tx\na\ty\n", "zz\tx\n", "b\t y \r\n", "\xff\tx\n",
	} {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, s string, skip bool) {
		l := &loader{f: Files{Skip: skip}, ids: graph.NewIDs(), skipped: map[string]int64{}}
		for _, n := range []string{"a", "b", "c"} {
			l.ids.ID(n)
		}
		l.nFeat, l.width, l.x, l.bad = 3, 1, make([]float32, 3), make([]bool, 3)
		l.compact()
		err := l.readLabels(strings.NewReader(s), "l.tsv")
		if err != nil {
			if strings.Contains(err.Error(), "\n") || !strings.HasPrefix(err.Error(), "l.tsv") {
				t.Fatalf("error %q: not one line naming the file", err)
			}
			return
		}
		g := l.g
		for i := 1; i < len(g.Classes); i++ {
			if g.Classes[i-1] >= g.Classes[i] {
				t.Fatalf("classes %q not sorted and distinct", g.Classes)
			}
		}
		labelled := 0
		for _, c := range g.Y {
			if c < -1 || int(c) >= len(g.Classes) {
				t.Fatalf("class %d of %d", c, len(g.Classes))
			}
			if c >= 0 {
				labelled++
			}
		}
		if labelled == 0 {
			t.Fatal("accepted without a label")
		}
	})
}

// FuzzNPYHeader: the .npy header reader never panics, and a header it
// accepts for a matrix has a sane shape.
func FuzzNPYHeader(f *testing.F) {
	var b bytes.Buffer
	_ = writeNPY(&b, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	f.Add(b.Bytes())
	for _, h := range []string{
		"{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
		"{\"descr\":\"<f8\",\"fortran_order\":True,\"shape\":(5,)}",
		"{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }",
		"{'descr': '<f4', 'shape': (2L, 3L), 'fortran_order': False}",
		"{'descr': '<f4', 'fortran_order': False, 'shape': ()}",
		"{'descr': '<f4', 'descr': '<f4'}",
	} {
		f.Add(append([]byte("\x93NUMPY\x01\x00"), append([]byte{byte(len(h)), 0}, h...)...))
		f.Add(append([]byte("\x93NUMPY\x02\x00"), append([]byte{byte(len(h)), 0, 0, 0}, h...)...))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		h, err := readNPYHeader(r)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q: not one line", err)
			}
			return
		}
		if h.offset != int64(len(data))-int64(r.Len()) {
			t.Fatalf("offset %d, but %d bytes read", h.offset, int64(len(data))-int64(r.Len()))
		}
		rows, cols, err := h.matrixShape()
		if err != nil {
			return
		}
		if rows < 0 || cols < 0 || rows > math.MaxInt32 || rows*cols > 1<<40 || len(h.shape) != 2 {
			t.Fatalf("shape (%d, %d) accepted", rows, cols)
		}
	})
}
