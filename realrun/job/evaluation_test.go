package job

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// tinyRun is a knowledge graph of 748 nodes trained in a fraction of a
// second, ranked filtered by default.
func tinyRun(workdir string) Options {
	o := Defaults
	o.Dataset, o.Scale, o.Model, o.P, o.C, o.Dim, o.Epochs, o.Workers, o.Workdir = "fb15k", 0.05, "complex", 3, 2, 8, 2, 1, workdir
	return o
}

// TestEvaluateDirReproducesTraining: `realrun eval` of a trained work
// directory ranks with the protocol, edges and seed training evaluated
// with (its evaluation record), so it gives training's last MRR exactly;
// what is given overrides the record; a directory without the record
// ranks with the defaults and says so.
func TestEvaluateDirReproducesTraining(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name     string
		protocol string // training's, in any case
		edges    int
		seed     int64
		ranked   string
	}{
		{"auto, a sample of edges", "auto", 150, 1, eval.Filtered},
		{"sampled, in capitals", "SAMPLED", 120, 1, eval.Sampled},
		{"filtered, another data seed", "Filtered", 90, 3, eval.Filtered},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(dir, tc.name)
			o := tinyRun(work)
			o.EvalProtocol, o.EvalEdges, o.Seed = tc.protocol, tc.edges, tc.seed
			out, err := Train(o, nil, false, io.Discard)
			require.NoError(t, err)
			last := out.Epochs[len(out.Epochs)-1]
			require.NotNil(t, last.Test)
			require.NotNil(t, last.Valid)
			assert.Equal(t, tc.ranked, last.Test.Mode)

			rec, err := workdir.RecordedEval(work)
			require.NoError(t, err)
			require.NotNil(t, rec, "training records how it evaluated")
			assert.Equal(t, tc.edges, rec.Edges)
			assert.Equal(t, tc.seed, rec.Seed)
			assert.Equal(t, tc.ranked, rec.Ranked)

			for split, want := range map[string]*realrun.Quality{"test": last.Test, "valid": last.Valid} {
				got, err := EvaluateDir(EvalDirOptions{Dir: work, Split: split, Workers: 2, Seed: -1})
				require.NoError(t, err, split)
				assert.Equal(t, FromTraining, got.ProtocolFrom)
				assert.Equal(t, want.Mode, got.Quality.Mode, split)
				assert.Equal(t, want.Edges, got.Quality.Edges, split)
				assert.Equal(t, want.MRR, got.Quality.MRR, "%s: realrun eval gives training's MRR", split)
				assert.Equal(t, want.HitsAt10, got.Quality.HitsAt10, split)
			}

			// Given settings win over the record.
			other := eval.Sampled
			if tc.ranked == eval.Sampled {
				other = eval.Filtered
			}
			got, err := EvaluateDir(EvalDirOptions{Dir: work, Split: "test", Workers: 1, Seed: -1, EvalProtocol: other, EvalEdges: 40})
			require.NoError(t, err)
			assert.Equal(t, FromOptions, got.ProtocolFrom)
			assert.Equal(t, other, got.Quality.Mode)
			assert.Equal(t, 40, got.Quality.Edges)

			// A work directory from before the record: the defaults.
			require.NoError(t, os.Remove(filepath.Join(work, workdir.EvalFile)))
			var from string
			got, err = EvaluateDir(EvalDirOptions{Dir: work, Split: "test", Workers: 1, Seed: -1, Chosen: func(_ eval.Choice, f string) { from = f }})
			require.NoError(t, err)
			assert.Equal(t, FromDefault, from, "the caller is told")
			assert.Equal(t, FromDefault, got.ProtocolFrom)
			assert.Equal(t, eval.Auto, got.Protocol)
			assert.Equal(t, Defaults.EvalEdges, got.EvalEdges)
			assert.Equal(t, tc.seed, got.Seed, "the data seed")
			assert.Equal(t, eval.Filtered, got.Quality.Mode, "748 nodes: auto ranks filtered")
		})
	}
}

// TestEvalProtocolNames: the protocol is read in any case, in training
// and in realrun eval alike; an unknown one is bad input.
func TestEvalProtocolNames(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{{"auto", true}, {"Filtered", true}, {"SAMPLED", true}, {"exact", false}, {"", false}} {
		o := Defaults
		o.EvalProtocol = tc.name
		_, err := Configure(o)
		if tc.ok {
			assert.NoError(t, err, tc.name)
			continue
		}
		var bad *inputerr.Error
		require.ErrorAs(t, err, &bad, tc.name)
		assert.Contains(t, err.Error(), "{EvalProtocol} ")
		assert.Contains(t, err.Error(), ": want auto, filtered or sampled")
	}
	_, err := EvaluateDir(EvalDirOptions{Dir: t.TempDir(), Split: "test", Workers: 1, EvalProtocol: "exact"})
	var bad *inputerr.Error
	require.ErrorAs(t, err, &bad)
	assert.Contains(t, err.Error(), `{EvalProtocol} "exact": want auto, filtered or sampled`)
}

// TestStopDuringEvaluation: a stop that comes while an epoch is evaluated
// ends the evaluation at once — no partition is ranked after it — and
// the run returns the epochs completed (the stopped evaluation's quality
// left out, marked stopped) with a StopError saying so; the epoch's
// checkpoint is committed. realrun eval stops alike.
func TestStopDuringEvaluation(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name   string
		epochs int
		at     string // the phase whose first step stops the run
	}{
		{"ranking after the first of two epochs", 2, "ranking"},
		{"filtering after the last epoch", 1, "filtering"},
		{"reading rows after the first epoch", 2, "reading rows"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(dir, tc.name)
			o := tinyRun(work)
			o.Epochs = tc.epochs
			stop := make(chan struct{})
			code := 130
			o.Stop, o.StopCode = stop, &code
			var mu sync.Mutex
			var after []string // progress after the stop
			stopped := false
			o.EvalProgress = func(epoch int, split, phase string, done, total int) {
				mu.Lock()
				defer mu.Unlock()
				if stopped {
					after = append(after, phase)
					return
				}
				if phase == tc.at && done >= 1 {
					stopped = true
					close(stop)
				}
			}
			out, err := Train(o, nil, false, io.Discard)
			var se *realrun.StopError
			require.ErrorAs(t, err, &se)
			assert.True(t, se.Evaluating, "stopped during the evaluation")
			assert.Equal(t, 1, se.Epochs)
			assert.Equal(t, 130, se.Code)
			assert.Contains(t, err.Error(), "stopped during the evaluation after epoch 1, which did not finish")
			assert.Empty(t, after, "nothing is evaluated once stopped")
			require.Len(t, out.Epochs, 1, "the epoch trained is reported")
			assert.True(t, out.Epochs[0].EvalStopped)
			assert.Nil(t, out.Epochs[0].Valid, "no quality from a stopped evaluation")
			assert.Nil(t, out.Epochs[0].Test)
			cur, err := os.ReadFile(filepath.Join(work, "CURRENT"))
			require.NoError(t, err)
			assert.Equal(t, "1\n", string(cur), "epoch 1's checkpoint is committed")

			// realrun eval ranks that checkpoint as the stopped
			// evaluation would have: the record is written before it.
			got, err := EvaluateDir(EvalDirOptions{Dir: work, Split: "valid", Workers: 1, Seed: -1})
			require.NoError(t, err)
			assert.Equal(t, FromTraining, got.ProtocolFrom)
			assert.Equal(t, o.EvalEdges, got.EvalEdges)

			// realrun eval of that checkpoint, stopped the same way.
			stop2 := make(chan struct{})
			var once sync.Once
			_, err = EvaluateDir(EvalDirOptions{Dir: work, Split: "test", Workers: 1, Seed: -1, Stop: stop2,
				Progress: func(_ int, _, phase string, done, _ int) {
					if phase == tc.at && done >= 1 {
						once.Do(func() { close(stop2) })
					}
				}})
			assert.True(t, errors.Is(err, eval.ErrStopped), "%v", err)
		})
	}
}
