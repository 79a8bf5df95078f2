package workdir_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// smallStore builds a work directory of 40 nodes at p = 4, d = 8 (no
// training record).
func smallStore(t *testing.T) *store.Store {
	t.Helper()
	b, err := store.NewBuilder(filepath.Join(t.TempDir(), "work"), "small.tsv", 40, 2, 4, 3)
	require.NoError(t, err)
	for k := range 200 {
		require.NoError(t, b.Add(int64(k%40), int64(k%2), int64((k*7)%40), store.Train))
	}
	st, err := b.Finish(8, "complex", 0.1)
	require.NoError(t, err)
	return st
}

func TestReadTrained(t *testing.T) {
	for _, tt := range []struct {
		name     string
		settings workdir.Settings // nil: no record
		want     workdir.Trained
		err      string
	}{
		{name: "manifest only", want: workdir.Trained{P: 4, Dim: 8, Model: "complex"}},
		{name: "record",
			settings: workdir.Settings{"--p": "4", "--c": "3", "--dim": "8", "--model": "complex", "--batch": "500", "--negatives": "64",
				"--chunk": "32", "--ordering": "hilbert", "--policy": "lru", "--ordering-seed": "9", "--seed": "1", "--lr": "0.1"},
			want: workdir.Trained{P: 4, C: 3, Dim: 8, Model: "complex", Batch: 500, Negatives: 64, Chunk: 32, Ordering: "hilbert", Policy: "lru", OrderingSeed: 9, Recorded: true}},
		{name: "chunk as many as the negatives is the default",
			settings: workdir.Settings{"--negatives": "64", "--chunk": "64"},
			want:     workdir.Trained{Negatives: 64, Recorded: true}},
		{name: "bad count", settings: workdir.Settings{"--batch": "lots"}, err: `training.json: --batch "lots" is not a count`},
		{name: "bad seed", settings: workdir.Settings{"--ordering-seed": "x"}, err: `--ordering-seed "x" is not a number`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := smallStore(t)
			if tt.settings != nil {
				require.NoError(t, workdir.Record(st.Dir, tt.settings))
			}
			got, err := workdir.ReadTrained(st)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
	st := smallStore(t)
	require.NoError(t, os.WriteFile(filepath.Join(st.Dir, workdir.SettingsFile), []byte("{"), 0o644))
	_, err := workdir.ReadTrained(st)
	assert.ErrorContains(t, err, workdir.SettingsFile)
}
