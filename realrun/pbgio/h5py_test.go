//go:build hdf5

package pbgio_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// python is Debian's interpreter, whose h5py and numpy come from
// python3-h5py and python3-numpy (make h5py-deps); the python3 on PATH
// may be another.
const python = "/usr/bin/python3"

// needH5py fails the test when h5py cannot be imported, unless
// TIERFLOW_SKIP_H5PY is set (then it skips).
func needH5py(t *testing.T) {
	t.Helper()
	if out, err := exec.Command(python, "-c", "import h5py, numpy").CombinedOutput(); err != nil {
		if os.Getenv("TIERFLOW_SKIP_H5PY") != "" {
			t.Skipf("h5py missing (TIERFLOW_SKIP_H5PY set): %s", out)
		}
		t.Fatalf("the read-back test needs Debian's h5py and numpy in %s: run `make h5py-deps` (or set TIERFLOW_SKIP_H5PY=1 to skip): %v: %s", python, err, out)
	}
}

// pbgRead is what testdata/read_pbg.py prints.
type pbgRead struct {
	Version       int                  `json:"version"`
	Dimension     int                  `json:"dimension"`
	Entities      map[string][]float32 `json:"entities"`
	Params        map[string][]float32 `json:"params"`
	Keys          map[string]string    `json:"keys"`
	RelationNames []string             `json:"relation_names"`
	RelationCount int                  `json:"relation_count"`
	Shapes        map[string][]int     `json:"shapes"`
	Scores        []float32            `json:"scores"`
	SrcScores     []float32            `json:"src_scores"`
}

// train trains the fixture KG for two epochs and exports it in PBG's
// layout; it returns the work directory and the export.
func train(t *testing.T, m workload.Model) (*store.Store, string) {
	t.Helper()
	dir := t.TempDir()
	o := job.Defaults
	o.Edges, o.Model, o.Dim, o.P, o.C, o.Epochs = fixture.KGFile(t), string(m), 8, 3, 2, 2
	o.Batch, o.Negatives, o.Workers, o.Eval = 100, 10, 1, "none"
	o.Workdir, o.Export, o.ExportFormat = filepath.Join(dir, "work"), filepath.Join(dir, "pbg"), "pbg"
	var log bytes.Buffer
	_, err := job.Train(o, nil, false, &log)
	require.NoError(t, err, log.String())
	assert.Contains(t, log.String(), "wrote "+o.Export+" (PyTorch-BigGraph checkpoint layout")
	st, err := store.Open(o.Workdir)
	require.NoError(t, err)
	return st, o.Export
}

func TestExportReadBackWithH5py(t *testing.T) {
	needH5py(t)
	for _, m := range []workload.Model{workload.ComplEx, workload.DistMult, workload.Dot, workload.TransEL2, "linear+cos", "affine+l2", "complex_diagonal+squared_l2", "diagonal+cos"} {
		t.Run(string(m), func(t *testing.T) {
			st, out := train(t, m)
			d := st.M.Dim
			emb := fixture.Embeddings(t, st)
			perm, err := st.Permutation()
			require.NoError(t, err)
			names, err := graph.ReadNames(filepath.Join(st.Dir, "ids.tsv"), st.M.Nodes)
			require.NoError(t, err)
			row := func(name string) []float32 {
				for orig, n := range names {
					if n == name {
						return emb[int(perm[orig])*d : int(perm[orig]+1)*d]
					}
				}
				t.Fatalf("no node %s", name)
				return nil
			}
			// Three edges to score as PBG does.
			triples := [][3]string{{"ent_00", "0", "ent_01"}, {"ent_05", "1", "ent_17"}, {"ent_39", "2", "ent_02"}}
			args := []string{"testdata/read_pbg.py", out}
			for _, tr := range triples {
				args = append(args, tr[:]...)
			}
			cmd := exec.Command(python, args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			data, err := cmd.Output()
			require.NoError(t, err, stderr.String())
			var got pbgRead
			require.NoError(t, json.Unmarshal(data, &got))

			assert.Equal(t, 2, got.Version)
			assert.Equal(t, d, got.Dimension)
			require.Len(t, got.Entities, int(st.M.Nodes))
			for orig, name := range names {
				assert.Equal(t, emb[int(perm[orig])*d:int(perm[orig]+1)*d], got.Entities[name], name)
			}
			relNames, err := graph.ReadNames(filepath.Join(st.Dir, "relations.tsv"), int64(st.M.Relations))
			require.NoError(t, err)
			assert.Equal(t, relNames, got.RelationNames) // the input's relation names, in id order
			assert.Contains(t, got.RelationNames, "part_of")
			rel, err := pbgio.StoredRelations(st)
			require.NoError(t, err)
			params, err := pbgio.RelationParams(m, rel, st.M.Relations, d)
			require.NoError(t, err)
			require.Len(t, got.Params, len(params))
			for _, p := range params {
				assert.Equal(t, p.Data, got.Params[p.Name], p.Name)
				assert.Equal(t, p.Key, got.Keys[p.Name], p.Name)
				assert.Equal(t, p.Shape(), got.Shapes[p.Name], p.Name)
			}
			if pbgio.Dynamic(m) {
				assert.Equal(t, st.M.Relations, got.RelationCount, "dynamic_rel_count.txt")
			}
			if m == workload.Dot {
				return
			}
			for i, tr := range triples {
				var r int
				fmt.Sscan(tr[1], &r)
				w := m.RelWidth(d)
				wantDst, wantSrc := ourScores(m, rel[r*w:(r+1)*w], row(tr[0]), row(tr[2]))
				if m == workload.DistMult || m == workload.ComplEx {
					wantDst = float64(model.Score(m, row(tr[0]), rel[r*w:(r+1)*w], row(tr[2])))
					wantSrc = wantDst
				}
				assert.InDelta(t, wantDst, got.Scores[i], 1e-4, "PBG's score of %v, destinations corrupted", tr)
				assert.InDelta(t, wantSrc, got.SrcScores[i], 1e-4, "PBG's score of %v, sources corrupted", tr)
			}

			// Our own reader reads the same.
			c, err := pbgio.OpenCheckpoint(out)
			require.NoError(t, err)
			assert.Equal(t, pbgio.Entity, c.Entity)
			assert.Equal(t, st.M.P, c.Parts)
			for p := 0; p < c.Parts; p++ {
				pn, pe, err := c.Partition(p)
				require.NoError(t, err)
				for i, n := range pn {
					assert.Equal(t, got.Entities[n], pe[i*d:(i+1)*d])
				}
			}
			back, err := c.Relations(m, st.M.Relations)
			require.NoError(t, err)
			assert.Equal(t, rel, back)
		})
	}
}

func TestExportReplacesOnlyAnExport(t *testing.T) {
	st, out := train(t, workload.DistMult)
	// A second export over the first replaces it.
	_, err := pbgio.Export(out, st)
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(out, pbgio.ModelFile(2)))
	require.NoError(t, err)
	other := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644))
	_, err = pbgio.Export(other, st)
	assert.ErrorContains(t, err, "holds no PBG export")
	data, err := os.ReadFile(filepath.Join(other, "notes.txt"))
	require.NoError(t, err)
	assert.Equal(t, "mine", string(data))
}
