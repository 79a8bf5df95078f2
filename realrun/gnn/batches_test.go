package gnn

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// TestEpochBatchesAreTrainsBatches: EpochBatches samples, batch for
// batch, what Train trained on (its --save-blocks files), and
// ReadWorkdir gives back the run's options.
func TestEpochBatchesAreTrainsBatches(t *testing.T) {
	files := plantedGraph(t, t.TempDir(), 200, 3, 4, 4, 1, 0.8, 5)
	o := small(files, "sage-mean")
	o.Epochs, o.Seed, o.SaveBlocks, o.Workdir = 2, 7, filepath.Join(t.TempDir(), "blocks"), filepath.Join(t.TempDir(), "wd")
	_, err := Train(o)
	require.NoError(t, err)
	g, _, err := data.Load(files)
	require.NoError(t, err)
	back, set, err := ReadWorkdir(o.Workdir)
	require.NoError(t, err)
	assert.Equal(t, "7", set["seed"])
	require.NoError(t, err)
	assert.Equal(t, []any{o.Model, o.Layers, o.Hidden, o.Batch, o.Seed, o.Fanouts, o.LR, o.Dropout, o.Files.Edges},
		[]any{back.Model, back.Layers, back.Hidden, back.Batch, back.Seed, back.Fanouts, back.LR, back.Dropout, back.Files.Edges})
	for e := 1; e <= 2; e++ {
		saved, err := block.ReadFile(filepath.Join(o.SaveBlocks, block.EpochFile(e)))
		require.NoError(t, err)
		n := 0
		require.NoError(t, EpochBatches(g, back, e, func(i int, b *block.Batch) error {
			require.Less(t, i, len(saved))
			assert.Equal(t, saved[i].Blocks, b.Blocks, "epoch %d batch %d", e, i)
			n++
			return nil
		}))
		assert.Equal(t, len(saved), n)
	}
	_, _, err = ReadWorkdir(t.TempDir())
	var we *WorkdirError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, NotWorkdir, we.Kind)
}
