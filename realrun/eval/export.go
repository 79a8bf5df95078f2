package eval

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/realrun/store"
)

// Export writes the trained node embeddings in original id order (row i is
// node i of the input) as a NumPy .npy array of float32 (format "npy") or
// as text lines "name<TAB>v1 v2 …" (format "tsv"); name(i) gives node i's
// name for text.
func Export(w io.Writer, st *store.Store, format string, name func(i int64) string) error {
	emb, err := LoadEmbeddings(st)
	if err != nil {
		return err
	}
	perm, err := st.Permutation()
	if err != nil {
		return err
	}
	d := st.M.Dim
	bw := bufio.NewWriterSize(w, 1<<16)
	switch format {
	case "npy":
		header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", st.M.Nodes, d)
		// Magic, version 1.0, header length; pad the header with spaces so
		// the data starts at a multiple of 64 bytes, ending in a newline.
		total := 10 + len(header) + 1
		pad := (64 - total%64) % 64
		header += fmt.Sprintf("%*s\n", pad, "")
		if _, err := bw.WriteString("\x93NUMPY\x01\x00"); err != nil {
			return err
		}
		var hl [2]byte
		binary.LittleEndian.PutUint16(hl[:], uint16(len(header)))
		bw.Write(hl[:])
		bw.WriteString(header)
		var b [4]byte
		for i := int64(0); i < st.M.Nodes; i++ {
			row := emb[int(perm[i])*d : int(perm[i]+1)*d]
			for _, x := range row {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				bw.Write(b[:])
			}
		}
	case "tsv":
		for i := int64(0); i < st.M.Nodes; i++ {
			bw.WriteString(name(i))
			bw.WriteByte('\t')
			for k, x := range emb[int(perm[i])*d : int(perm[i]+1)*d] {
				if k > 0 {
					bw.WriteByte(' ')
				}
				bw.WriteString(strconv.FormatFloat(float64(x), 'g', 7, 32))
			}
			bw.WriteByte('\n')
		}
	default:
		return fmt.Errorf("unknown export format %q (want npy or tsv)", format)
	}
	return bw.Flush()
}

// ExportFile writes the trained node embeddings to path in input id order
// (npy or tsv), naming nodes by their ids in the input file when the work
// directory was built from one; the file is written atomically.
func ExportFile(path, format string, st *store.Store) error {
	names := func(i int64) string { return strconv.FormatInt(i, 10) }
	if data, err := os.ReadFile(filepath.Join(st.Dir, "ids.tsv")); err == nil {
		table := map[int64]string{}
		sc := bufio.NewScanner(strings.NewReader(string(data)))
		for sc.Scan() {
			id, name, ok := strings.Cut(sc.Text(), "\t")
			if n, err := strconv.ParseInt(id, 10, 64); ok && err == nil {
				table[n] = name
			}
		}
		names = func(i int64) string { return table[i] }
	}
	// The npy header is at most a few hundred bytes; tsv needs about
	// twice the binary size.
	need := st.M.Nodes*int64(st.M.Dim)*4 + 256
	if format == "tsv" {
		need *= 2
	}
	return store.SpaceError(path, need, atomicfile.Write(path, func(w io.Writer) error { return Export(w, st, format, names) }))
}
