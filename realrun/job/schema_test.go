package job

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

func TestConfigureSchema(t *testing.T) {
	dir := t.TempDir()
	edges := filepath.Join(dir, "train.tsv")
	require.NoError(t, os.WriteFile(edges, []byte("alice\tbought\tbook\nbob\tfollows\talice\n"), 0o644))
	s, err := workload.ParseSchema([]byte("entities: {user: {partitions: 2}, item: {}}\nrelations: [{name: bought, lhs: user, rhs: item}, {name: follows, lhs: user, rhs: user}]"))
	require.NoError(t, err)
	resident, err := workload.ParseSchema([]byte("entities: {user: {}}\nrelations: [{name: follows, lhs: user, rhs: user}]"))
	require.NoError(t, err)
	base := Defaults
	base.Edges, base.Schema, base.P, base.C, base.Workdir = edges, &s, 2, 2, filepath.Join(dir, "work")
	for _, tt := range []struct {
		name string
		edit func(o *Options)
		err  string
	}{
		{"accepted", func(o *Options) {}, ""},
		{"p differs", func(o *Options) { o.P = 4 }, "{P} 4 and {Schema}: p = 4, but the schema's partitioned entity types have 2 partitions"},
		{"dataset", func(o *Options) { o.Edges = "" }, "{Schema}: entity types go with {Edges}"},
		{"cuda", func(o *Options) { o.Engine = "cuda" }, "{Schema}: entity types are trained by the CPU engine only for now"},
		{"micro-batches", func(o *Options) { o.MicroBatches = 2 }, "{Schema}: entity types are trained with the chunk step only for now"},
		{"micro-batch memory", func(o *Options) { o.MicroBatchMemory = "1GB" }, "{Schema}: entity types are trained with the chunk step only for now"},
		{"several trainers", func(o *Options) { o.Distributed = true }, "{Schema}: entity types are trained by one trainer only for now"},
		{"every type resident", func(o *Options) { o.Schema = &resident }, "{Schema}: every entity type is unpartitioned (p = 1)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := base
			tt.edit(&o)
			cfg, err := Configure(o)
			if tt.err != "" {
				var bad *inputerr.Error
				require.ErrorAs(t, err, &bad)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, &s, cfg.Spec.Schema)
			assert.Contains(t, cfg.Settings["--schema"], "2 entity types, 2 relations (CRC-32C ")
		})
	}
}

func TestEntityTypesOutput(t *testing.T) {
	assert.Nil(t, EntityTypes(store.Manifest{P: 4}))
	m := store.Manifest{P: 4, Types: []store.EntityType{{Name: "user", Partitioned: true, Nodes: 10}, {Name: "item", Nodes: 3}}}
	assert.Equal(t, []EntityType{{Name: "user", Nodes: 10, Partitions: 4}, {Name: "item", Nodes: 3, Partitions: 1, Resident: true}}, EntityTypes(m))
}
