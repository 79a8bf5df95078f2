package initemb

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzNPYHeader: any bytes as an .npy file are read or refused, never a
// panic, and an accepted header describes a file long enough.
func FuzzNPYHeader(f *testing.F) {
	f.Add([]byte("\x93NUMPY\x01\x00\x46\x00{'descr': '<f4', 'fortran_order': False, 'shape': (1, 1), }                    \n\x00\x00\x80\x3f"))
	f.Add([]byte("\x93NUMPY\x02\x00\x10\x00\x00\x00{'shape': (3,)}"))
	f.Add([]byte("hello"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "x.npy")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := readNPYHeader(path)
		if err == nil && int64(len(data)) < h.offset+h.rows*int64(4*h.cols) {
			t.Fatalf("accepted %d × %d at %d in %d bytes", h.rows, h.cols, h.offset, len(data))
		}
	})
}

// FuzzSplitTSV: a name never holds the values' tab.
func FuzzSplitTSV(f *testing.F) {
	f.Add("ent 1\t0.5 1.5")
	f.Add("# comment")
	f.Fuzz(func(t *testing.T, line string) {
		name, vals, ok := splitTSV(line)
		if ok && name+"\t"+vals != line {
			t.Fatalf("%q split into %q and %q", line, name, vals)
		}
	})
}
