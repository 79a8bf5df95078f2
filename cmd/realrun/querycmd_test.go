package main

import (
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/query"
)

// queryWorkdir trains a small named knowledge graph (ComplEx, p=3) with
// the command and returns its work directory.
func queryWorkdir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&b, "ent%03d\trel%d\tent%03d\n", i, i%3, (i*7+1)%150)
	}
	edges, work := filepath.Join(dir, "kg.tsv"), filepath.Join(dir, "work")
	require.NoError(t, os.WriteFile(edges, []byte(b.String()), 0o644))
	_, errOut, code := runCmd("--edges", edges, "--model", "complex", "--dim", "64", "--p", "3", "--c", "2", "--epochs", "1",
		"--workers", "1", "--eval", "none", "--workdir", work, "--progress", "none")
	require.Equal(t, 0, code, errOut)
	return work
}

// TestNeighborsAndPredictCommands: the formats, flags after the nodes,
// a budget below the embeddings giving the same answers, and bad input as
// one line with exit status 2.
func TestNeighborsAndPredictCommands(t *testing.T) {
	work := queryWorkdir(t)
	out, errOut, code := runCmd("neighbors", work, "ent001", "ent002", "--k", "4", "--json")
	require.Equal(t, 0, code, errOut)
	var res query.Result
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Answers, 2)
	assert.Equal(t, query.Cos, res.Metric)
	assert.Equal(t, "epoch 1", res.Checkpoint)
	for _, a := range res.Answers {
		assert.Len(t, a.Hits, 4)
		for _, h := range a.Hits {
			assert.NotEqual(t, a.Query, h.Node, "a node is not its own neighbour")
		}
	}

	// The same answers within a budget of one partition (60 kB, below the
	// embeddings' 300 × 64 × 4 = 76.8 kB), as CSV.
	out, errOut, code = runCmd("neighbors", work, "--memory", "60kB", "ent001", "ent002", "--k", "4", "--csv")
	require.Equal(t, 0, code, errOut)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 1+8)
	assert.Equal(t, []string{"query", "rank", "node", "score"}, rows[0])
	for i, row := range rows[1:] {
		a := res.Answers[i/4]
		assert.Equal(t, []string{a.Query, fmt.Sprint(i%4 + 1), a.Hits[i%4].Node}, row[:3])
	}

	out, errOut, code = runCmd("neighbors", work, "ent001", "--relation", "rel1", "--k", "3")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ent001 rel1 ?")
	assert.Contains(t, out, "score")
	assert.Contains(t, out, "exact search")

	queries := filepath.Join(t.TempDir(), "q.tsv")
	require.NoError(t, os.WriteFile(queries, []byte("# tails, heads, a triple\nent001\trel1\t?\n?\trel1\tent008\nent001 rel1 ent008\n"), 0o644))
	out, errOut, code = runCmd("predict", work, "--queries", queries, "--k", "2")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "ent001 rel1 ?")
	assert.Contains(t, out, "? rel1 ent008")
	assert.Contains(t, out, "ent001 rel1 ent008")
	assert.Contains(t, out, "raw (unfiltered) rank")
	out, errOut, code = runCmd("predict", work, "--queries", queries, "--json", "--index", "hnsw")
	require.Equal(t, 0, code, errOut)
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Len(t, res.Answers, 3)
	require.NotNil(t, res.Answers[2].Score)
	assert.Equal(t, int64(res.Nodes), res.Answers[2].Candidates)

	bad := filepath.Join(t.TempDir(), "bad.tsv")
	require.NoError(t, os.WriteFile(bad, []byte("ent001\trel1\t?\nent001 rel1 ? extra\nent001 rel1\n"), 0o644))
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"neighbors", work, "ent001", "nobody"}, `unknown node "nobody"`},
		{[]string{"neighbors", work, "ent001", "--k", "0"}, "--k 0: must be at least 1"},
		{[]string{"neighbors", work, "ent001", "--metric", "jaccard"}, `--metric: metric "jaccard": want cos, dot or l2`},
		{[]string{"neighbors", work, "ent001", "--relation", "rel1", "--metric", "l2"}, "a relation ranks by the model's score"},
		{[]string{"neighbors", work, "ent001", "--relation", "rel9"}, `unknown relation "rel9"`},
		{[]string{"neighbors", work}, "name at least one node"},
		{[]string{"neighbors"}, "give the work directory first"},
		{[]string{"neighbors", work, "ent001", "--memory", "1kB"}, "raise --memory to at least"},
		{[]string{"neighbors", work, "ent001", "--index", "annoy"}, `--index: index "annoy"`},
		{[]string{"neighbors", work, "ent001", "--memory", "60kB", "--index", "hnsw"}, "the hnsw index holds every embedding in memory"},
		{[]string{"neighbors", work, "ent001", "--checkpoint", "best"}, "--checkpoint best: " + work + ": no best checkpoint"},
		{[]string{"predict", work}, "--queries FILE is required"},
		{[]string{"predict", work, "--queries", bad}, bad + ":2: 4 fields"},
		{[]string{"predict", work, "--queries", bad + ".missing"}, "--queries: open"},
		{[]string{"predict", work, "extra", "--queries", bad}, `unexpected argument "extra"`},
	} {
		t.Run(strings.Join(c.args[min(2, len(c.args)):], " "), func(t *testing.T) {
			out, errOut, code := runCmd(c.args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, c.msg)
		})
	}
}

func TestSplitArgs(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.Int("k", 1, "")
	fs.Bool("json", false, "")
	for _, c := range []struct {
		in         []string
		pos, flags []string
	}{
		{[]string{"w", "a", "--k", "3", "b"}, []string{"w", "a", "b"}, []string{"--k", "3"}},
		{[]string{"w", "--json", "a", "--k=2"}, []string{"w", "a"}, []string{"--json", "--k=2"}},
		{[]string{"w", "--", "-x", "--k"}, []string{"w", "-x", "--k"}, nil},
		{[]string{"w", "--nope", "a"}, []string{"w", "a"}, []string{"--nope"}},
		{[]string{"w", "--k"}, []string{"w"}, []string{"--k"}},
	} {
		pos, flags := splitArgs(fs, c.in)
		assert.Equal(t, c.pos, pos, "%q", c.in)
		assert.Equal(t, c.flags, flags, "%q", c.in)
	}
}
