package gnnsim

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
)

func mustModel(t testing.TB, w Workload, g *data.Graph) *nn.Model {
	m, err := nn.New(nn.Spec{Model: w.Model, In: g.F, Hidden: w.Hidden, Classes: len(g.Classes), Layers: w.Layers, Heads: w.Heads}, 0)
	require.NoError(t, err)
	return m
}
