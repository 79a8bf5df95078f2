//go:build !nodist

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
)

// bestArgs train a tiny knowledge graph (150 nodes) deterministically
// (one worker, a seed) with a learning rate high enough that the
// validation MRR peaks after two epochs and then falls — with the softmax
// loss, pinned so that ComplEx's default objective does not move it.
func bestArgs(dir string, extra ...string) []string {
	return append([]string{"--dataset", "fb15k", "--scale", "0.01", "--p", "2", "--c", "2", "--dim", "16", "--lr", "1", "--loss", "softmax",
		"--workers", "1", "--seed", "1", "--workdir", dir, "--progress", "none"}, extra...)
}

func trainJSON(t *testing.T, args ...string) job.Output {
	t.Helper()
	out, errOut, code := runCmd(append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var o job.Output
	require.NoError(t, json.Unmarshal([]byte(out), &o), out)
	return o
}

// validMRRs are the validation MRRs of a run's epochs, by epoch.
func validMRRs(t *testing.T, o job.Output) map[int]float64 {
	t.Helper()
	m := map[int]float64{}
	for _, e := range o.Epochs {
		require.NotNil(t, e.Valid, "epoch %d validated", e.Epoch)
		m[e.Epoch] = e.Valid.MRR
	}
	return m
}

// argmax is the first epoch with the highest validation MRR.
func argmax(h []store.Validated) int {
	best, v := 0, 0.0
	for _, x := range h {
		if best == 0 || x.Value > v {
			best, v = x.Epoch, x.Value
		}
	}
	return best
}

// wantStop is the epoch after which a run of last epochs with this
// history stops early with patience n, counting from epoch from on (a
// run resumed after from-1 epochs trained without early stopping; 0: it
// does not). Patience running out at the last epoch is no early stop:
// the run ends there anyway.
func wantStop(h []store.Validated, n, from, last int) int {
	best, v, since := 0, 0.0, 0
	for _, x := range h {
		if best == 0 || x.Value > v {
			best, v, since = x.Epoch, x.Value, 0
		} else {
			since++
		}
		if x.Epoch >= from && x.Epoch < last && since >= n {
			return x.Epoch
		}
	}
	return 0
}

func export(t *testing.T, dir, which string) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "emb.npy")
	_, errOut, code := runCmd("export", dir, "--checkpoint", which, "--out", path)
	require.Equal(t, 0, code, errOut)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}

func evalValid(t *testing.T, dir, which string) job.EvalDirOutput {
	t.Helper()
	out, errOut, code := runCmd("eval", dir, "--checkpoint", which, "--split", "valid", "--progress", "none", "--json")
	require.Equal(t, 0, code, errOut)
	var o job.EvalDirOutput
	require.NoError(t, json.Unmarshal([]byte(out), &o))
	return o
}

// --keep best on a run whose validation MRR peaks then falls keeps the
// peak epoch's checkpoint through pruning to one: its export is what a
// run stopped after that epoch exports, and it evaluates to the recorded
// MRR.
func TestKeepBestPeakThenFall(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	o := trainJSON(t, bestArgs(dir, "--epochs", "5", "--keep", "best", "--keep-checkpoints", "1")...)
	mrr := validMRRs(t, o)
	require.NotNil(t, o.Best)
	best := argmax(o.Best.History)
	require.Less(t, best, 5, "the fixture peaks before the last epoch: %v", mrr)
	require.Greater(t, mrr[best], mrr[5], "and falls after it")
	assert.Equal(t, best, o.Best.Epoch)
	assert.Equal(t, mrr[best], o.Best.Value)
	assert.Equal(t, store.BestDirName(best), o.Best.Dir)
	assert.Len(t, o.Best.History, 5)
	assert.Zero(t, o.StoppedEarly)

	// Pruned to one checkpoint, the best one's copy is still there.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var kept []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "ckpt-") || strings.HasPrefix(e.Name(), "best-") {
			kept = append(kept, e.Name())
		}
	}
	assert.ElementsMatch(t, []string{"ckpt-0005", store.BestDirName(best)}, kept)
	var rec store.Best
	data, err := os.ReadFile(filepath.Join(dir, store.BestFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	assert.Equal(t, *o.Best, rec, "best.json records the choice")

	// What a run stopped after the best epoch has.
	short := filepath.Join(t.TempDir(), "short")
	trainJSON(t, bestArgs(short, "--epochs", strconv.Itoa(best))...)
	bestEmb := export(t, dir, "best")
	assert.Equal(t, export(t, short, "last"), bestEmb, "the best checkpoint holds epoch %d's embeddings", best)
	assert.NotEqual(t, export(t, dir, "last"), bestEmb)
	ev := evalValid(t, dir, "best")
	assert.Equal(t, "epoch "+strconv.Itoa(best)+" (best)", ev.Checkpoint)
	assert.Equal(t, best, ev.Epochs)
	assert.InDelta(t, o.Best.Value, ev.Quality.MRR, 1e-12)

	// The table says which epoch is best and where it is kept.
	out, errOut, code := runCmd(bestArgs(filepath.Join(t.TempDir(), "table"), "--epochs", "3", "--keep", "best")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "best epoch "+strconv.Itoa(best)+": validation MRR ")
	assert.Contains(t, out, "--checkpoint best)")
}

// --early-stop N stops after N validated epochs in a row without a
// better validation MRR, says so, and evaluates the test split then.
func TestEarlyStop(t *testing.T) {
	ref := trainJSON(t, bestArgs(filepath.Join(t.TempDir(), "ref"), "--epochs", "8", "--keep", "best")...)
	for _, n := range []int{1, 2, 3} {
		t.Run("patience "+strconv.Itoa(n), func(t *testing.T) {
			stop := wantStop(ref.Best.History, n, 1, 8)
			require.NotZero(t, stop, "the fixture stops early with patience %d: %+v", n, ref.Best.History)
			dir := filepath.Join(t.TempDir(), "work")
			o := trainJSON(t, bestArgs(dir, "--epochs", "8", "--early-stop", strconv.Itoa(n))...)
			assert.Equal(t, stop, o.StoppedEarly)
			require.Len(t, o.Epochs, stop)
			assert.NotNil(t, o.Epochs[stop-1].Test, "the epoch that stops the run is tested")
			assert.Equal(t, ref.Best.History[:stop], o.Best.History)
			assert.Equal(t, n, o.Best.SinceBest)
			assert.Empty(t, o.Best.Dir, "--early-stop alone keeps no copy")
			_, errOut, code := runCmd("eval", dir, "--checkpoint", "best")
			assert.Equal(t, 2, code)
			assert.Contains(t, errOut, "no best checkpoint")

			out, errOut, code := runCmd(bestArgs(filepath.Join(t.TempDir(), "table"), "--epochs", "8", "--early-stop", strconv.Itoa(n))...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "stopped early after epoch "+strconv.Itoa(stop)+": "+strconv.Itoa(n)+" validated epochs in a row without a better validation MRR than epoch "+strconv.Itoa(ref.Best.Epoch)+"'s")
		})
	}
}

// A resumed run goes on with the best epoch and the count of epochs
// without improvement where the stopped one left them: it stops where an
// uninterrupted run does, with the same best checkpoint — also when a
// crash lost the last epoch's validation from the record (it is
// validated again on resume). Resuming after an early stop trains
// nothing; a larger patience trains on.
func TestEarlyStopResume(t *testing.T) {
	const patience = "3"
	ref := trainJSON(t, bestArgs(filepath.Join(t.TempDir(), "ref"), "--epochs", "8", "--keep", "best", "--early-stop", patience)...)
	require.NotZero(t, ref.StoppedEarly)
	require.Greater(t, ref.StoppedEarly, 3, "the interruption falls before the stop")
	for _, tc := range []struct {
		name      string
		lostValid bool
	}{{"resumed", false}, {"resumed after a crash lost epoch 3's validation", true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "work")
			first := trainJSON(t, bestArgs(dir, "--epochs", "3", "--keep", "best", "--keep-checkpoints", "1", "--early-stop", patience)...)
			assert.Zero(t, first.StoppedEarly)
			if tc.lostValid {
				rec := *first.Best
				rec.History = rec.History[:2]
				rec.SinceBest = 0
				b, err := json.Marshal(rec)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, store.BestFile), b, 0o644))
			}
			out, errOut, code := runCmd(append(bestArgs(dir, "--epochs", "8", "--keep", "best", "--keep-checkpoints", "1", "--early-stop", patience, "--resume"), "--json")...)
			require.Equal(t, 0, code, errOut)
			if tc.lostValid {
				assert.Contains(t, errOut, "epoch 3's validation is not in best.json: validated it on resume")
			}
			var o job.Output
			require.NoError(t, json.Unmarshal([]byte(out), &o))
			assert.Equal(t, ref.StoppedEarly, o.StoppedEarly)
			assert.Equal(t, ref.Best, o.Best)
			assert.Equal(t, 4, o.Epochs[0].Epoch)
			assert.Equal(t, export(t, ref.Workdir, "best"), export(t, dir, "best"))

			// After the stop: nothing more to train, and it says so.
			again, errOut, code := runCmd(bestArgs(dir, "--epochs", "8", "--keep", "best", "--early-stop", patience, "--resume")...)
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, errOut, "nothing to train")
			assert.Contains(t, again, "stopped early after epoch "+strconv.Itoa(ref.StoppedEarly))
			// A larger patience trains on from the stop.
			more := trainJSON(t, bestArgs(dir, "--epochs", strconv.Itoa(ref.StoppedEarly+1), "--keep", "best", "--early-stop", "10", "--resume")...)
			require.Len(t, more.Epochs, 1)
			assert.Equal(t, ref.StoppedEarly+1, more.Epochs[0].Epoch)
			assert.Len(t, more.Best.History, ref.StoppedEarly+1)
		})
	}
}

// With several trainers the launcher validates every epoch as one
// machine does: the epochs carry the loss and the validation MRR (the
// table shows them), the best epoch's checkpoint is kept through pruning
// and evaluates to the recorded MRR, early stopping stops at the epoch
// the record says, and a resumed run goes on with the record.
func TestKeepBestTrainers(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "work")
	args := func(extra ...string) []string {
		return append([]string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.01", "--p", "2", "--dim", "16", "--lr", "1", "--workers", "1",
			"--workdir", dir, "--keep", "best", "--keep-checkpoints", "1", "--progress", "none"}, extra...)
	}
	out, errOut, code := runCmd(append(args("--epochs", "3"), "--json")...)
	require.Equal(t, 0, code, errOut)
	var d dist.DistOutput
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	require.Len(t, d.Epochs, 3)
	for _, e := range d.Epochs {
		require.NotNil(t, e.Valid, "epoch %d validated", e.Epoch)
		assert.Positive(t, e.Loss)
		assert.InDelta(t, e.Loss/float64(d.TrainEdges), e.LossPerEdge, 1e-9)
		var sum float64
		for _, tr := range e.Trainers {
			sum += tr.Loss
		}
		assert.InDelta(t, sum, e.Loss, 1e-6)
	}
	require.NotNil(t, d.Epochs[2].Test, "the last epoch is tested")
	assert.Equal(t, d.Epochs[2].Test.MRR, d.MRR)
	require.NotNil(t, d.Best)
	assert.Equal(t, argmax(d.Best.History), d.Best.Epoch)
	assert.DirExists(t, filepath.Join(dir, store.BestDirName(d.Best.Epoch)))
	ev := evalValid(t, dir, "best")
	assert.Equal(t, d.Best.Epoch, ev.Epochs)
	assert.InDelta(t, d.Best.Value, ev.Quality.MRR, 1e-12, "the kept checkpoint is the one validated after epoch %d", d.Best.Epoch)
	if d.Best.Epoch != 3 {
		assert.NoDirExists(t, filepath.Join(dir, "ckpt-"+strconv.Itoa(d.Best.Epoch)), "pruned")
	}

	// Resumed with early stopping, as a table: one machine's columns.
	// (A patience of 3 cannot have run out in the 3 epochs before.)
	out, errOut, code = runCmd(args("--epochs", "6", "--early-stop", "3", "--resume")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, "resuming after epoch 3")
	// One machine's headers take two lines: valid / MRR, test / MRR.
	for _, col := range []string{"loss/edge", "protocol", "│ valid │ test  │", "│  MRR  │  MRR  │ Hits@10 │", "│   loss"} {
		assert.Contains(t, out, col)
	}
	var rec store.Best
	data, err := os.ReadFile(filepath.Join(dir, store.BestFile))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &rec))
	require.Greater(t, len(rec.History), 3, "the resumed run adds to the record")
	for i, v := range rec.History {
		assert.Equal(t, i+1, v.Epoch)
	}
	assert.Equal(t, argmax(rec.History), rec.Epoch)
	assert.Equal(t, wantStop(rec.History, 3, 3, 6), rec.StoppedAt, "counting on from epoch 3's record")
	if rec.StoppedAt > 0 {
		assert.Len(t, rec.History, rec.StoppedAt)
		assert.Contains(t, out, "stopped early after epoch "+strconv.Itoa(rec.StoppedAt))
	} else {
		assert.Len(t, rec.History, 6)
	}
	assert.Equal(t, rec.Value, evalValid(t, dir, "best").Quality.MRR)
}

// Keeping the best or stopping early needs per-epoch validation; eval and
// export refuse a best checkpoint a work directory does not hold; every
// refusal is one line, exit status 2.
func TestBestBadInput(t *testing.T) {
	trained := filepath.Join(t.TempDir(), "trained")
	trainJSON(t, bestArgs(trained, "--epochs", "1")...)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--keep", "worst"}, `invalid value "worst" for flag --keep: want last or best`},
		{[]string{"--early-stop", "-1"}, "--early-stop -1: must not be negative"},
		{[]string{"--keep", "best", "--eval", "end"}, "--keep best: needs the validation MRR after each epoch (--eval every), not --eval end"},
		{[]string{"--keep", "best", "--early-stop", "2", "--eval", "none"}, "--keep best and --early-stop: needs the validation MRR"},
		{[]string{"--keep", "best", "--compare-sim"}, "--keep best: goes with training, not --compare-sim"},
		{[]string{"--early-stop", "2", "--edges", "e.tsv", "--test", "t.tsv"}, "--early-stop: chooses by the validation MRR: give --valid FILE beside --test"},
		{[]string{"eval", trained, "--checkpoint", "best"}, "--checkpoint best: " + trained + ": no best checkpoint (only a run that keeps its best epoch makes one); train with --keep best"},
		{[]string{"export", trained, "--checkpoint", "best", "--out", filepath.Join(t.TempDir(), "e.npy")}, "--checkpoint best: " + trained + ": no best checkpoint"},
		{[]string{"eval", trained, "--checkpoint", "worst"}, `invalid value "worst" for flag --checkpoint: want last or best`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := runCmd(tc.args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
}
