package realrun

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
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

const initScale = 0.1

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
	return b.Finish(spec.Dim, spec.Model, initScale)
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
	return b.Finish(spec.Dim, spec.Model, initScale)
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
