package job

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/workload"
)

// TestConfigureInput: the default score function follows the file as it
// will be read (delimiter, header, --columns), and the input flags that
// differ from their defaults are part of the work directory's settings.
func TestConfigureInput(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, content string
		f             graph.Format
		model         workload.Model
	}{
		{"three columns", "a r b\nb r c\n", graph.Format{}, workload.ComplEx},
		{"two columns", "a b\nb c\n", graph.Format{}, workload.Dot},
		{"header with a weight, no relation", "source,target,weight\na,b,1\n", graph.Format{}, workload.Dot},
		{"header placing the relation last", "from,to,label\na,b,r\n", graph.Format{}, workload.ComplEx},
		{"columns leave the relation out", "a r b\n", graph.Format{Columns: "1,3"}, workload.Dot},
		{"columns pick a relation in a wider file", "e1\ta\tr\tb\n", graph.Format{Columns: "2,3,4"}, workload.ComplEx},
		{"tsv ids with spaces", "New York\tlocated in\tUSA\n", graph.Format{}, workload.ComplEx},
		{"the same as blanks", "New York\tlocated in\tUSA\n", graph.Format{Delimiter: graph.DelimSpace, Columns: "1,2"}, workload.Dot},
		{"header yes on a two-column file", "x y z\na b\n", graph.Format{Header: graph.HeaderYes, Columns: "1,2"}, workload.Dot},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, "e"+string(rune('a'+i))+".txt")
			require.NoError(t, os.WriteFile(path, []byte(tc.content), 0o644))
			o := Defaults
			o.P, o.C, o.Dim, o.Edges, o.Input = 2, 2, 8, path, tc.f
			o.Workdir = filepath.Join(dir, "w")
			cfg, err := Configure(o)
			require.NoError(t, err)
			assert.Equal(t, tc.model, cfg.Hyper.Model)
			for k, v := range tc.f.NonDefault() {
				assert.Equal(t, v, cfg.Settings[k], k)
			}
			assert.NotContains(t, cfg.Settings, "--unseen", "defaults are not recorded: older directories resume")
		})
	}
	o := Defaults
	o.Input.Header = graph.HeaderNo
	_, err := Configure(o)
	require.Error(t, err)
	assert.Equal(t, "--header: goes with {Edges}", err.Error())
	o.Input = graph.Format{Unseen: "drop"}
	o.Edges = filepath.Join(dir, "ea.txt")
	_, err = Configure(o)
	require.Error(t, err)
	assert.Equal(t, `{Unseen} "drop": want skip or error`, err.Error())
}
