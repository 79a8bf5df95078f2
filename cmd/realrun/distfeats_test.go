//go:build !nodist

package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/eval"
	"github.com/tierflow/tierflow/realrun/store"
)

// tinyTrainers is a distributed run on a tiny graph: two trainers, four
// partitions (16 buckets an epoch), no evaluation unless extra asks.
func tinyTrainers(work string, extra ...string) []string {
	return append([]string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.01", "--p", "4", "--dim", "16", "--workers", "1",
		"--workdir", work, "--progress", "none"}, extra...)
}

// runDist runs realrun --trainers with --json and reads its output.
func runDist(t *testing.T, args ...string) (dist.DistOutput, string) {
	t.Helper()
	out, errOut, code := runCmd(append(args, "--json")...)
	require.Equal(t, 0, code, errOut)
	var d dist.DistOutput
	require.NoError(t, json.Unmarshal([]byte(out), &d))
	return d, errOut
}

// traceSpan is one complete event of a trace, by process and track name.
type traceSpan struct {
	proc, track, name string
	ts, dur           float64
	args              map[string]any
}

// readTrace checks a trace file as a viewer reads it (chrometrace.Check,
// as cmd/internal/tracecheck does) and returns its spans.
func readTrace(t *testing.T, path string) []traceSpan {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, chrometrace.Check(data))
	var f chrometrace.File
	require.NoError(t, json.Unmarshal(data, &f))
	procs, threads := map[int]string{}, map[[2]int]string{}
	for _, e := range f.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.Pid] = fmt.Sprint(e.Args["name"])
		case e.Ph == "M" && e.Name == "thread_name":
			threads[[2]int{e.Pid, e.Tid}] = fmt.Sprint(e.Args["name"])
		}
	}
	var out []traceSpan
	for _, e := range f.TraceEvents {
		if e.Ph == "X" {
			require.NotNil(t, e.Dur)
			out = append(out, traceSpan{proc: procs[e.Pid], track: threads[[2]int{e.Pid, e.Tid}], name: e.Name, ts: e.Ts, dur: *e.Dur, args: e.Args})
		}
	}
	slices.SortStableFunc(out, func(a, b traceSpan) int { return cmp.Compare(a.ts, b.ts) })
	return out
}

// trained are the buckets of epoch (0: any) on the trainers' train
// tracks, in the order they started.
func trained(spans []traceSpan, epoch int) []string {
	var out []string
	for _, s := range spans {
		if strings.HasPrefix(s.proc, "trainer ") && strings.HasPrefix(s.track, dist.TrackTrain) && (epoch == 0 || s.args["epoch"] == float64(epoch)) {
			out = append(out, strings.TrimPrefix(s.name, "bucket "))
		}
	}
	return out
}

// A graph whose relation state is over etcd's request limit of 1.5 MiB
// (fb15k at scale 0.05 in ComplEx at d=1024: 2.5 MB) trains with two
// trainers, checkpoints inside and after its epochs, and resumes (the
// launcher seeds etcd with the checkpoint's relations); every checkpoint
// verifies and carries the relations.
func TestTrainersLargeRelations(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	args := []string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.05", "--p", "2", "--dim", "1024", "--model", "complex", "--workers", "1",
		"--workdir", work, "--progress", "none", "--eval", "none", "--checkpoint-every", "2b"}
	runDist(t, append(args, "--epochs", "1")...)
	_, errOut := runDist(t, append(args, "--epochs", "2", "--resume")...)
	assert.Contains(t, errOut, "resuming after epoch 1")
	st, err := store.Open(work)
	require.NoError(t, err)
	assert.Equal(t, 2, st.Current)
	cps, err := st.Checkpoints()
	require.NoError(t, err)
	var states [][]byte
	for _, c := range cps {
		require.NoError(t, st.VerifyCheckpoint(c), c.Dir)
		b, err := os.ReadFile(filepath.Join(c.Dir, realrun.StateFile))
		require.NoError(t, err, c.Dir)
		assert.Greater(t, len(b), 3<<19, "%s: the relation state is over 1.5 MiB", c.Dir)
		states = append(states, b)
	}
	require.GreaterOrEqual(t, len(states), 2)
	assert.NotEqual(t, states[len(states)-2], states[len(states)-1], "the resumed epoch trained the relations")
}

// A --trainers run stopped by SIGINT or SIGTERM exits with 128+signal, as
// one machine's run does, and says how to resume.
func TestTrainersSignalExit(t *testing.T) {
	for _, tc := range []struct {
		name string
		sig  syscall.Signal
		code int
	}{{"SIGINT", syscall.SIGINT, 130}, {"SIGTERM", syscall.SIGTERM, 143}} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			args := []string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.2", "--p", "4", "--dim", "64", "--workers", "1",
				"--workdir", work, "--progress", "none", "--eval", "none", "--epochs", "2", "--checkpoint-every", "3b"}
			cmd := child(args...)
			stderr := &lockedBuffer{}
			cmd.Stderr = stderr
			require.NoError(t, cmd.Start())
			stderr.waitFor(t, "a checkpoint inside the epoch", func(s string) bool { return strings.Contains(s, "checkpoint inside epoch 1 after") })
			require.NoError(t, cmd.Process.Signal(tc.sig))
			err := cmd.Wait()
			var exit *exec.ExitError
			require.ErrorAs(t, err, &exit, "stopped: %s", stderr)
			assert.Equal(t, tc.code, exit.ExitCode(), stderr.String())
			assert.Contains(t, stderr.String(), "resume with: realrun "+strings.Join(args, " ")+" --resume")
		})
	}
}

// A run stopped after a checkpoint inside its epoch resumes from it: the
// trainers train the other buckets of the epoch, each once, and the epoch
// completes.
func TestTrainersCheckpointInsideResume(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	// Buckets that take a while (about 1,500 edges against 100
	// negatives at d = 64), so that the stop lands inside the epoch.
	args := []string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.2", "--p", "4", "--dim", "64", "--workers", "1",
		"--workdir", work, "--progress", "none", "--eval", "none", "--epochs", "1", "--checkpoint-every", "3b"}
	cmd := child(args...)
	stderr := &lockedBuffer{}
	cmd.Stderr = stderr
	require.NoError(t, cmd.Start())
	stderr.waitFor(t, "a checkpoint inside the epoch", func(s string) bool { return strings.Contains(s, "checkpoint inside epoch 1 after") })
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	err := cmd.Wait()
	require.Error(t, err, "stopped: %s", stderr)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 130, exit.ExitCode(), "128+SIGINT, as one machine's run: %s", stderr)
	assert.Contains(t, stderr.String(), "the store holds every committed bucket; resume with: realrun --trainers 2")
	assert.Contains(t, stderr.String(), "--checkpoint-every 3b --resume")

	st, err := store.Open(work)
	require.NoError(t, err)
	require.Equal(t, 0, st.Current, "stopped inside epoch 1: %s", stderr)
	require.Positive(t, st.Bucket)
	data, err := st.ReadExtra(realrun.PositionFile)
	require.NoError(t, err)
	var pos realrun.Position
	require.NoError(t, json.Unmarshal(data, &pos))
	require.NotNil(t, pos.Lock)
	assert.Equal(t, 1, pos.Epoch)
	assert.Equal(t, st.Bucket, pos.Bucket)
	var before []string
	for i, done := range pos.Lock.Done {
		if done {
			before = append(before, orderings.Bucket{Src: i / 4, Dst: i % 4}.String())
		}
	}
	require.Len(t, before, st.Bucket)

	// One machine does not resume it: its buckets follow no Plan.
	_, errOut, code := runCmd("--dataset", "fb15k", "--scale", "0.2", "--p", "4", "--dim", "64", "--workdir", work, "--eval", "none", "--epochs", "1", "--resume")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "taken by several trainers")

	trace := filepath.Join(dir, "resumed.json")
	d, errOut := runDist(t, append(args, "--resume", "--trace", trace)...)
	assert.Contains(t, errOut, fmt.Sprintf("resuming after epoch 0 at bucket %d of 16", st.Bucket))
	require.Len(t, d.Epochs, 1)
	e := d.Epochs[0]
	assert.Equal(t, st.Bucket, e.Before)
	buckets, edges := 0, int64(0)
	for _, tr := range e.Trainers {
		buckets += tr.Buckets
		edges += tr.Edges
	}
	assert.Equal(t, 16-st.Bucket, buckets, "the trainers trained the buckets after the checkpoint")
	assert.Less(t, edges, d.TrainEdges)
	assert.InDelta(t, e.Loss/float64(edges), e.LossPerEdge, 1e-9, "the loss per edge of the edges trained after the checkpoint")
	after := trained(readTrace(t, trace), 1)
	assert.Len(t, after, 16-st.Bucket)
	all := append(slices.Clone(before), after...)
	slices.Sort(all)
	assert.Equal(t, 16, len(slices.Compact(all)), "every bucket once: %v before the checkpoint, %v after", before, after)
	st, err = store.Open(work)
	require.NoError(t, err)
	assert.Equal(t, 1, st.Current)
	assert.Zero(t, st.Bucket)
	_, err = realrun.Resume(st, nil)
	assert.NoError(t, err, "the epoch's checkpoint verifies")
}

// --checkpoint-every N buckets: the launcher checkpoints inside every
// epoch, each checkpoint after at least N more buckets, with partitions
// through the shared directory or an object store (downloaded for the
// checkpoint).
func TestTrainersCheckpointEvery(t *testing.T) {
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"shared directory", nil},
		{"object store", []string{"--objects", "embedded"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			d, errOut := runDist(t, tinyTrainers(work, append([]string{"--epochs", "2", "--eval", "none", "--checkpoint-every", "4b", "--keep-checkpoints", "10"}, tc.extra...)...)...)
			require.Len(t, d.Epochs, 2)
			for _, e := range d.Epochs {
				require.NotEmpty(t, e.Within, "epoch %d: %s", e.Epoch, errOut)
				last := 0
				for _, k := range e.Within {
					assert.GreaterOrEqual(t, k-last, 4)
					assert.Less(t, k, 16)
					last = k
					assert.DirExists(t, filepath.Join(work, fmt.Sprintf("ckpt-%04d+%06d", e.Epoch-1, k)))
				}
			}
			st, err := store.Open(work)
			require.NoError(t, err)
			assert.Equal(t, 2, st.Current)
			// Every checkpoint inside an epoch verifies: its partitions
			// and engine state against their checksums.
			for _, e := range d.Epochs {
				for _, k := range e.Within {
					st.Current, st.Bucket = e.Epoch-1, k
					pos, err := realrun.Resume(st, nil)
					require.NoError(t, err, "checkpoint %d+%d", e.Epoch-1, k)
					require.NotNil(t, pos)
					assert.Equal(t, k, pos.Bucket)
					assert.Equal(t, 16-k, pos.Lock.Remaining())
				}
			}
		})
	}
}

// --plan with several trainers: the lock server hands out the Plan's
// buckets in its order, as far as the partitions the trainers hold allow.
// inside-out starts at (3,3), where the trainers' own affinity starts
// at (0,0) and (1,1).
func TestTrainersPlan(t *testing.T) {
	dir := t.TempDir()
	pl, err := orderings.Build("inside-out", 4, 2, orderings.Belady, 0)
	require.NoError(t, err)
	require.Equal(t, orderings.Bucket{Src: 3, Dst: 3}, pl.Buckets[0])
	var b bytes.Buffer
	require.NoError(t, pl.WriteJSON(&b))
	planFile := filepath.Join(dir, "plan.json")
	require.NoError(t, os.WriteFile(planFile, b.Bytes(), 0o644))
	trace := filepath.Join(dir, "t.json")
	args := []string{"--trainers", "2", "--dataset", "fb15k", "--scale", "0.01", "--dim", "16", "--workers", "1",
		"--workdir", filepath.Join(dir, "work"), "--progress", "none", "--eval", "none", "--epochs", "2", "--plan", planFile, "--trace", trace}
	d, _ := runDist(t, args...)
	assert.Equal(t, "plan "+planFile, d.Order)
	assert.Equal(t, 4, d.P)
	spans := readTrace(t, trace)
	for _, e := range d.Epochs {
		n := 0
		for _, tr := range e.Trainers {
			n += tr.Buckets
		}
		assert.Equal(t, 16, n)
	}
	// Epoch 1 starts where partition 0, the one initialised, first
	// appears in the order; epoch 2 at the order's first bucket: the
	// trainer handed it trains it before any other (the other trainer
	// may start two buckets while that one still loads its partition).
	first := func(epoch int) []string { return trained(spans, epoch)[:2] }
	assert.Contains(t, first(1), firstTouching(pl.Buckets, 0).String())
	var owner string
	for _, s := range spans {
		if s.args["epoch"] == float64(2) && strings.HasPrefix(s.track, dist.TrackTrain) && strings.HasPrefix(s.proc, "trainer ") {
			if owner == "" && s.name == "bucket (3,3)" {
				owner = s.proc
			}
		}
	}
	require.NotEmpty(t, owner, "no trainer trained (3,3) in epoch 2")
	var ownFirst string
	for _, s := range spans {
		if s.proc == owner && s.args["epoch"] == float64(2) && strings.HasPrefix(s.track, dist.TrackTrain) {
			ownFirst = s.name
			break
		}
	}
	assert.Equal(t, "bucket (3,3)", ownFirst)

	out, errOut, code := runCmd(append(args[:len(args)-2], "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "buckets handed out in the order of the plan "+planFile)
	assert.Contains(t, errOut, "--overwrite: starting over in", "the notices of a run with trainers name flags")
}

// firstTouching is the first bucket of order with partition p.
func firstTouching(order []orderings.Bucket, p int) orderings.Bucket {
	for _, b := range order {
		if b.Src == p || b.Dst == p {
			return b
		}
	}
	return orderings.Bucket{}
}

// --export with several trainers writes the committed final checkpoint
// as one machine's --export does (the format from the extension).
func TestTrainersExport(t *testing.T) {
	for _, ext := range []string{".npy", ".tsv"} {
		t.Run(ext, func(t *testing.T) {
			dir := t.TempDir()
			work, file := filepath.Join(dir, "work"), filepath.Join(dir, "emb"+ext)
			_, errOut := runDist(t, tinyTrainers(work, "--epochs", "1", "--eval", "none", "--export", file)...)
			assert.Contains(t, errOut, "wrote "+file)
			got, err := os.ReadFile(file)
			require.NoError(t, err)
			st, err := store.Open(work)
			require.NoError(t, err)
			require.Equal(t, 1, st.Current)
			want := filepath.Join(dir, "want"+ext)
			require.NoError(t, eval.ExportFile(want, strings.TrimPrefix(ext, "."), st))
			wantData, err := os.ReadFile(want)
			require.NoError(t, err)
			assert.Equal(t, wantData, got, "the export is the final checkpoint's")
			assert.Greater(t, len(got), 1000)
		})
	}
}

// --trace with several trainers: a trace that reads back, with the
// launcher's process (its epochs, holds, checkpoints and evaluations)
// and one per trainer (its buckets, transfers, waits).
func TestTrainersTrace(t *testing.T) {
	dir := t.TempDir()
	trace := filepath.Join(dir, "t.json")
	d, errOut := runDist(t, tinyTrainers(filepath.Join(dir, "work"), "--epochs", "2", "--checkpoint-every", "5b", "--trace", trace)...)
	assert.Contains(t, errOut, "wrote "+trace)
	spans := readTrace(t, trace)
	tracks := map[string]map[string]int{}
	for _, s := range spans {
		if tracks[s.proc] == nil {
			tracks[s.proc] = map[string]int{}
		}
		tracks[s.proc][s.track]++
		assert.GreaterOrEqual(t, s.ts, 0.0)
	}
	// Every trainer that trained a bucket has its track; on a loaded
	// machine one trainer can finish this tiny run before the other
	// joins, and a trainer that never asked for a bucket traced nothing.
	worked := map[int]bool{}
	for _, ep := range d.Epochs {
		for _, tr := range ep.Trainers {
			if tr.Buckets > 0 {
				worked[tr.Trainer] = true
			}
		}
	}
	require.NotEmpty(t, worked)
	assert.GreaterOrEqual(t, len(tracks), 1+len(worked), "the launcher and every trainer that trained: %v", tracks)
	assert.LessOrEqual(t, len(tracks), 3, "the launcher and two trainers at most: %v", tracks)
	launcher := tracks["launcher: 2 trainers (realrun, fb15k@0.01)"]
	require.NotNil(t, launcher, "%v", tracks)
	assert.Equal(t, 2, launcher["epochs"])
	assert.GreaterOrEqual(t, launcher["holds"], 2)
	names := map[string]bool{}
	for _, s := range spans {
		names[s.name] = true
	}
	for _, n := range []string{"epoch 1", "hold after epoch 2", "checkpoint after epoch 1", "evaluate epoch 2"} {
		assert.True(t, names[n], "%s in the trace", n)
	}
	assert.Len(t, trained(spans, 0), 32, "every bucket of both epochs")
	for _, e := range d.Epochs {
		for _, tr := range e.Trainers {
			// A trainer's buckets are its spans on the train track,
			// each with its load and its save on the transfer track.
			if tr.Buckets == 0 {
				continue
			}
			p := tracks[fmt.Sprintf("trainer %d", tr.Trainer)]
			require.NotNil(t, p, "trainer %d: %v", tr.Trainer, tracks)
			assert.Equal(t, 2*p[dist.TrackTrain], p[dist.TrackTransfer])
		}
	}
	// The spans stay out of the JSON.
	for _, e := range d.Epochs {
		for _, tr := range e.Trainers {
			assert.Nil(t, tr.Spans)
		}
	}
}
