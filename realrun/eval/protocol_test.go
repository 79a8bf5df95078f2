package eval

import (
	"errors"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// TestParseProtocol: a protocol name is read in any case.
func TestParseProtocol(t *testing.T) {
	for _, tc := range []struct{ in, want, err string }{
		{"auto", Auto, ""},
		{"Filtered", Filtered, ""},
		{"SAMPLED", Sampled, ""},
		{"exact", "", `"exact": want auto, filtered or sampled`},
		{"", "", `"": want auto, filtered or sampled`},
	} {
		got, err := ParseProtocol(tc.in)
		if tc.err != "" {
			assert.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		assert.Equal(t, tc.want, got)
	}
}

// TestChoose: auto ranks filtered up to FilteredMaxNodes nodes and sampled
// above, saying so and what filtered ranking would need (its working set
// and one partition); a protocol asked for is the one ranked.
func TestChoose(t *testing.T) {
	st := fixture.Prepare(t, "fb15k", 0.05, 3, 16, workload.DistMult) // 748 nodes
	for _, tc := range []struct {
		name, protocol string
		maxNodes       int64
		want           string
		auto           bool
	}{
		{"auto, small graph", "", 1000, Filtered, true},
		{"auto, at the threshold", "auto", 748, Filtered, true},
		{"auto, over the threshold", "auto", 747, Sampled, true},
		{"filtered asked for", "filtered", 10, Filtered, false},
		{"sampled asked for", "sampled", 1000, Sampled, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Protocol: tc.protocol, FilteredMaxNodes: tc.maxNodes, MaxEdges: 100, Workers: 2, Split: store.Test, Memory: 1 << 30}
			c, err := Choose(st, opt)
			require.NoError(t, err)
			assert.Equal(t, tc.want, c.Protocol)
			assert.Equal(t, tc.auto, c.Auto)
			assert.Equal(t, int64(748), c.Nodes)
			assert.Equal(t, 100, c.Edges)
			assert.Equal(t, int64(1<<30), c.Budget)
			if tc.auto && tc.want == Sampled {
				assert.Equal(t, filteredWorking(st, 200, 2)+st.M.PartitionBytes, c.FilteredMemory)
				// The smallest budget filtered ranking accepts: one less
				// byte is refused before the known partners are counted.
				r := &ranker{st: st, workers: 2, memory: c.FilteredMemory}
				_, err := r.budget(filteredWorking(st, 200, 2), "")
				assert.NoError(t, err)
				r.memory--
				_, err = r.budget(filteredWorking(st, 200, 2), "")
				assert.Error(t, err)
			} else {
				assert.Zero(t, c.FilteredMemory)
			}
		})
	}
	_, err := Choose(st, Options{Protocol: "exact"})
	assert.ErrorContains(t, err, `evaluation protocol "exact": want auto, filtered or sampled`)
}

// TestEvaluateStops: a stop during an evaluation ends it at once with
// ErrStopped — no step of any phase is reported after it — whatever the
// phase and protocol; a stop that comes once the last step is done
// leaves the result, which is never thrown away.
func TestEvaluateStops(t *testing.T) {
	st := fixture.Prepare(t, "fb15k", 0.05, 4, 8, workload.DistMult)
	rel, _ := sample.InitRelations(workload.DistMult, st.M.Relations, 8, 1)
	commitCheckpoint(t, st, func(r *rand.Rand) float32 { return float32(r.NormFloat64()) }, append(append([]float32(nil), rel...), make([]float32, len(rel))...))
	deg, err := st.Degrees()
	require.NoError(t, err)
	for _, tc := range []struct {
		name, protocol, phase string
		last                  bool // stop at the phase's last step
		stopped               bool
	}{
		{"filtered, reading rows", Filtered, "reading rows", false, true},
		{"filtered, filtering", Filtered, "filtering", false, true},
		{"filtered, ranking", Filtered, "ranking", false, true},
		{"sampled, reading rows", Sampled, "reading rows", false, true},
		{"filtered, after the last partition", Filtered, "ranking", true, false},
		{"sampled, after ranking", Sampled, "ranking", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop := make(chan struct{})
			var mu sync.Mutex
			var after []string
			closed := false
			opt := Options{Protocol: tc.protocol, Uniform: 20, ByDegree: 20, MaxEdges: 100, Workers: 2, Stop: stop,
				Progress: func(phase string, done, total int) {
					mu.Lock()
					defer mu.Unlock()
					if closed {
						after = append(after, phase)
						return
					}
					if phase == tc.phase && done >= 1 && (!tc.last || done == total) {
						closed = true
						close(stop)
					}
				}}
			q, err := Evaluate(st, workload.DistMult, rel, deg, opt)
			require.True(t, closed, "the stop was sent")
			if !tc.stopped {
				require.NoError(t, err)
				assert.Equal(t, tc.protocol, q.Mode)
				assert.Positive(t, q.MRR)
				return
			}
			assert.True(t, errors.Is(err, ErrStopped), "%v", err)
			assert.Empty(t, after, "nothing is reported after the stop")
		})
	}
	stop := make(chan struct{})
	close(stop)
	_, err = Evaluate(st, workload.DistMult, rel, deg, Options{Stop: stop, MaxEdges: 10})
	assert.ErrorIs(t, err, ErrStopped, "stopped before it starts")
}
