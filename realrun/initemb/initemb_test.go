package initemb_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/initemb"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
)

// options are a run on the fixture KG (ComplEx, d=8, p=3) in its own
// work directory with data seed seed.
func options(t *testing.T, edges string, seed int64) job.Options {
	o := job.Defaults
	o.Edges, o.Model, o.Dim, o.P, o.C, o.Epochs, o.Seed = edges, "complex", 8, 3, 2, 1, seed
	o.Batch, o.Negatives, o.Workers, o.Eval = 100, 10, 1, "none"
	o.Workdir = filepath.Join(t.TempDir(), "work")
	return o
}

// open configures and opens o's work directory as training does (init
// applied) and returns its store and what the run said.
func open(t *testing.T, o job.Options) (*store.Store, string) {
	t.Helper()
	var log bytes.Buffer
	x, err := job.Open(o, o.C, &log)
	require.NoError(t, err, log.String())
	t.Cleanup(x.Close)
	return x.Store(), log.String()
}

// rows are the embeddings of a store's current checkpoint by node name.
func rows(t *testing.T, st *store.Store) map[string][]float32 {
	t.Helper()
	emb := fixture.Embeddings(t, st)
	perm, err := st.Permutation()
	require.NoError(t, err)
	names, err := graph.ReadNames(filepath.Join(st.Dir, "ids.tsv"), st.M.Nodes)
	require.NoError(t, err)
	d := st.M.Dim
	out := map[string][]float32{}
	for orig, n := range names {
		out[n] = emb[int(perm[orig])*d : int(perm[orig]+1)*d]
	}
	return out
}

// readTSV reads a tsv export's rows by name, as float32.
func readTSV(t *testing.T, path string) map[string][]float32 {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[string][]float32{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		name, vals, _ := strings.Cut(line, "\t")
		for _, f := range strings.Fields(vals) {
			x, err := strconv.ParseFloat(f, 32)
			require.NoError(t, err)
			out[name] = append(out[name], float32(x))
		}
	}
	return out
}

func TestInitFromExports(t *testing.T) {
	edges := fixture.KGFile(t)
	src, _ := open(t, options(t, edges, 1))
	want := rows(t, src)
	dir := t.TempDir()
	for _, format := range []string{"npy", "tsv"} {
		t.Run(format, func(t *testing.T) {
			file := filepath.Join(dir, "emb."+format)
			require.NoError(t, eval.ExportFile(file, format, src))
			o := options(t, edges, 2) // another relabelling and random init
			o.Init = file
			st, log := open(t, o)
			assert.Contains(t, log, "init: 40 of 40 nodes from "+file+" (0 kept random)")
			expect := want
			if format == "tsv" {
				// The text export holds 7 significant digits: the rows
				// are the file's numbers, not the source's floats.
				expect = readTSV(t, file)
			}
			assert.Equal(t, expect, rows(t, st))
			// Adagrad state stays zero.
			n := int(st.M.Rows) * st.M.Dim
			for _, p := range fixture.Partitions(t, st) {
				assert.Equal(t, make([]float32, n), p[n:2*n])
			}
		})
	}
}

func TestInitKeepsMissingNodesRandom(t *testing.T) {
	edges := fixture.KGFile(t)
	src, _ := open(t, options(t, edges, 1))
	full := filepath.Join(t.TempDir(), "emb.tsv")
	require.NoError(t, eval.ExportFile(full, "tsv", src))
	data, err := os.ReadFile(full)
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	part := filepath.Join(t.TempDir(), "some.tsv")
	extra := "no such node\t" + strings.Repeat("1 ", 7) + "1\n"
	require.NoError(t, os.WriteFile(part, []byte(strings.Join(lines[:10], "")+extra), 0o644))

	plain, _ := open(t, options(t, edges, 2))
	random := rows(t, plain)
	o := options(t, edges, 2)
	o.Init = part
	st, log := open(t, o)
	assert.Contains(t, log, "init: 10 of 40 nodes from "+part+" (30 kept random); 1 rows of it name no node of the graph")
	given := map[string]bool{}
	for _, l := range lines[:10] {
		name, _, _ := strings.Cut(l, "\t")
		given[name] = true
	}
	got, want := rows(t, st), readTSV(t, full)
	for name, row := range got {
		if given[name] {
			assert.Equal(t, want[name], row, name)
		} else {
			assert.Equal(t, random[name], row, name)
		}
	}
}

func TestInitBadInput(t *testing.T) {
	edges := fixture.KGFile(t)
	src, _ := open(t, options(t, edges, 1))
	npy := filepath.Join(t.TempDir(), "emb.npy")
	require.NoError(t, eval.ExportFile(npy, "npy", src))
	ragged := filepath.Join(t.TempDir(), "ragged.tsv")
	require.NoError(t, os.WriteFile(ragged, []byte("ent_00\t1 2 3 4 5 6 7 8\nent_01\t1 2\n"), 0o644))
	for _, tc := range []struct {
		name, file string
		dim        int
		want       string
	}{
		{"dimension", npy, 16, "{Init} " + npy + ": embeddings of dimension 8, the run's {Dim} is 16"},
		{"missing", filepath.Join(t.TempDir(), "none.npy"), 8, "no such file"},
		{"ragged", ragged, 8, "line 2: 2 values, want 8"},
		{"not npy", ragged + ".npy", 8, "not an .npy file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "not npy" {
				require.NoError(t, os.WriteFile(tc.file, []byte("hello"), 0o644))
			}
			o := options(t, edges, 2)
			o.Init, o.Dim = tc.file, tc.dim
			x, err := job.Open(o, o.C, &bytes.Buffer{})
			if err == nil {
				x.Close()
			}
			require.Error(t, err)
			assert.ErrorContains(t, err, tc.want)
			assert.NotContains(t, err.Error(), "\n")
			var bad *inputerr.Error
			assert.True(t, errors.As(err, &bad), "bad input (exit status 2): %v", err)
		})
	}
}

// TestInitOnlyAfresh: --init is one of the run's settings; a resumed run
// does not apply it again, and a checkpoint is not resumed with another.
func TestInitOnlyAfresh(t *testing.T) {
	edges := fixture.KGFile(t)
	src, _ := open(t, options(t, edges, 1))
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.npy"), filepath.Join(dir, "b.tsv")
	require.NoError(t, eval.ExportFile(a, "npy", src))
	require.NoError(t, eval.ExportFile(b, "tsv", src))
	o := options(t, edges, 2)
	o.Init = a
	var log bytes.Buffer
	_, err := job.Train(o, nil, false, &log)
	require.NoError(t, err, log.String())
	assert.Contains(t, log.String(), "init: 40 of 40")

	o.Resume, o.Epochs = true, 2
	log.Reset()
	_, err = job.Train(o, nil, false, &log)
	require.NoError(t, err, log.String())
	assert.NotContains(t, log.String(), "init:")
	assert.Contains(t, log.String(), "resuming after epoch 1")

	o.Init, o.Epochs = b, 3
	_, err = job.Train(o, nil, false, &log)
	assert.ErrorContains(t, err, "--init ")
	assert.ErrorContains(t, err, "b.tsv")
}

func TestKindOf(t *testing.T) {
	assert.Equal(t, initemb.PBG, initemb.KindOf(t.TempDir()))
	assert.Equal(t, initemb.NPY, initemb.KindOf("x.NPY"))
	assert.Equal(t, initemb.TSV, initemb.KindOf("x.tsv"))
	assert.Equal(t, "init: 3 of 5 nodes from f (2 kept random)", initemb.Result{File: "f", Matched: 3, Nodes: 5}.String())
}
