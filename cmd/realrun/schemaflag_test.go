package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/job"
)

// TestApplySchema: --p omitted takes the schema's count (and --c omitted
// at most that p); --p given stays for job.Configure to compare; a bad
// schema is one line naming the file and the field.
func TestApplySchema(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "schema.yaml")
	require.NoError(t, os.WriteFile(file, []byte("entities: {user: {partitions: 3}, item: {}}\nrelations: [{name: bought, lhs: user, rhs: item}]\n"), 0o644))
	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte("entities: {user: {partitions: 3}}\nrelations: [{name: bought, lhs: user, rhs: item}]\n"), 0o644))
	for _, tt := range []struct {
		name       string
		args       []string
		file       string
		wantP      int
		wantC      int
		err        string
		typesCount int
	}{
		{name: "p from the schema, c at most p", file: file, wantP: 3, wantC: 3, typesCount: 2},
		{name: "c given stays", args: []string{"--c", "2"}, file: file, wantP: 3, wantC: 2, typesCount: 2},
		{name: "p given stays", args: []string{"--p", "8"}, file: file, wantP: 8, wantC: 4, typesCount: 2},
		{name: "no schema", wantP: job.Defaults.P, wantC: job.Defaults.C},
		{name: "bad schema", file: bad, err: "--schema " + bad + `: relations[0].rhs: "item" is not an entity type of the schema (user)`},
		{name: "missing file", file: filepath.Join(dir, "none.yaml"), err: "--schema: open "},
		{name: "several trainers", args: []string{"--trainers", "2"}, file: file, err: "--schema: entity types are trained by one trainer only for now (not --trainers)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o cmdOptions
			fs := newFlagSet(prog)
			fs.IntVar(&o.P, "p", job.Defaults.P, "")
			fs.IntVar(&o.C, "c", job.Defaults.C, "")
			fs.IntVar(&o.dist.Trainers, "trainers", 0, "")
			require.NoError(t, fs.Parse(tt.args))
			err := applySchema(fs, &o, tt.file)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.wantP, o.P)
			assert.Equal(t, tt.wantC, o.C)
			if tt.typesCount > 0 {
				require.NotNil(t, o.Schema)
				assert.Len(t, o.Schema.Types, tt.typesCount)
			} else {
				assert.Nil(t, o.Schema)
			}
		})
	}
}

func TestTypesSummary(t *testing.T) {
	assert.Empty(t, typesSummary(job.Output{}), "untyped")
	out := job.Output{EntityTypes: []job.EntityType{{Name: "user", Nodes: 9000, Partitions: 4}, {Name: "item", Nodes: 1000, Partitions: 1, Resident: true}}}
	assert.Equal(t, "2 entity types: user 9,000 nodes in 4 partitions, item 1,000 nodes resident (in memory)", typesSummary(out))
	assert.Equal(t, "1,234,567", thousands(1234567))
	assert.Equal(t, "-1,000", thousands(-1000))
	assert.Equal(t, "999", thousands(999))
}
