//go:build hdf5

package initemb_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/pbgio"
)

func TestInitFromOurPBGExport(t *testing.T) {
	edges := fixture.KGFile(t)
	src, _ := open(t, options(t, edges, 1))
	dir := filepath.Join(t.TempDir(), "pbg")
	_, err := pbgio.Export(dir, src)
	require.NoError(t, err)
	o := options(t, edges, 2)
	o.Init = dir
	st, log := open(t, o)
	assert.Contains(t, log, "init: 40 of 40 nodes from "+dir+" (0 kept random)")
	assert.Equal(t, rows(t, src), rows(t, st))
}

// TestInitFromH5pyCheckpoint reads a checkpoint h5py wrote as PBG's
// storage does: another entity type name, partition count and version,
// names in a separate entity path, a global embedding to add, a name the
// graph lacks and nodes the checkpoint lacks.
func TestInitFromH5pyCheckpoint(t *testing.T) {
	const python = "/usr/bin/python3"
	if out, err := exec.Command(python, "-c", "import h5py, numpy").CombinedOutput(); err != nil {
		if os.Getenv("TIERFLOW_SKIP_H5PY") != "" {
			t.Skipf("h5py missing (TIERFLOW_SKIP_H5PY set): %s", out)
		}
		t.Fatalf("needs Debian's h5py and numpy in %s: run `make h5py-deps` (or set TIERFLOW_SKIP_H5PY=1 to skip): %v: %s", python, err, out)
	}
	dir := t.TempDir()
	ckpt, ents := filepath.Join(dir, "ckpt"), filepath.Join(dir, "entities")
	out, err := exec.Command(python, "testdata/write_pbg.py", ckpt, ents, "8").CombinedOutput()
	require.NoError(t, err, string(out))

	edges := fixture.KGFile(t)
	plain, _ := open(t, options(t, edges, 2))
	random := rows(t, plain)
	o := options(t, edges, 2)
	o.Init = ckpt
	st, log := open(t, o)
	assert.Contains(t, log, "init: 20 of 40 nodes from "+ckpt+" (20 kept random); 1 rows of it name no node of the graph")
	got := rows(t, st)
	for k := 0; k < 40; k++ {
		name := fmt.Sprintf("ent_%02d", k)
		if k >= 20 {
			assert.Equal(t, random[name], got[name], name)
			continue
		}
		want := make([]float32, 8)
		for j := range want {
			want[j] = float32(k*8+j) + 0.25 + 0.125
		}
		assert.Equal(t, want, got[name], name)
	}
}
