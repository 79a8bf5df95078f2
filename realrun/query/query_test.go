package query

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/model"
	"github.com/tierflow/tierflow/workload"
)

// testNodes and testRels shape the tests' graph: named nodes n000 … and
// relations r0 …, edges drawn from a fixed seed.
const (
	testNodes = 2000
	testRels  = 3
	testEdges = 16000
	testDim   = 32
)

// graphFile writes the tests' edge file: three columns with relations,
// two without.
func graphFile(t testing.TB, dir string, relations bool) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 0))
	seen := map[[3]int]bool{}
	var b strings.Builder
	for len(seen) < testEdges {
		e := [3]int{rng.IntN(testNodes), rng.IntN(testRels), rng.IntN(testNodes)}
		if !relations {
			e[1] = 0
		}
		if e[0] == e[2] || seen[e] {
			continue
		}
		seen[e] = true
		if relations {
			fmt.Fprintf(&b, "n%04d\tr%d\tn%04d\n", e[0], e[1], e[2])
		} else {
			fmt.Fprintf(&b, "n%04d\tn%04d\n", e[0], e[2])
		}
	}
	path := filepath.Join(dir, "edges.tsv")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
	return path
}

// trainedDir trains the tests' graph for kind into a work directory with
// p partitions, once per kind and p for the whole package.
func trainedDir(t testing.TB, kind workload.Model, p int) string {
	t.Helper()
	key := fmt.Sprintf("%s-%d", kind, p)
	trainedMu.Lock()
	defer trainedMu.Unlock()
	if dir, ok := trainedDirs[key]; ok {
		return dir
	}
	dir, err := os.MkdirTemp("", "tierflow-query-*")
	require.NoError(t, err)
	tempDirs = append(tempDirs, dir)
	o := job.Defaults
	o.Edges = graphFile(t, dir, kind != workload.Dot)
	o.Model, o.Dim, o.Epochs, o.P, o.C = string(kind), testDim, 2, p, 2
	o.Batch, o.Negatives, o.Workers, o.Eval = 500, 20, 1, "none"
	o.Workdir = filepath.Join(dir, "work")
	_, err = job.Train(o, nil, false, io.Discard)
	require.NoError(t, err)
	trainedDirs[key] = o.Workdir
	return o.Workdir
}

var (
	trainedMu   sync.Mutex
	trainedDirs = map[string]string{}
	tempDirs    []string
)

func TestMain(m *testing.M) {
	code := m.Run()
	for _, d := range tempDirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// exported reads a work directory's embeddings as `realrun export`
// writes them (TSV, named rows) and its relation parameters.
func exported(t testing.TB, work string) (names []string, emb map[string][]float64, relNames []string, rel map[string][]float64) {
	t.Helper()
	dir := t.TempDir()
	embPath, relPath := filepath.Join(dir, "emb.tsv"), filepath.Join(dir, "rel.tsv")
	tr, err := job.OpenTrained(work)
	require.NoError(t, err)
	withRel := tr.Model.UsesRelations()
	tr.Close()
	if !withRel {
		relPath = ""
	}
	_, err = job.ExportDir(work, embPath, "tsv", relPath, io.Discard)
	require.NoError(t, err)
	names, emb = readTSV(t, embPath)
	if withRel {
		relNames, rel = readTSV(t, relPath)
	}
	return names, emb, relNames, rel
}

func readTSV(t testing.TB, path string) ([]string, map[string][]float64) {
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var names []string
	out := map[string][]float64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, vals, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok)
		var v []float64
		for _, s := range strings.Fields(vals) {
			x, err := strconv.ParseFloat(s, 64)
			require.NoError(t, err)
			v = append(v, x)
		}
		names = append(names, name)
		out[name] = v
	}
	require.NoError(t, sc.Err())
	return names, out
}

// brute is the reference: every candidate scored straight from the
// exported embeddings in float64, the best k by score, ties by name.
type scored struct {
	name  string
	score float64
}

func bruteTop(names []string, score func(c string) (float64, bool), k int, lowerBetter bool) []scored {
	var all []scored
	for _, c := range names {
		if s, ok := score(c); ok {
			all = append(all, scored{c, s})
		}
	}
	slices.SortFunc(all, func(a, b scored) int {
		x := cmp.Compare(b.score, a.score)
		if lowerBetter {
			x = -x
		}
		if x != 0 {
			return x
		}
		return cmp.Compare(a.name, b.name)
	})
	return all[:min(k, len(all))]
}

func dot(a, b []float64) float64 {
	var s float64
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func metricOf(m Metric, a, b []float64) float64 {
	switch m {
	case Cos:
		return dot(a, b) / math.Sqrt(dot(a, a)*dot(b, b))
	case L2:
		var s float64
		for i := range a {
			s += (a[i] - b[i]) * (a[i] - b[i])
		}
		return math.Sqrt(s)
	}
	return dot(a, b)
}

// modelScore is the model's score of (s, r, d) in float64 from the
// exported rows, via the training score function on float32 copies.
func modelScore(kind workload.Model, s, r, d []float64) float64 {
	f := func(v []float64) []float32 {
		out := make([]float32, len(v))
		for i, x := range v {
			out[i] = float32(x)
		}
		return out
	}
	var rv []float32
	if r != nil {
		rv = f(r)
	}
	return float64(model.Score(kind, f(s), rv, f(d)))
}

// assertSame checks hits against the reference: the same nodes in the
// same order, scores within float32 rounding.
func assertSame(t *testing.T, want []scored, got []Hit, msg string) {
	t.Helper()
	require.Len(t, got, len(want), msg)
	for i := range want {
		assert.Equal(t, want[i].name, got[i].Node, "%s: hit %d", msg, i+1)
		assert.InDelta(t, want[i].score, got[i].Score, 1e-4*max(1, math.Abs(want[i].score)), "%s: hit %d", msg, i+1)
		assert.Equal(t, i+1, got[i].Rank)
	}
}

// smallBudget is a memory budget below the embeddings' size that holds
// one partition and the working set: the partitions are streamed.
func smallBudget(t *testing.T, work string) int64 {
	tr, err := job.OpenTrained(work)
	require.NoError(t, err)
	defer tr.Close()
	st := tr.Store
	embeddings := st.M.Nodes * int64(st.M.Dim) * 4
	budget := st.M.PartitionBytes + 4*st.M.Nodes + 2*8*st.M.Rows*4 + st.M.Rows*4 + 32<<10
	require.Greater(t, st.M.P, 2)
	require.Less(t, budget, int64(st.M.P)*st.M.PartitionBytes)
	require.Less(t, budget, 2*embeddings)
	return budget
}

// TestNeighborsEqualBruteForce: every metric's k nearest nodes, with the
// default budget and with one below the embeddings, are the brute force's
// over the exported embeddings.
func TestNeighborsEqualBruteForce(t *testing.T) {
	work := trainedDir(t, workload.ComplEx, 4)
	names, emb, _, _ := exported(t, work)
	from := []string{"n0000", "n0017", "n1234", "n1999"}
	for _, memory := range []int64{0, smallBudget(t, work)} {
		for _, m := range []Metric{Cos, Dot, L2} {
			t.Run(fmt.Sprintf("%s/memory=%d", m, memory), func(t *testing.T) {
				res, err := Neighbors(Options{Workdir: work, K: 7, Memory: memory, Workers: 2}, from, m, "")
				require.NoError(t, err)
				require.Len(t, res.Answers, len(from))
				assert.Equal(t, m, res.Metric)
				if memory > 0 {
					assert.LessOrEqual(t, res.MemoryBytes, memory)
				}
				for i, node := range from {
					want := bruteTop(names, func(c string) (float64, bool) {
						return metricOf(m, emb[node], emb[c]), c != node
					}, 7, m == L2)
					assert.Equal(t, node, res.Answers[i].Query)
					assertSame(t, want, res.Answers[i].Hits, node)
				}
			})
		}
	}
}

// TestRelationTailsEqualBruteForce: with a relation, the best tails are
// the brute force's under each model's score function, in and out of
// core.
func TestRelationTailsEqualBruteForce(t *testing.T) {
	for _, kind := range []workload.Model{workload.Dot, workload.DistMult, workload.ComplEx} {
		t.Run(string(kind), func(t *testing.T) {
			work := trainedDir(t, kind, 4)
			names, emb, _, rel := exported(t, work)
			relation := "r1"
			if kind == workload.Dot {
				relation = ""
			}
			for _, memory := range []int64{0, smallBudget(t, work)} {
				var qs []Question
				for _, n := range []string{"n0003", "n1250"} {
					qs = append(qs, Question{Head: n, Relation: relation, Tail: Unknown}, Question{Head: Unknown, Relation: relation, Tail: n})
				}
				qs = append(qs, Question{Head: "n0003", Relation: relation, Tail: "n1250"})
				res, err := Predict(Options{Workdir: work, K: 5, Memory: memory}, qs)
				require.NoError(t, err)
				require.Len(t, res.Answers, len(qs))
				for i, q := range qs {
					a := res.Answers[i]
					switch q.Kind() {
					case Tails:
						want := bruteTop(names, func(c string) (float64, bool) { return modelScore(kind, emb[q.Head], rel[relation], emb[c]), true }, 5, false)
						assertSame(t, want, a.Hits, q.String())
					case Heads:
						want := bruteTop(names, func(c string) (float64, bool) { return modelScore(kind, emb[c], rel[relation], emb[q.Tail]), true }, 5, false)
						assertSame(t, want, a.Hits, q.String())
					case Triple:
						ts := modelScore(kind, emb[q.Head], rel[relation], emb[q.Tail])
						require.NotNil(t, a.Score)
						assert.InDelta(t, ts, *a.Score, 1e-4*max(1, math.Abs(ts)))
						higher := 0
						for _, c := range names {
							if c != q.Tail && modelScore(kind, emb[q.Head], rel[relation], emb[c]) > ts {
								higher++
							}
						}
						assert.InDelta(t, float64(1+higher), a.Rank, 0.5, "raw rank")
						assert.Equal(t, int64(testNodes), a.Candidates)
					}
				}
				if kind != workload.Dot {
					// neighbors --relation is predict's (node, R, ?).
					nb, err := Neighbors(Options{Workdir: work, K: 5, Memory: memory}, []string{"n0003"}, Cos, relation)
					require.NoError(t, err)
					assert.Equal(t, Score, nb.Metric)
					assert.Equal(t, res.Answers[0].Hits, nb.Answers[0].Hits)
				}
			}
		})
	}
}

// TestQueryErrors: bad input is an input error with one clear line.
func TestQueryErrors(t *testing.T) {
	kg := trainedDir(t, workload.ComplEx, 4)
	plain := trainedDir(t, workload.Dot, 4)
	cases := []struct {
		name string
		run  func() error
		msg  string
	}{
		{"unknown node", func() error {
			_, err := Neighbors(Options{Workdir: kg}, []string{"n0001", "nope"}, Cos, "")
			return err
		}, `unknown node "nope"`},
		{"unknown relation", func() error {
			_, err := Neighbors(Options{Workdir: kg}, []string{"n0001"}, Cos, "r9")
			return err
		}, `unknown relation "r9"`},
		{"bad metric", func() error {
			_, err := Neighbors(Options{Workdir: kg}, []string{"n0001"}, "manhattan", "")
			return err
		}, `metric "manhattan"`},
		{"bad k", func() error { _, err := Neighbors(Options{Workdir: kg, K: -3}, []string{"n0001"}, Cos, ""); return err }, "k -3"},
		{"bad index", func() error {
			_, err := Neighbors(Options{Workdir: kg, Index: "lsh"}, []string{"n0001"}, Cos, "")
			return err
		}, `index "lsh"`},
		{"relation on dot", func() error {
			_, err := Predict(Options{Workdir: plain}, []Question{{Head: "n0001", Relation: "r0", Tail: Unknown, File: "q.tsv", Line: 4}})
			return err
		}, "q.tsv:4: \"n0001 r0 ?\": the model dot has no relations"},
		{"no relation on complex", func() error {
			_, err := Predict(Options{Workdir: kg}, []Question{{Head: "n0001", Tail: Unknown, File: "q.tsv", Line: 2}})
			return err
		}, "q.tsv:2: \"n0001 ?\": the model complex scores (head, relation, tail)"},
		{"unknown node in a file", func() error {
			_, err := Predict(Options{Workdir: kg}, []Question{{Head: Unknown, Relation: "r0", Tail: "zzz", File: "q.tsv", Line: 7}})
			return err
		}, `q.tsv:7: unknown node "zzz"`},
		{"budget too small", func() error {
			_, err := Neighbors(Options{Workdir: kg, Memory: 1000, MemoryName: "--memory"}, []string{"n0001"}, Cos, "")
			return err
		}, "raise --memory to at least"},
		{"hnsw over budget", func() error {
			_, err := Neighbors(Options{Workdir: kg, Memory: smallBudget(t, kg), MemoryName: "--memory", Index: HNSW}, []string{"n0001"}, Cos, "")
			return err
		}, "the hnsw index holds every embedding in memory"},
		{"not a work directory", func() error {
			_, err := Neighbors(Options{Workdir: t.TempDir()}, []string{"n0001"}, Cos, "")
			return err
		}, "not a work directory"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			require.Error(t, err)
			var bad *inputerr.Error
			assert.ErrorAs(t, err, &bad, "an input error: %v", err)
			assert.Contains(t, err.Error(), c.msg)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}

// TestCheckpointField: the checkpoint read is a field, found as realrun
// eval finds it: "last" ("" too) reads the current checkpoint, "best" the
// best epoch's copy, whose answers are the brute force's over that
// checkpoint's export; a directory without a best one is bad input.
func TestCheckpointField(t *testing.T) {
	dir := t.TempDir()
	o := job.Defaults
	o.Edges = graphFile(t, dir, true)
	o.Model, o.Dim, o.Epochs, o.P, o.C = "distmult", testDim, 3, 4, 2
	o.Batch, o.Negatives, o.Workers, o.Eval, o.EvalEdges, o.KeepBest = 500, 20, 1, "every", 200, true
	o.Workdir = filepath.Join(dir, "work")
	_, err := job.Train(o, nil, false, io.Discard)
	require.NoError(t, err)
	work := o.Workdir

	q := []Question{{Head: "n0010", Relation: "r2", Tail: Unknown}, {Head: "n0010", Relation: "r2", Tail: "n0011"}}
	def, err := Predict(Options{Workdir: work, K: 5}, q)
	require.NoError(t, err)
	last, err := Predict(Options{Workdir: work, K: 5, Checkpoint: job.CheckpointLast}, q)
	require.NoError(t, err)
	assert.Equal(t, def.Answers, last.Answers)
	assert.Equal(t, "epoch 3", def.Checkpoint)
	best, err := Predict(Options{Workdir: work, K: 5, Checkpoint: job.CheckpointBest, Memory: smallBudget(t, work)}, q)
	require.NoError(t, err)
	assert.Contains(t, best.Checkpoint, "(best)")

	// The best checkpoint's answers are the brute force's over its export.
	embPath, relPath := filepath.Join(dir, "best.tsv"), filepath.Join(dir, "best-rel.tsv")
	_, err = job.ExportCheckpoint(work, job.CheckpointBest, embPath, "tsv", relPath, io.Discard)
	require.NoError(t, err)
	names, emb := readTSV(t, embPath)
	_, rel := readTSV(t, relPath)
	want := bruteTop(names, func(c string) (float64, bool) {
		return modelScore(workload.DistMult, emb["n0010"], rel["r2"], emb[c]), true
	}, 5, false)
	assertSame(t, want, best.Answers[0].Hits, "best")
	assert.InDelta(t, modelScore(workload.DistMult, emb["n0010"], rel["r2"], emb["n0011"]), *best.Answers[1].Score, 1e-4)

	_, err = Predict(Options{Workdir: trainedDir(t, workload.DistMult, 4), Checkpoint: job.CheckpointBest}, q)
	assert.ErrorIs(t, err, job.ErrNoBest)
	_, err = Predict(Options{Workdir: work, Checkpoint: "worst"}, q)
	var bad *inputerr.Error
	assert.ErrorAs(t, err, &bad)
}

// TestHNSWRecall: the approximate index finds most of the exact k
// nearest on the seeded graph, deterministically, and its hits carry
// exact scores.
func TestHNSWRecall(t *testing.T) {
	work := trainedDir(t, workload.ComplEx, 4)
	var from []string
	for i := 0; i < testNodes; i += 40 {
		from = append(from, fmt.Sprintf("n%04d", i))
	}
	for _, m := range []Metric{Cos, L2} {
		t.Run(string(m), func(t *testing.T) {
			exact, err := Neighbors(Options{Workdir: work, K: 10}, from, m, "")
			require.NoError(t, err)
			approx, err := Neighbors(Options{Workdir: work, K: 10, Index: HNSW, Seed: 1, EfSearch: 40}, from, m, "")
			require.NoError(t, err)
			assert.Equal(t, HNSW, approx.Index)
			again, err := Neighbors(Options{Workdir: work, K: 10, Index: HNSW, Seed: 1, EfSearch: 40}, from, m, "")
			require.NoError(t, err)
			assert.Equal(t, approx.Answers, again.Answers, "the same seed, the same index and answers")
			r := Recall(exact, approx)
			t.Logf("%s recall@10 %.3f over %d queries", m, r, len(from))
			assert.GreaterOrEqual(t, r, 0.95)
			for i, a := range approx.Answers {
				byNode := map[string]float64{}
				for _, h := range exact.Answers[i].Hits {
					byNode[h.Node] = h.Score
				}
				for _, h := range a.Hits {
					if s, ok := byNode[h.Node]; ok {
						assert.InDelta(t, s, h.Score, 1e-5)
					}
				}
			}
		})
	}
}

// TestStop: a closed Stop ends a search before it streams the partitions,
// with eval.ErrStopped and no result, for neighbours, relations and
// predictions alike (a command's Ctrl-C).
func TestStop(t *testing.T) {
	work := trainedDir(t, workload.ComplEx, 4)
	stop := make(chan struct{})
	close(stop)
	o := Options{Workdir: work, K: 3, Workers: 2, Stop: stop}
	res, err := Neighbors(o, []string{"n0000"}, Cos, "")
	assert.ErrorIs(t, err, eval.ErrStopped)
	assert.Nil(t, res)
	_, err = Predict(o, []Question{{Head: "n0000", Relation: "r0", Tail: "?"}})
	assert.ErrorIs(t, err, eval.ErrStopped)
}
