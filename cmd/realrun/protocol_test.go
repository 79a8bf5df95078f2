package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/eval"
)

// kgRun trains a 748-node knowledge graph in a fraction of a second.
func kgRun(work string, extra ...string) []string {
	return append([]string{"--dataset", "fb15k", "--scale", "0.05", "--model", "complex", "--p", "3", "--c", "2", "--dim", "8",
		"--epochs", "2", "--workers", "1", "--workdir", work, "--progress", "none"}, extra...)
}

// evalJSON is what these tests read of realrun eval's --json.
type evalJSON struct {
	Protocol     string      `json:"protocol"`
	ProtocolFrom string      `json:"protocol_from"`
	Quality      qualityJSON `json:"quality"`
}

// qualityJSON is what these tests read of a quality in the JSON.
type qualityJSON struct {
	Mode           string  `json:"mode"`
	MRR            float64 `json:"mrr"`
	Edges          int     `json:"edges"`
	Auto           bool    `json:"auto_protocol"`
	FilteredMemory int64   `json:"filtered_memory_bytes"`
}

// trainedJSON is what these tests read of realrun's --json.
type trainedJSON struct {
	Epochs []struct {
		Epoch int          `json:"epoch"`
		Valid *qualityJSON `json:"valid"`
		Test  *qualityJSON `json:"test"`
	} `json:"epochs"`
}

// TestEvalUsesTrainingProtocol: realrun eval ranks with the protocol,
// edges and seed training evaluated with, and so prints training's final
// MRR exactly, naming the protocol and where it came from; flags given
// override it; a work directory without the record ranks with the
// defaults and says so in one line. Protocol names are read in any case.
func TestEvalUsesTrainingProtocol(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		flags []string
		mode  string
	}{
		{"sampled, 150 edges", []string{"--eval-protocol", "sampled", "--eval-edges", "150"}, "sampled"},
		{"sampled, in capitals, 120 edges", []string{"--eval-protocol", "SAMPLED", "--eval-edges", "120"}, "sampled"},
		{"filtered, another seed", []string{"--eval-protocol", "Filtered", "--eval-edges", "90", "--seed", "4"}, "filtered"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			work := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			out, errOut, code := runCmd(kgRun(work, append(tc.flags, "--json")...)...)
			require.Equal(t, 0, code, errOut)
			var trained trainedJSON
			require.NoError(t, json.Unmarshal([]byte(out), &trained))
			last := trained.Epochs[len(trained.Epochs)-1]
			require.NotNil(t, last.Test)
			assert.Equal(t, tc.mode, last.Test.Mode, "the JSON names the protocol beside the MRR")

			out, errOut, code = runCmd("eval", work, "--json", "--progress", "none")
			require.Equal(t, 0, code, errOut)
			assert.Empty(t, errOut)
			var ev evalJSON
			require.NoError(t, json.Unmarshal([]byte(out), &ev))
			assert.Equal(t, "training", ev.ProtocolFrom)
			assert.Equal(t, tc.mode, ev.Quality.Mode)
			assert.Equal(t, last.Test.Edges, ev.Quality.Edges)
			assert.Equal(t, last.Test.MRR, ev.Quality.MRR, "realrun eval gives training's final MRR")

			out, errOut, code = runCmd("eval", work, "--progress", "none")
			require.Equal(t, 0, code, errOut)
			assert.Contains(t, out, "(the protocol training evaluated with, "+tc.mode+")")

			other := map[string]string{"sampled": "filtered", "filtered": "sampled"}[tc.mode]
			out, errOut, code = runCmd("eval", work, "--json", "--progress", "none", "--eval-protocol", strings.ToUpper(other))
			require.Equal(t, 0, code, errOut)
			require.NoError(t, json.Unmarshal([]byte(out), &ev))
			assert.Equal(t, "options", ev.ProtocolFrom)
			assert.Equal(t, other, ev.Quality.Mode)

			// A work directory trained before the record was kept.
			require.NoError(t, os.Remove(filepath.Join(work, "evaluation.json")))
			out, errOut, code = runCmd("eval", work, "--json", "--progress", "none")
			require.Equal(t, 0, code, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, "realrun eval: "+work+" holds no record of how training evaluated")
			require.NoError(t, json.Unmarshal([]byte(out), &ev))
			assert.Equal(t, "default", ev.ProtocolFrom)
			assert.Equal(t, "auto", ev.Protocol)
			assert.Equal(t, "filtered", ev.Quality.Mode)
		})
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"no edges", []string{"--eval-edges", "0"}, "--eval-edges 0: must be at least 1"},
		{"unknown protocol", []string{"--eval-protocol", "exact"}, `--eval-protocol "exact": want auto, filtered or sampled`},
		{"empty protocol", []string{"--eval-protocol", ""}, `--eval-protocol "": want auto, filtered or sampled`},
	} {
		_, errOut, code := runCmd(append([]string{"eval", filepath.Join(dir, "sampled,-150-edges")}, tc.args...)...)
		assert.Equal(t, 2, code, tc.name)
		assert.Equal(t, "realrun: "+tc.want+"\n", errOut, tc.name)
	}
}

// TestAutoSampledSaidOnce: where auto ranks sampled (more nodes than its
// threshold, lowered here), training says so once on stderr, with the
// reason, the flag that ranks filtered and the memory that needs; the
// table shows the protocol beside the MRRs, the JSON marks each quality
// as auto's choice; realrun eval ranks alike (the threshold is recorded)
// and gives the same MRR.
func TestAutoSampledSaidOnce(t *testing.T) {
	was := eval.DefaultEval.FilteredMaxNodes
	eval.DefaultEval.FilteredMaxNodes = 500
	t.Cleanup(func() { eval.DefaultEval.FilteredMaxNodes = was })
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	out, errOut, code := runCmd(kgRun(work, "--eval-edges", "100")...)
	require.Equal(t, 0, code, errOut)
	const said = "evaluation: sampled ranking, chosen by --eval-protocol auto: 748 nodes, over the 500 up to which it ranks filtered; --eval-protocol filtered ranks against every node instead, with an --eval-memory of at least "
	assert.Equal(t, 1, strings.Count(errOut, said), "said once for three evaluations: %s", errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "in one line: %s", errOut)
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(strings.Trim(l, "│ ")); len(f) > 0 && (f[0] == "1" || f[0] == "2") {
			assert.Contains(t, l, "│ sampled ", "the protocol beside the MRRs: %s", l)
			rows++
		}
	}
	assert.Equal(t, 2, rows, out)
	assert.Contains(t, out, "protocol")
	assert.Contains(t, out, "evaluation (test, epoch 2): sampled, chosen by --eval-protocol auto, ranking of 100 test edges")

	eval.DefaultEval.FilteredMaxNodes = was
	out, errOut, code = runCmd(kgRun(work, "--eval-edges", "100", "--json", "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	assert.NotContains(t, errOut, "sampled ranking", "748 nodes are ranked filtered by default")
	eval.DefaultEval.FilteredMaxNodes = 500
	out, errOut, code = runCmd(kgRun(work, "--eval-edges", "100", "--json", "--overwrite")...)
	require.Equal(t, 0, code, errOut)
	var trained trainedJSON
	require.NoError(t, json.Unmarshal([]byte(out), &trained))
	for _, e := range trained.Epochs {
		assert.True(t, e.Valid.Auto, "epoch %d", e.Epoch)
		assert.Equal(t, "sampled", e.Valid.Mode)
		assert.Positive(t, e.Valid.FilteredMemory)
	}
	assert.Contains(t, out, `"auto_protocol": true`)
	assert.Contains(t, errOut, said+mb(trained.Epochs[0].Valid.FilteredMemory)+" plus", "the memory said is the JSON's")

	eval.DefaultEval.FilteredMaxNodes = was // realrun eval reads the threshold training used from the record
	out, errOut, code = runCmd("eval", work, "--json", "--progress", "none")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, 1, strings.Count(errOut, said), errOut)
	var ev evalJSON
	require.NoError(t, json.Unmarshal([]byte(out), &ev))
	assert.Equal(t, "sampled", ev.Quality.Mode)
	assert.Equal(t, trained.Epochs[1].Test.MRR, ev.Quality.MRR)
}

// TestDigits: counts in messages group their thousands.
func TestDigits(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 748: "748", 1000: "1,000", 124800: "124,800", 41652230: "41,652,230", -1500: "-1,500"} {
		assert.Equal(t, want, digits(n))
	}
}

// TestSignalDuringEvaluation: SIGINT while training evaluates stops the
// evaluation at once (it only reads; the epoch's checkpoint is
// committed): the epoch trained is printed, its evaluation marked
// stopped, with how to evaluate the checkpoint and how to resume, and the
// exit status is 130. realrun eval of that checkpoint then stops alike,
// with no result. Each evaluation ranks 20,000 edges of a 14,951-node
// graph on one worker, seconds long: the signal comes after its first of
// four partitions.
func TestSignalDuringEvaluation(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	train := []string{"--dataset", "fb15k", "--scale", "1", "--model", "complex", "--p", "4", "--c", "2", "--dim", "32",
		"--epochs", "2", "--workers", "1", "--eval-edges", "20000", "--workdir", work, "--progress", "lines"}
	for _, step := range []struct {
		name, wait string
		args       []string
		says       []string
	}{
		{"training", "evaluating valid after epoch 1: ranking 1/4", train, []string{
			"realrun: stopped during the evaluation after epoch 1, which did not finish; the checkpoint holds 1 complete epochs; evaluate that checkpoint with: realrun eval " + work + "; resume with: realrun ",
			"the evaluation after epoch 1 was stopped before it finished"}},
		{"realrun eval", "evaluating valid: ranking 1/4", []string{"eval", work, "--split", "valid", "--workers", "1", "--progress", "lines"}, []string{
			"realrun: eval: SIGINT: the evaluation stopped at once, unfinished: no result"}},
	} {
		// One after the other: realrun eval evaluates what training left.
		const exited = "\x00exited\n"
		cmd := child(step.args...)
		stderr, stdout := &lockedBuffer{}, &lockedBuffer{}
		cmd.Stderr, cmd.Stdout = stderr, stdout
		require.NoError(t, cmd.Start(), step.name)
		done := make(chan error, 1)
		go func() {
			err := cmd.Wait()
			stderr.Write([]byte(exited))
			done <- err
		}()
		stderr.waitFor(t, step.wait, func(s string) bool { return strings.Contains(s, step.wait) || strings.Contains(s, exited) })
		require.NotContains(t, stderr.String(), exited, "%s ended before its evaluation was under way", step.name)
		require.NoError(t, cmd.Process.Signal(os.Interrupt), step.name)
		err := <-done
		var exit *exec.ExitError
		require.ErrorAs(t, err, &exit, "%s: %s", step.name, stderr.String())
		assert.Equal(t, 130, exit.ExitCode(), "%s: %s", step.name, stderr.String())
		assert.NotContains(t, stderr.String(), "ranking 4/4", "%s: stopped at once", step.name)
		all := stderr.String() + stdout.String()
		for _, s := range step.says {
			assert.Contains(t, all, s, step.name)
		}
		if step.name == "training" {
			assert.Contains(t, stdout.String(), "│     1 │", "the epoch trained is printed")
		} else {
			assert.Empty(t, stdout.String(), "no result")
			assert.NotContains(t, stderr.String(), "holds no record", "training recorded how it evaluates before it was stopped")
		}
		_, err = os.Stat(work + ".lock")
		assert.True(t, os.IsNotExist(err), "%s: the lock is released", step.name)
	}
}
