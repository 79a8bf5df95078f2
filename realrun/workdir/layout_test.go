package workdir

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
)

func TestLayout(t *testing.T) {
	// twitter at 0.002: 83,200 nodes; 8 partitions of 10,400 rows of 64
	// floats and their Adagrad state.
	m, err := Layout(DataSpec{Dataset: "twitter", Scale: 0.002, P: 8, Dim: 64})
	require.NoError(t, err)
	assert.Equal(t, int64(83200), m.Nodes)
	assert.Equal(t, int64(10400), m.Rows)
	assert.Equal(t, int64(10400*64*8), m.DataBytes)
	assert.Zero(t, m.PartitionBytes%4096, "padded to the O_DIRECT alignment")

	for _, spec := range []DataSpec{
		{Dataset: "nope", Scale: 1, P: 2, Dim: 8},
		{Dataset: "fb15k", Scale: 1, P: 20000, Dim: 8},
		{Edges: "edges.tsv", Workdir: t.TempDir() + "/none", P: 2, Dim: 8},
	} {
		_, err := Layout(spec)
		var bad *inputerr.Error
		assert.True(t, errors.As(err, &bad), "%+v: %v", spec, err)
	}
}
