package job

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
)

// TestSelection: the best epoch is the first with the highest validation
// MRR, and early stopping ends the run after Patience validated epochs in
// a row without a better one — also across a resume, which goes on from
// the record (store.Best) the stopped run left.
func TestSelection(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name     string
		mrr      []float64 // validated epochs 1, 2, …
		patience int
		resumeAt int // 0: one run; else a new Selection from the record after this many epochs
		best     int
		stopAt   int // the epoch after which the run stops early (0: never)
	}{
		{name: "peak then fall", mrr: []float64{0.1, 0.3, 0.2, 0.25, 0.28}, patience: 2, best: 2, stopAt: 4},
		{name: "peak then fall, resumed in the middle", mrr: []float64{0.1, 0.3, 0.2, 0.25, 0.28}, patience: 2, resumeAt: 3, best: 2, stopAt: 4},
		{name: "resumed right after the peak", mrr: []float64{0.1, 0.3, 0.2, 0.25, 0.28}, patience: 3, resumeAt: 2, best: 2, stopAt: 5},
		{name: "patience 1", mrr: []float64{0.1, 0.3, 0.2, 0.4}, patience: 1, best: 2, stopAt: 3},
		{name: "no patience never stops", mrr: []float64{0.3, 0.2, 0.1, 0.05}, best: 1},
		{name: "rising never stops", mrr: []float64{0.1, 0.2, 0.3, 0.4}, patience: 1, best: 4},
		{name: "a tie is no improvement", mrr: []float64{0.2, 0.2, 0.2}, patience: 2, best: 1, stopAt: 3},
		{name: "NaN never improves", mrr: []float64{0.2, nan, 0.1}, patience: 2, best: 1, stopAt: 3},
		{name: "NaN first, then a number", mrr: []float64{nan, 0.1}, patience: 5, best: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel := &Selection{Patience: tc.patience}
			stopAt := 0
			for i, m := range tc.mrr {
				e := i + 1
				if tc.resumeAt > 0 && e == tc.resumeAt+1 {
					sel = &Selection{Best: sel.Best, Patience: tc.patience} // what a resumed run reads
				}
				sel.Observe(e, m)
				if sel.Exhausted() {
					stopAt = e
					break
				}
			}
			assert.Equal(t, tc.best, sel.Best.Epoch)
			assert.Equal(t, tc.stopAt, stopAt)
			assert.Equal(t, BestMetric, sel.Best.Metric)
			assert.Equal(t, sel.LastValidated(), len(sel.Best.History))
		})
	}
}

// TestCheckSelection: keeping the best or stopping early needs
// per-epoch validation and a patience that is not negative; the errors
// are bad input, in the library's field names.
func TestCheckSelection(t *testing.T) {
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Eval: "every", KeepBest: true, EarlyStop: 3}, ""},
		{Options{Eval: "end"}, ""},
		{Options{Eval: "every", EarlyStop: -1}, "EarlyStop -1: must not be negative"},
		{Options{Eval: "end", KeepBest: true}, `need Eval "every", not "end"`},
		{Options{Eval: "none", EarlyStop: 2}, `need Eval "every", not "none"`},
		{Options{Eval: "every", KeepBest: true, Edges: "e.tsv", Test: "t.tsv"}, "a Valid file is needed beside Test"},
		{Options{Eval: "every", KeepBest: true, Edges: "e.tsv"}, ""},
	} {
		err := checkSelection(tc.o)
		if tc.want == "" {
			assert.NoError(t, err)
			continue
		}
		var bad *inputerr.Error
		require.ErrorAs(t, err, &bad)
		assert.ErrorContains(t, err, tc.want)
		assert.NotContains(t, err.Error(), "--")
	}
}

// TestResolveCheckpoint: last is the current checkpoint; best is bad
// input wrapping ErrNoBest where none was kept; another name is refused.
func TestResolveCheckpoint(t *testing.T) {
	st := &store.Store{Dir: t.TempDir(), Current: 2}
	c, got, err := ResolveCheckpoint(st, "")
	require.NoError(t, err)
	assert.Same(t, st, got)
	assert.Equal(t, 2, c.Epoch)
	assert.Equal(t, st.CheckpointDir(2, 0), c.Dir)
	_, _, err = ResolveCheckpoint(st, CheckpointBest)
	assert.ErrorIs(t, err, ErrNoBest)
	var bad *inputerr.Error
	assert.ErrorAs(t, err, &bad)
	_, _, err = ResolveCheckpoint(st, "worst")
	assert.ErrorContains(t, err, `checkpoint "worst": want last or best`)
}

// TestStopsEarly: patience that runs out after the run's last epoch is no
// early stop (the run ended as asked); before it, it is.
func TestStopsEarly(t *testing.T) {
	for _, tc := range []struct {
		epochs, at int
		want       bool
	}{
		{epochs: 5, at: 3, want: true},
		{epochs: 3, at: 3, want: false},
	} {
		s := &selecting{Selection: Selection{Patience: 2}, epochs: tc.epochs}
		for e, m := range []float64{0.3, 0.2, 0.1}[:tc.at] {
			s.Observe(e+1, m)
		}
		require.True(t, s.Exhausted())
		assert.Equal(t, tc.want, s.stopsEarly(tc.at), "epochs %d, exhausted after %d", tc.epochs, tc.at)
	}
}
