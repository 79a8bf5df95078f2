package initemb

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/realrun/store"
)

// Kind is the format of an init file.
type Kind string

// The formats --init reads.
const (
	PBG Kind = "pbg"
	NPY Kind = "npy"
	TSV Kind = "tsv"
)

// KindOf is the format of path: a directory is a PBG checkpoint, a .npy
// file a NumPy array, anything else text.
func KindOf(path string) Kind {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return PBG
	}
	if strings.EqualFold(filepath.Ext(path), ".npy") {
		return NPY
	}
	return TSV
}

// Result is what Apply did.
type Result struct {
	File string `json:"file"`
	// Matched nodes took their row from the file; Nodes is the graph's;
	// Unknown rows of the file named no node of the graph.
	Matched, Nodes, Unknown int64
}

// String is the line a run prints.
func (r Result) String() string {
	s := fmt.Sprintf("init: %d of %d nodes from %s (%d kept random)", r.Matched, r.Nodes, r.File, r.Nodes-r.Matched)
	if r.Unknown > 0 {
		s += fmt.Sprintf("; %d rows of it name no node of the graph", r.Unknown)
	}
	return s
}

// Check reads just enough of path to know its dimension and refuses it,
// as bad input naming the field Init ({Init}), when it is not dim or path
// cannot be read.
func Check(path string, dim int) error {
	var got int
	var err error
	switch KindOf(path) {
	case PBG:
		var c *pbgio.Checkpoint
		if c, err = pbgio.OpenCheckpoint(path); err == nil {
			got = c.Dim
		}
	case NPY:
		var h npyHeader
		if h, err = readNPYHeader(path); err == nil {
			got = h.cols
		}
	case TSV:
		got, err = tsvDim(path)
	}
	if err != nil {
		return inputerr.Errorf("{Init}: %w", err)
	}
	if got != dim {
		return inputerr.Errorf("{Init} %s: embeddings of dimension %d, the run's {Dim} is %d", path, got, dim)
	}
	return nil
}

// Identity names an init file or directory by its absolute path, size
// and CRC-32C (of every file directly in a directory, by name), as
// workdir.FileIdentity names an input: the same words mean the same bytes.
func Identity(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	fi, err := os.Stat(path)
	if err != nil {
		return "", inputerr.Errorf("{Init}: %w", err)
	}
	if !fi.IsDir() {
		sum, err := store.FileChecksum(path)
		if err != nil {
			return "", inputerr.Errorf("{Init}: %w", err)
		}
		return fmt.Sprintf("%s (%d bytes, CRC-32C %08x)", abs, fi.Size(), sum), nil
	}
	entries, err := os.ReadDir(path)
	if err != nil {
		return "", inputerr.Errorf("{Init}: %w", err)
	}
	h := crc32.New(crc32.MakeTable(crc32.Castagnoli))
	var size int64
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		p := filepath.Join(path, e.Name())
		sum, err := store.FileChecksum(p)
		if err != nil {
			return "", inputerr.Errorf("{Init}: %w", err)
		}
		if info, err := e.Info(); err == nil {
			size += info.Size()
		}
		fmt.Fprintf(h, "%s\x00%08x\n", e.Name(), sum)
	}
	return fmt.Sprintf("%s (directory, %d bytes, CRC-32C %08x)", abs, size, h.Sum32()), nil
}

// Apply rewrites the initial partitions (checkpoint 0) of st as
// InitPartitions does (seed, scale), with every node the init file at
// path has taking that row instead. Call it only when training starts
// afresh.
func Apply(st *store.Store, path string, seed int64, scale float32) (Result, error) {
	res := Result{File: path, Nodes: st.M.Nodes}
	if err := Check(path, st.M.Dim); err != nil {
		return res, err
	}
	g, err := newGather(st)
	if err != nil {
		return res, err
	}
	defer g.close()
	switch KindOf(path) {
	case PBG:
		err = g.pbg(path)
	case NPY:
		err = g.npy(path)
	default:
		err = g.tsv(path)
	}
	if err != nil {
		return res, inputerr.Errorf("{Init} %s: %w", path, err)
	}
	res.Matched, res.Unknown = g.matched, g.unknown
	return res, st.InitPartitionsWith(seed, scale, g.fill)
}

// gather collects the init file's rows in store order in a scratch file
// beside the partitions.
type gather struct {
	st               *store.Store
	perm             []int32
	scratch          *os.File
	present          []bool
	matched, unknown int64
	row              []byte
}

func newGather(st *store.Store) (*gather, error) {
	perm, err := st.Permutation()
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(st.Dir, ".init-scratch-*")
	if err != nil {
		return nil, err
	}
	return &gather{st: st, perm: perm, scratch: f, present: make([]bool, st.M.Nodes), row: make([]byte, 4*st.M.Dim)}, nil
}

func (g *gather) close() {
	g.scratch.Close()
	os.Remove(g.scratch.Name())
}

// put records the row of the node with original id orig.
func (g *gather) put(orig int64, row []float32) error {
	if orig < 0 || orig >= int64(len(g.perm)) {
		g.unknown++
		return nil
	}
	s := int64(g.perm[orig])
	for k, x := range row {
		binary.LittleEndian.PutUint32(g.row[4*k:], math.Float32bits(x))
	}
	if _, err := g.scratch.WriteAt(g.row, s*int64(len(g.row))); err != nil {
		return err
	}
	if !g.present[s] {
		g.present[s] = true
		g.matched++
	}
	return nil
}

// fill sets partition p's rows that the file has.
func (g *gather) fill(p int, emb []float32) error {
	d := g.st.M.Dim
	first := int64(p) * g.st.M.Rows
	count := max(min(g.st.M.Rows, g.st.M.Nodes-first), 0)
	buf := make([]byte, count*int64(4*d))
	n, err := g.scratch.ReadAt(buf, first*int64(4*d))
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	buf = buf[:n]
	for r := int64(0); r < count; r++ {
		if !g.present[first+r] {
			continue
		}
		b := buf[r*int64(4*d):]
		for k := 0; k < d; k++ {
			emb[r*int64(d)+int64(k)] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*k:]))
		}
	}
	return nil
}

// byName maps node names (ids.tsv) to original ids.
func (g *gather) byName() (map[string]int64, error) {
	names, err := graph.ReadNames(filepath.Join(g.st.Dir, "ids.tsv"), g.st.M.Nodes)
	if err != nil {
		return nil, err
	}
	m := make(map[string]int64, len(names))
	for i, n := range names {
		m[n] = int64(i)
	}
	return m, nil
}

func (g *gather) named(ids map[string]int64, name string, row []float32) error {
	id, ok := ids[name]
	if !ok {
		g.unknown++
		return nil
	}
	return g.put(id, row)
}

func (g *gather) pbg(dir string) error {
	c, err := pbgio.OpenCheckpoint(dir)
	if err != nil {
		return err
	}
	ids, err := g.byName()
	if err != nil {
		return err
	}
	for p := 0; p < c.Parts; p++ {
		names, emb, err := c.Partition(p)
		if err != nil {
			return err
		}
		for i, n := range names {
			if err := g.named(ids, n, emb[i*c.Dim:(i+1)*c.Dim]); err != nil {
				return err
			}
		}
	}
	return nil
}

func (g *gather) npy(path string) error {
	h, err := readNPYHeader(path)
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.Seek(h.offset, io.SeekStart); err != nil {
		return err
	}
	r := bufio.NewReaderSize(f, 1<<20)
	raw := make([]byte, 4*h.cols)
	row := make([]float32, h.cols)
	for i := int64(0); i < h.rows; i++ {
		if _, err := io.ReadFull(r, raw); err != nil {
			return fmt.Errorf("row %d of %d: %w", i, h.rows, err)
		}
		for k := range row {
			row[k] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*k:]))
		}
		if err := g.put(i, row); err != nil {
			return err
		}
	}
	return nil
}

func (g *gather) tsv(path string) error {
	ids, err := g.byName()
	if err != nil {
		return err
	}
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	row := make([]float32, g.st.M.Dim)
	for line := 1; sc.Scan(); line++ {
		name, vals, ok := splitTSV(sc.Text())
		if !ok {
			continue
		}
		fields := strings.Fields(vals)
		if len(fields) != len(row) {
			return fmt.Errorf("line %d: %d values, want %d", line, len(fields), len(row))
		}
		for k, s := range fields {
			x, err := strconv.ParseFloat(s, 32)
			if err != nil {
				return fmt.Errorf("line %d: %q is not a number", line, s)
			}
			row[k] = float32(x)
		}
		if err := g.named(ids, name, row); err != nil {
			return err
		}
	}
	return sc.Err()
}

// splitTSV splits a "name<TAB>v1 v2 …" line at its last tab (names have
// no tabs; blank lines and # comments are skipped).
func splitTSV(line string) (name, vals string, ok bool) {
	if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
		return "", "", false
	}
	i := strings.LastIndexByte(line, '\t')
	if i < 0 {
		return "", "", false
	}
	return line[:i], line[i+1:], true
}

// tsvDim is the number of values on the first row of a tsv export.
func tsvDim(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if _, vals, ok := splitTSV(sc.Text()); ok {
			return len(strings.Fields(vals)), nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return 0, fmt.Errorf("%s: no \"name<TAB>v1 v2 …\" line (an .npy file, a PBG checkpoint directory or a tsv export)", path)
}

type npyHeader struct {
	rows   int64
	cols   int
	offset int64
}

var (
	npyDescr = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyOrder = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape = regexp.MustCompile(`'shape':\s*\(\s*(\d+)\s*,\s*(\d+)\s*,?\s*\)`)
)

// readNPYHeader reads the header of a 2-D little-endian float32 .npy file.
func readNPYHeader(path string) (npyHeader, error) {
	var h npyHeader
	f, err := os.Open(path)
	if err != nil {
		return h, err
	}
	defer f.Close()
	var pre [12]byte
	if _, err := io.ReadFull(f, pre[:10]); err != nil || string(pre[:6]) != "\x93NUMPY" {
		return h, fmt.Errorf("%s: not an .npy file", path)
	}
	var hlen int64
	switch pre[6] {
	case 1:
		hlen, h.offset = int64(binary.LittleEndian.Uint16(pre[8:])), 10
	case 2, 3:
		if _, err := io.ReadFull(f, pre[10:12]); err != nil {
			return h, fmt.Errorf("%s: not an .npy file", path)
		}
		hlen, h.offset = int64(binary.LittleEndian.Uint32(pre[8:])), 12
	default:
		return h, fmt.Errorf("%s: .npy format version %d", path, pre[6])
	}
	if hlen > 1<<16 {
		return h, fmt.Errorf("%s: .npy header of %d bytes", path, hlen)
	}
	hdr := make([]byte, hlen)
	if _, err := io.ReadFull(f, hdr); err != nil {
		return h, fmt.Errorf("%s: .npy header: %w", path, err)
	}
	h.offset += hlen
	s := string(hdr)
	d, o, sh := npyDescr.FindStringSubmatch(s), npyOrder.FindStringSubmatch(s), npyShape.FindStringSubmatch(s)
	descr := "unknown type"
	if d != nil {
		descr = d[1]
	}
	switch {
	case !slices.Contains([]string{"<f4", "=f4"}, descr):
		return h, fmt.Errorf("%s: an .npy array of %s, want little-endian float32 ('<f4')", path, descr)
	case o == nil || o[1] != "False":
		return h, fmt.Errorf("%s: a Fortran-order .npy array, want C order", path)
	case sh == nil:
		return h, fmt.Errorf("%s: an .npy array that is not 2-D (nodes × dimension)", path)
	}
	h.rows, _ = strconv.ParseInt(sh[1], 10, 64)
	h.cols, _ = strconv.Atoi(sh[2])
	if h.rows < 0 || h.rows > 1<<40 || h.cols < 1 || h.cols > 1<<20 {
		return h, fmt.Errorf("%s: an .npy array of shape (%s, %s)", path, sh[1], sh[2])
	}
	if fi, err := f.Stat(); err == nil && fi.Size() < h.offset+h.rows*int64(4*h.cols) {
		return h, fmt.Errorf("%s: %d bytes, too short for %d × %d float32", path, fi.Size(), h.rows, h.cols)
	}
	return h, nil
}
