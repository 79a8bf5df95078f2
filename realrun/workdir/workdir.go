package workdir

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// HeldOut is the share of a generated graph's edges drawn into each of its
// valid and test splits; the rest train.
const HeldOut = 0.05

// DataSpec says where the edges come from and how to lay them out.
type DataSpec struct {
	// Dataset is a graph preset generated on the fly at Scale; or Edges
	// (with optional Valid and Test) names an edge file.
	Dataset string
	Scale   float64
	Edges   string
	Valid   string
	Test    string
	Seed    int64
	P       int
	Dim     int
	Model   string
	Workdir string
	// Inputs are the CRC-32C of the edge files by path (InputSums; nil:
	// computed when needed).
	Inputs map[string]uint64
	// Copies is how many copies of the partitions the run may hold at
	// once (the checkpoints kept and the one being written): with it,
	// Prepare refuses up front a directory that would not fit the free
	// space (0: no check).
	Copies int
	// Format is how the edge files are read (delimiter, header, columns,
	// unseen validation and test ids).
	Format graph.Format
	// Schema, for edge files only, gives the graph entity types (nil:
	// untyped): see prepareTyped. P must be the schema's (CheckP).
	Schema *workload.Schema
}

// InitScale is the range of the initial embeddings: uniform in ±InitScale.
const InitScale = 0.1

// Prepare builds the work directory: generates or parses the edges,
// relabels and partitions the nodes, writes the buckets, splits, degrees,
// histogram and freshly initialised partitions, and renames the directory
// into place only when everything succeeded.
func Prepare(spec DataSpec) (*store.Store, error) {
	if spec.Edges != "" {
		return prepareFiles(spec)
	}
	if spec.Schema != nil {
		return nil, inputerr.Errorf("a generated dataset has no entity types: a schema goes with edge files")
	}
	pr, err := graph.LookupPreset(spec.Dataset)
	if err != nil {
		return nil, &inputerr.Error{Err: err}
	}
	sc, err := pr.Scaled(spec.Scale)
	if err != nil {
		return nil, inputerr.Errorf("{Scale}: %w", err)
	}
	if int64(spec.P) > sc.Nodes {
		return nil, inputerr.Errorf("{P} %d exceeds the %d nodes of %s at scale %g", spec.P, sc.Nodes, sc.Name, spec.Scale)
	}
	if err := spec.checkSpace(spec.space(sc.Nodes, sc.Edges, 0)); err != nil {
		return nil, err
	}
	b, err := store.NewBuilder(spec.Workdir, fmt.Sprintf("%s@%g", sc.Name, spec.Scale), sc.Nodes, sc.Relations, spec.P, spec.Seed)
	if err != nil {
		return nil, inputerr.Errorf("{Workdir}: %w", err)
	}
	split := graph.NewSplitter(spec.Seed, HeldOut, HeldOut)
	err = graph.Generate(sc, spec.Seed, func(src, rel, dst int64) error {
		return b.Add(src, rel, dst, store.Split(split.Next()))
	})
	if err != nil {
		b.Abort()
		return nil, err
	}
	return b.Finish(spec.Dim, spec.Model, InitScale)
}

// prepareFiles parses an edge file twice: first to number the nodes and
// relations (memory grows with nodes, never with edges), then to stream
// the edges into the work directory. Valid and test files, if given, are
// read with the training ids: an edge with a node or relation not in them
// is left out and counted, or refused (spec.Format.Unseen); without them
// a seeded 90/5/5 split is drawn. Beside the node ids (ids.tsv) the
// directory keeps the relation names (relations.tsv, "id\tname" lines;
// empty for a graph without relations).
func prepareFiles(spec DataSpec) (*store.Store, error) {
	if spec.Schema != nil {
		return prepareTyped(spec)
	}
	nodes, rels := graph.NewIDs(), graph.NewIDs()
	var edges int64
	train, err := parseFile(spec.Edges, spec.Format, nodes, rels, func(int64, int64, int64) error { edges++; return nil })
	if err != nil {
		return nil, err
	}
	nodes.Freeze()
	rels.Freeze()
	if int64(spec.P) > nodes.Len() {
		return nil, inputerr.Errorf("{P} %d exceeds the %d nodes of %s", spec.P, nodes.Len(), spec.Edges)
	}
	var extra int64 // the id table, at most the input's size, and the valid and test files' edges
	for _, path := range []string{spec.Edges, spec.Valid, spec.Test} {
		if fi, err := os.Stat(path); err == nil && path != "" {
			extra += fi.Size()
		}
	}
	if err := spec.checkSpace(spec.space(nodes.Len(), edges, extra)); err != nil {
		return nil, err
	}
	b, err := store.NewBuilder(spec.Workdir, spec.Edges, nodes.Len(), int(max(rels.Len(), 1)), spec.P, spec.Seed)
	if err != nil {
		return nil, inputerr.Errorf("{Workdir}: %w", err)
	}
	fail := func(err error) (*store.Store, error) {
		b.Abort()
		return nil, err
	}
	if err := startBuild(b, spec, nodes.WriteTSV, rels.WriteTSV); err != nil {
		return fail(err)
	}
	split := graph.NewSplitter(spec.Seed, HeldOut, HeldOut)
	given := spec.Valid != "" || spec.Test != ""
	_, err = parseFile(spec.Edges, spec.Format, nodes, rels, func(src, rel, dst int64) error {
		sp := store.Train
		if !given {
			sp = store.Split(split.Next())
		}
		return b.Add(src, max(rel, 0), dst, sp)
	})
	if err != nil {
		return fail(err)
	}
	files := []store.InputFile{inputFile(spec.Edges, map[bool]string{true: "train", false: "all"}[given], train)}
	for _, f := range []struct {
		path, name string
		sp         store.Split
	}{{spec.Valid, "valid", store.Valid}, {spec.Test, "test", store.Test}} {
		if f.path == "" {
			continue
		}
		info, err := parseFile(f.path, spec.Format, nodes, rels, func(src, rel, dst int64) error { return b.Add(src, max(rel, 0), dst, f.sp) })
		if err != nil {
			return fail(err)
		}
		if info.HasRelations() != train.HasRelations() {
			return fail(inputerr.Errorf("%s: edges %s, but those of %s %s", f.path, relationsWord(info), spec.Edges, relationsWord(train)))
		}
		files = append(files, inputFile(f.path, f.name, info))
	}
	b.SetInputFormat(spec.Format.Flags(), files)
	return b.Finish(spec.Dim, spec.Model, InitScale)
}

// startBuild writes a build's node and relation names (ids.tsv,
// relations.tsv) and records its input files' checksums.
func startBuild(b *store.Builder, spec DataSpec, ids, rels func(io.Writer) error) error {
	if err := b.AddFile("ids.tsv", ids); err != nil {
		return err
	}
	if err := b.AddFile("relations.tsv", rels); err != nil {
		return err
	}
	inputs, err := InputSums(spec)
	if err != nil {
		return err
	}
	b.SetInputs(inputs)
	return nil
}

func relationsWord(info graph.Info) string {
	if info.HasRelations() {
		return "with relations (src rel dst)"
	}
	return "without relations (src dst)"
}

// inputFile is what the manifest records of one parsed edge file.
func inputFile(path, split string, info graph.Info) store.InputFile {
	cols := []int{info.Src + 1, info.Dst + 1}
	if info.HasRelations() {
		cols = []int{info.Src + 1, info.Rel + 1, info.Dst + 1}
	}
	return store.InputFile{Path: path, Split: split, Delimiter: info.Delimiter, Header: info.Header, Columns: cols,
		Edges: info.Edges, SkippedUnseenNode: info.UnseenNode, SkippedUnseenRelation: info.UnseenRelation}
}

func parseFile(path string, format graph.Format, nodes, rels *graph.IDs, emit func(src, rel, dst int64) error) (graph.Info, error) {
	f, err := os.Open(path)
	if err != nil {
		return graph.Info{}, inputerr.Errorf("%s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	info, err := graph.Parse(io.Reader(f), path, format, nodes, rels, emit)
	if err != nil {
		return graph.Info{}, &inputerr.Error{Err: err}
	}
	return info, nil
}

// unwrapPath is a failed open's error without the path (which the caller
// names).
func unwrapPath(err error) error {
	if u := errors.Unwrap(err); u != nil {
		return u
	}
	return err
}

// InputSums are the CRC-32C of a spec's edge files, by path as given
// (spec.Inputs when already computed).
func InputSums(spec DataSpec) (map[string]uint64, error) {
	if spec.Inputs != nil {
		return spec.Inputs, nil
	}
	out := map[string]uint64{}
	for _, path := range []string{spec.Edges, spec.Valid, spec.Test} {
		if path == "" {
			continue
		}
		sum, err := store.FileChecksum(path)
		if err != nil {
			return nil, inputerr.Errorf("%w", err)
		}
		out[path] = sum
	}
	return out, nil
}

// FileIdentity names an input file by its absolute path, size and
// CRC-32C: the same words mean the same bytes.
func FileIdentity(path string, sum uint64) string {
	abs, err := filepath.Abs(path)
	if err != nil {
		abs = path
	}
	var size int64
	if fi, err := os.Stat(path); err == nil {
		size = fi.Size()
	}
	return fmt.Sprintf("%s (%d bytes, CRC-32C %08x)", abs, size, sum)
}

// Default is the work directory of a run that names none: under the
// system temp dir, named after its input and unique per input — the
// preset, scale and data seed, or the absolute paths of the edge files —
// so that two inputs never share one ("tierflow-twitter@0.01-1f2e3d4c",
// "tierflow-train.tsv-9a8b7c6d").
func Default(spec DataSpec, source string) string {
	key := fmt.Sprintf("%s@%g seed %d", spec.Dataset, spec.Scale, spec.Seed)
	if spec.Edges == "" {
		source = spec.source()
	} else {
		var paths []string
		for _, p := range []string{spec.Edges, spec.Valid, spec.Test} {
			abs, err := filepath.Abs(p)
			if err != nil || p == "" {
				abs = p
			}
			paths = append(paths, abs)
		}
		key = strings.Join(paths, "\x00")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("tierflow-%s-%08x", source, crc32.ChecksumIEEE([]byte(key))))
}

// sameData reports whether st was built from spec's data — the same
// generated preset and scale, or the same, unchanged edge files (their
// checksums are recorded) read the same way (spec.Format) — with the same
// layout (p, d, model, seed).
func sameData(st *store.Store, spec DataSpec) (bool, error) {
	m := st.M
	if m.P != spec.P || m.Dim != spec.Dim || m.Model != spec.Model || m.Seed != spec.Seed {
		return false, nil
	}
	if spec.Edges == "" {
		return m.Source == spec.source(), nil
	}
	if m.Source != spec.Edges {
		return false, nil
	}
	if !maps.Equal(m.InputFormat, spec.inputFormat()) {
		return false, nil
	}
	inputs, err := InputSums(spec)
	if err != nil {
		return false, err
	}
	return maps.Equal(inputs, m.Inputs), nil
}

// source is how the manifest names a generated preset at its scale.
func (spec DataSpec) source() string { return fmt.Sprintf("%s@%g", spec.Dataset, spec.Scale) }

// DefaultModelFor is the score function used for an edge file read as
// format says when none is named: ComplEx when its edges carry relations
// (src rel dst, or a relation column picked by Format.Columns or named by its
// header), since Dot would parse and then ignore them; Dot for plain src
// dst graphs. An unreadable file gets Dot here and its error from Prepare.
func DefaultModelFor(path string, format graph.Format) string {
	f, err := os.Open(path)
	if err != nil {
		return string(workload.Dot)
	}
	defer f.Close()
	if info, err := graph.Sniff(f, path, format); err == nil && info.HasRelations() {
		return string(workload.ComplEx)
	}
	return string(workload.Dot)
}

// Built opens spec's work directory when it exists and holds spec's data
// and layout (sameData), for reading its buckets and partitions; nil
// when there is none or it holds other data.
func Built(spec DataSpec) (*store.Store, error) {
	if !store.IsWorkdir(spec.Workdir) {
		return nil, nil
	}
	st, err := store.Open(spec.Workdir)
	if err != nil {
		return nil, fmt.Errorf("{Workdir}: %w", err)
	}
	if same, err := sameData(st, spec); err != nil || !same {
		return nil, err
	}
	return st, nil
}
