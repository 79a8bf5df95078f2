package workdir_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// TestBucketCountsMatchBuildAtThatP: the relabelling does not depend on p,
// so the buckets counted at p' from a directory built at p are exactly
// those of the same input built at p' — for a generated preset and for a
// parsed edge file.
func TestBucketCountsMatchBuildAtThatP(t *testing.T) {
	edges := filepath.Join(t.TempDir(), "edges.tsv")
	var sb strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		fmt.Fprintf(&sb, "n%d\tr%d\tn%d\n", rng.IntN(97), rng.IntN(3), rng.IntN(97))
	}
	require.NoError(t, os.WriteFile(edges, []byte(sb.String()), 0o644))
	ps := []int{2, 3, 5, 7}
	for _, tt := range []struct {
		name string
		spec workdir.DataSpec
	}{
		{"preset fb15k", workdir.DataSpec{Dataset: "fb15k", Scale: 0.02, Seed: 5, Dim: 2, Model: "distmult"}},
		{"edge file", workdir.DataSpec{Edges: edges, Seed: 5, Dim: 2, Model: "distmult"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			built := map[int]*store.Store{}
			for _, p := range []int{2, 5, 7} {
				spec := tt.spec
				spec.P, spec.Workdir = p, filepath.Join(t.TempDir(), fmt.Sprint(p))
				st, err := workdir.Prepare(spec)
				require.NoError(t, err)
				built[p] = st
			}
			got, err := built[2].BucketCounts(ps)
			require.NoError(t, err)
			require.Len(t, got, len(ps))
			for k, p := range ps {
				var total int64
				for _, row := range got[k] {
					require.Len(t, row, p)
					for _, n := range row {
						total += n
					}
				}
				assert.Equal(t, built[2].M.Train, total, "p=%d: every training edge counted once", p)
				if st, ok := built[p]; ok {
					assert.Equal(t, st.M.Buckets, got[k], "p=%d: the buckets a build at p writes", p)
				}
			}
			// From another directory's p, the same answer.
			again, err := built[7].BucketCounts(ps)
			require.NoError(t, err)
			assert.Equal(t, got, again)
		})
	}
}

func TestBucketCountsErrors(t *testing.T) {
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.01, Seed: 1, P: 2, Dim: 2, Workdir: filepath.Join(t.TempDir(), "w")})
	require.NoError(t, err)
	_, err = st.BucketCounts([]int{0})
	assert.ErrorContains(t, err, "p = 0 partitions")
	_, err = st.BucketCounts([]int{int(st.M.Nodes) + 1})
	assert.ErrorContains(t, err, "partitions for the")
	// A bucket altered after it was written is caught.
	path := filepath.Join(st.Dir, store.BucketName(0, 1))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[0] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o644))
	_, err = st.BucketCounts([]int{3})
	assert.ErrorIs(t, err, store.ErrCorrupt)
	require.NoError(t, os.WriteFile(path, data[:len(data)-5], 0o644))
	_, err = st.BucketCounts([]int{3})
	assert.ErrorContains(t, err, "unexpected EOF")
}
