package workdir

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

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
	pr, err := graph.LookupPreset(spec.Dataset)
	if err != nil {
		return nil, &inputerr.Error{Err: err}
	}
	sc, err := pr.Scaled(spec.Scale)
	if err != nil {
		return nil, inputerr.Errorf("--scale: %w", err)
	}
	if int64(spec.P) > sc.Nodes {
		return nil, inputerr.Errorf("--p %d exceeds the %d nodes of %s at scale %g", spec.P, sc.Nodes, sc.Name, spec.Scale)
	}
	b, err := store.NewBuilder(spec.Workdir, fmt.Sprintf("%s@%g", sc.Name, spec.Scale), sc.Nodes, sc.Relations, spec.P, spec.Seed)
	if err != nil {
		return nil, inputerr.Errorf("--workdir: %w", err)
	}
	split := graph.NewSplitter(spec.Seed, 0.05, 0.05)
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
// the edges into the work directory. Valid and test files, if given, may
// only use ids seen in the training file; without them a seeded 90/5/5
// split is drawn.
func prepareFiles(spec DataSpec) (*store.Store, error) {
	nodes, rels := graph.NewIDs(), graph.NewIDs()
	if _, err := parseFile(spec.Edges, nodes, rels, func(int64, int64, int64) error { return nil }); err != nil {
		return nil, err
	}
	nodes.Freeze()
	rels.Freeze()
	if int64(spec.P) > nodes.Len() {
		return nil, inputerr.Errorf("--p %d exceeds the %d nodes of %s", spec.P, nodes.Len(), spec.Edges)
	}
	b, err := store.NewBuilder(spec.Workdir, spec.Edges, nodes.Len(), int(max(rels.Len(), 1)), spec.P, spec.Seed)
	if err != nil {
		return nil, inputerr.Errorf("--workdir: %w", err)
	}
	fail := func(err error) (*store.Store, error) {
		b.Abort()
		return nil, err
	}
	if err := b.AddFile("ids.tsv", nodes.WriteTSV); err != nil {
		return fail(err)
	}
	inputs, err := inputSums(spec)
	if err != nil {
		return fail(err)
	}
	b.SetInputs(inputs)
	split := graph.NewSplitter(spec.Seed, 0.05, 0.05)
	given := spec.Valid != "" || spec.Test != ""
	_, err = parseFile(spec.Edges, nodes, rels, func(src, rel, dst int64) error {
		sp := store.Train
		if !given {
			sp = store.Split(split.Next())
		}
		return b.Add(src, max(rel, 0), dst, sp)
	})
	if err != nil {
		return fail(err)
	}
	for _, f := range []struct {
		path string
		sp   store.Split
	}{{spec.Valid, store.Valid}, {spec.Test, store.Test}} {
		if f.path == "" {
			continue
		}
		if _, err := parseFile(f.path, nodes, rels, func(src, rel, dst int64) error { return b.Add(src, max(rel, 0), dst, f.sp) }); err != nil {
			return fail(err)
		}
	}
	return b.Finish(spec.Dim, spec.Model, InitScale)
}

func parseFile(path string, nodes, rels *graph.IDs, emit func(src, rel, dst int64) error) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, inputerr.Errorf("%s: %w", path, errors.Unwrap(err))
	}
	defer f.Close()
	cols, err := graph.Parse(io.Reader(f), path, nodes, rels, emit)
	if err != nil {
		return 0, &inputerr.Error{Err: err}
	}
	return cols, nil
}

// inputSums are the checksums of a spec's edge files, by path.
func inputSums(spec DataSpec) (map[string]uint64, error) {
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

// OpenOrPrepare reuses a work directory built from the same generated data
// or the same edge files (unchanged: their checksums are recorded) with the
// same layout (p, d, model, seed), or builds it; reused reports which. A work directory of another format version is refused, never
// replaced.
func OpenOrPrepare(spec DataSpec) (st *store.Store, reused bool, err error) {
	if _, err := store.Open(spec.Workdir); errors.Is(err, store.ErrVersion) {
		return nil, false, inputerr.Errorf("--workdir: %v; remove it or choose another --workdir", err)
	}
	if st, err := store.Open(spec.Workdir); err == nil {
		m := st.M
		same := m.P == spec.P && m.Dim == spec.Dim && m.Model == spec.Model && m.Seed == spec.Seed
		if spec.Edges == "" {
			same = same && m.Source == fmt.Sprintf("%s@%g", spec.Dataset, spec.Scale)
		} else if same && m.Source == spec.Edges {
			// An edge file is reused only unchanged (same checksums).
			inputs, err := inputSums(spec)
			same = err == nil && maps.Equal(inputs, m.Inputs)
		} else {
			same = false
		}
		if same {
			return st, true, nil
		}
	}
	st, err = Prepare(spec)
	return st, false, err
}

// DefaultModelFor is the score function used for an edge file when none is
// named: ComplEx when its lines carry relations (src rel dst), since Dot
// would parse and then ignore them; Dot for plain src dst graphs. An
// unreadable file gets Dot here and its error from Prepare.
func DefaultModelFor(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return string(workload.Dot)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.FieldsFunc(line, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 3 {
			return string(workload.ComplEx)
		}
		break
	}
	return string(workload.Dot)
}
