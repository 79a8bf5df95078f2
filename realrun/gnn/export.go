package gnn

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// ExportFormats are the formats Export writes: npy (float32 nodes ×
// dim, with the node names in a text file beside it, one a line, in row
// order), tsv (name<TAB>v1 v2 …) and csv (name,v1,v2,…; RFC 4180 names,
// no header row), as the edge engine's export writes them.
var ExportFormats = []string{"npy", "tsv", "csv"}

// ExportOutput says what Export wrote.
type ExportOutput struct {
	Workdir string `json:"workdir"`
	// Epoch is the checkpoint's epoch.
	Epoch  int    `json:"epoch"`
	Format string `json:"format"`
	Out    string `json:"out"`
	// Names is the names file written beside an npy export.
	Names string `json:"names,omitempty"`
	Nodes int    `json:"nodes"`
	Dim   int    `json:"dim"`
}

// Export writes the node representations of dir's checkpoint — the last
// layer's input under layer-wise inference over every node with every
// neighbour (nn.Model.Infer), the model's output being the class logits
// — to out in format (one of ExportFormats), rows in the graph's node
// order, named. With npy the names go to names, one a line. The graph is
// read again from the input files training recorded, which must be
// unchanged (their identity is checked). Each file is written
// atomically.
func Export(dir, out, format, names string) (ExportOutput, error) {
	res := ExportOutput{Workdir: dir, Format: format, Out: out}
	st, err := readState(dir)
	if err != nil {
		return res, &WorkdirError{Kind: Unreadable, Dir: dir, Err: err}
	}
	if st == nil {
		return res, &WorkdirError{Kind: NotWorkdir, Dir: dir}
	}
	ckpt, err := readCheckpoint(dir)
	if err != nil {
		return res, &WorkdirError{Kind: Unreadable, Dir: dir, Err: err}
	}
	if ckpt == nil {
		return res, inputerr.Errorf("%s holds no checkpoint yet: nothing trained to export", dir)
	}
	res.Epoch = ckpt.Epoch
	files := st.Files.files()
	for _, in := range inputs(files) {
		if in[1] == "" {
			continue
		}
		sum, err := store.FileChecksum(in[1])
		if err != nil {
			return res, inputerr.Errorf("%s was trained on %s, which cannot be read now: %w", dir, in[1], err)
		}
		if now := workdir.FileIdentity(in[1], sum); now != st.Settings[in[0]] {
			return res, inputerr.Errorf("%s was trained on %s, which has changed since: now %s; the representations need the graph it was trained on", dir, st.Settings[in[0]], now)
		}
	}
	g, _, err := data.Load(files)
	if err != nil {
		return res, &inputerr.Error{Err: err}
	}
	m, err := nn.New(st.Spec, 0)
	if err != nil {
		return res, err
	}
	if err := m.Load(bytes.NewReader(ckpt.params)); err != nil {
		return res, &WorkdirError{Kind: Unreadable, Dir: dir, Err: fmt.Errorf("checkpoint parameters: %w", err)}
	}
	batch := Defaults.Batch
	if b, err := strconv.Atoi(st.Settings["batch"]); err == nil && b > 0 {
		batch = b
	}
	repr, _ := m.Infer(g, batch)
	res.Nodes, res.Dim = g.N(), m.ReprDim()
	if err := WriteRepr(out, format, g.Names, repr, res.Dim); err != nil {
		return res, err
	}
	if format == "npy" {
		res.Names = names
		if err := writeNames(names, g.Names); err != nil {
			return res, err
		}
	}
	return res, nil
}

// WriteRepr writes rows (len(names) × dim, row-major) to path in format
// (ExportFormats; npy writes the array alone), atomically.
func WriteRepr(path, format string, names []string, rows []float32, dim int) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		switch format {
		case "npy":
			bw.Write(npyHeader(len(names), dim))
			var b [4]byte
			for _, x := range rows {
				binary.LittleEndian.PutUint32(b[:], math.Float32bits(x))
				bw.Write(b[:])
			}
		case "tsv", "csv":
			sep, quote := byte('\t'), func(s string) string { return s }
			if format == "csv" {
				sep, quote = ',', csvField
			}
			valueSep := byte(' ')
			if format == "csv" {
				valueSep = ','
			}
			var line []byte
			for i, name := range names {
				line = append(line[:0], quote(name)...)
				line = append(line, sep)
				for k, x := range rows[i*dim : (i+1)*dim] {
					if k > 0 {
						line = append(line, valueSep)
					}
					line = strconv.AppendFloat(line, float64(x), 'g', 7, 32)
				}
				bw.Write(append(line, '\n'))
			}
		default:
			return fmt.Errorf("unknown export format %q (want %s)", format, strings.Join(ExportFormats, ", "))
		}
		return bw.Flush()
	})
}

// writeNames writes one name a line.
func writeNames(path string, names []string) error {
	return atomicfile.Write(path, func(w io.Writer) error {
		bw := bufio.NewWriterSize(w, 1<<16)
		for _, n := range names {
			bw.WriteString(n)
			bw.WriteByte('\n')
		}
		return bw.Flush()
	})
}

// NamesPath is the names file beside an npy export: emb.npy's is
// emb.names.txt.
func NamesPath(out string) string {
	return strings.TrimSuffix(out, ".npy") + ".names.txt"
}

// npyHeader is the .npy (version 1.0) header of a little-endian float32
// rows × cols array, padded so the data starts at a multiple of 64 bytes.
func npyHeader(rows, cols int) []byte {
	header := fmt.Sprintf("{'descr': '<f4', 'fortran_order': False, 'shape': (%d, %d), }", rows, cols)
	total := 10 + len(header) + 1
	header += fmt.Sprintf("%*s\n", (64-total%64)%64, "")
	out := []byte("\x93NUMPY\x01\x00")
	out = binary.LittleEndian.AppendUint16(out, uint16(len(header)))
	return append(out, header...)
}

// csvField is name as an RFC 4180 field: quoted, its quotes doubled, when
// it holds a comma, a quote, a line break or leading or trailing space.
func csvField(name string) string {
	if name == "" || !strings.ContainsAny(name, ",\"\r\n") && strings.TrimSpace(name) == name {
		return name
	}
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
