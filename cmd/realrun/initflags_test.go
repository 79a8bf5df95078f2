package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/pbgio"
)

func TestInitFlag(t *testing.T) {
	dir := t.TempDir()
	npy := filepath.Join(dir, "emb.npy")
	base := []string{"--dataset", "twitter", "--scale", "0.0002", "--p", "4", "--c", "2", "--dim", "16", "--eval", "none", "--progress", "none"}
	_, errOut, code := runCmd(append(base, "--workdir", filepath.Join(dir, "a"), "--export", npy)...)
	require.Equal(t, 0, code, errOut)

	_, errOut, code = runCmd(append(base, "--workdir", filepath.Join(dir, "b"), "--init", npy, "--seed", "2")...)
	require.Equal(t, 0, code, errOut)
	assert.Regexp(t, regexp.MustCompile(`init: (\d+) of (\d+) nodes from `+regexp.QuoteMeta(npy)+` \(0 kept random\)`), errOut)

	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"init missing", []string{"--init", filepath.Join(dir, "none.npy")}, "--init"},
		{"init dimension", []string{"--init", npy, "--dim", "8"}, "--init " + npy + ": embeddings of dimension 16, the run's --dim is 8"},
		{"pbg into a file", []string{"--export", npy, "--export-format", "pbg"}, "--export"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append(append([]string(nil), base...), "--workdir", filepath.Join(dir, "w-"+strings.ReplaceAll(tc.name, " ", "-")))
			_, errOut, code := runCmd(append(args, tc.args...)...)
			assert.Equal(t, 2, code, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
	if !pbgio.HDF5 {
		_, errOut, code := runCmd(append(base, "--workdir", filepath.Join(dir, "c"), "--export", filepath.Join(dir, "pbg"), "--export-format", "pbg")...)
		assert.Equal(t, 2, code, errOut)
		assert.Contains(t, errOut, "-tags hdf5")
	}
}
