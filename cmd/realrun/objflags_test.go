package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/workdir"
)

// The model and objective flags refuse bad input in one line naming the
// flag, exit status 2, before any work.
func TestModelFlagsBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		msg  string
	}{
		{"unknown model", []string{"--model", "transh"}, `--model: unknown model "transh"`},
		{"unknown operator in --model", []string{"--model", "rotation+cos"}, `unknown operator "rotation"`},
		{"operator without comparator", []string{"--operator", "linear"}, "--operator and --comparator go together"},
		{"comparator without operator", []string{"--comparator", "cos"}, "--operator and --comparator go together"},
		{"operator with model", []string{"--model", "distmult", "--operator", "linear", "--comparator", "cos"}, "instead of --model: give one or the other"},
		{"unknown operator", []string{"--operator", "rotation", "--comparator", "cos"}, `--operator rotation --comparator cos: unknown operator "rotation"`},
		{"unknown comparator", []string{"--operator", "linear", "--comparator", "l3"}, `unknown comparator "l3"`},
		{"rotate is no PBG operator", []string{"--operator", "rotate", "--comparator", "dot"}, "use the model \"rotate\""},
		{"odd dim for rotate", []string{"--model", "rotate", "--dim", "7"}, "--dim 7"},
		{"odd dim for complex_diagonal", []string{"--operator", "complex_diagonal", "--comparator", "cos", "--dim", "7"}, "--dim 7"},
		{"unknown loss", []string{"--loss", "hinge"}, `--loss: unknown loss "hinge"`},
		{"unknown regularizer", []string{"--regularizer", "l7"}, `--regularizer: unknown regularizer "l7"`},
		{"negative margin", []string{"--loss", "ranking", "--margin", "-1"}, "--margin -1"},
		{"negative adversarial", []string{"--loss", "logistic", "--adversarial", "-1"}, "--adversarial -1"},
		{"negative reg-coef", []string{"--regularizer", "l2", "--reg-coef", "-1"}, "--reg-coef -1"},
		{"softmax takes no margin", []string{"--loss", "softmax", "--margin", "1"}, "--margin: the softmax loss takes no margin"},
		{"softmax takes no adversarial", []string{"--loss", "softmax", "--adversarial", "1"}, "--adversarial: self-adversarial weights go with the ranking or logistic loss"},
		{"regularizer needs a coefficient", []string{"--regularizer", "n3"}, "--reg-coef: regularizer n3 needs a positive coefficient"},
		{"coefficient needs a regularizer", []string{"--reg-coef", "0.1"}, "--reg-coef: a regularisation coefficient needs a regularizer"},
		{"pbg export of transe-l1", []string{"--model", "transe-l1", "--export", filepath.Join(dir, "pbg"), "--export-format", "pbg"}, "has no PyTorch-BigGraph form"},
		{"pbg export of rotate", []string{"--model", "rotate", "--export", filepath.Join(dir, "pbg"), "--export-format", "pbg"}, "RotatE's rotation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"--progress", "none", "--dataset", "fb15k", "--scale", "0.01", "--workdir", filepath.Join(dir, "w")}, tc.args...)
			out, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, "stdout %q stderr %q", out, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.msg)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "w"))
	assert.True(t, os.IsNotExist(err), "no work directory is made")
}

// --operator and --comparator name the model as PBG does (a pair that is
// a named model is that model), and the objective flags go into the
// configuration.
func TestModelFlagsConfig(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"--operator", "translation", "--comparator", "l2"}, []string{"operator: translation", "comparator: l2"}},
		{[]string{"--operator", "Linear", "--comparator", "COS", "--loss", "ranking", "--margin", "0.1"}, []string{"operator: linear", "comparator: cos", "loss: ranking", "margin: 0.1"}},
		{[]string{"--model", "TransE_L2", "--loss", "logistic", "--adversarial", "1", "--regularizer", "n3", "--reg-coef", "0.001"},
			[]string{"model: transe_l2", "loss: logistic", "adversarial: 1", "regularizer: n3", "reg-coef: 0.001"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			args := append([]string{"--dataset", "fb15k", "--scale", "0.01", "--workdir", filepath.Join(dir, "w"), "--print-config"}, tc.args...)
			out, errOut, code := runCmd(args...)
			require.Equal(t, 0, code, errOut)
			for _, w := range tc.want {
				assert.Contains(t, out, w)
			}
		})
	}
}

// A run prints the model and objective it trains with: the summary line,
// the JSON's objective and the CSV's columns; resuming it with another
// objective or model is refused in one line.
func TestRunPrintsObjective(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	base := []string{"--dataset", "fb15k", "--scale", "0.02", "--p", "2", "--c", "2", "--dim", "8", "--epochs", "1", "--workers", "1",
		"--progress", "none", "--eval", "none", "--model", "distmult", "--batch", "200", "--negatives", "20", "--loss", "ranking", "--margin", "0.5"}
	out, errOut, code := runCmd(append(base, "--workdir", work)...)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "distmult d=8, ranking loss (margin 0.5), lr ")

	out, errOut, code = runCmd(append(base, "--workdir", filepath.Join(dir, "j"), "--json")...)
	require.Equal(t, 0, code, errOut)
	var got struct {
		Model     string         `json:"model"`
		Objective map[string]any `json:"objective"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, "distmult", got.Model)
	assert.Equal(t, "ranking", got.Objective["loss"])
	assert.Equal(t, 0.5, got.Objective["margin"])

	out, errOut, code = runCmd(append(base, "--workdir", filepath.Join(dir, "c"), "--csv")...)
	require.Equal(t, 0, code, errOut)
	rows, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 2)
	col := map[string]string{}
	for i, k := range rows[0] {
		col[k] = rows[1][i]
	}
	assert.Equal(t, "distmult", col["model"])
	assert.Equal(t, "ranking", col["objective_loss"])
	assert.Equal(t, "0.5", col["objective_margin"])
	assert.Equal(t, "none", col["objective_regularizer"])

	for _, tc := range []struct {
		extra []string
		diff  string
	}{
		{[]string{"--loss", "logistic", "--adversarial", "0"}, "--loss ranking (now logistic)"},
		{[]string{"--margin", "1"}, "--margin 0.5 (now 1)"},
		{[]string{"--regularizer", "l2", "--reg-coef", "0.01"}, "--reg-coef (none) (now 0.01), --regularizer (none) (now l2)"},
	} {
		t.Run(strings.Join(tc.extra, " "), func(t *testing.T) {
			args := append(append(base, "--workdir", work, "--epochs", "2", "--resume"), tc.extra...)
			_, errOut, code := runCmd(args...)
			assert.Equal(t, 2, code, errOut)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, "trained with other settings: "+tc.diff+";")
		})
	}
	args := append(base, "--workdir", work, "--epochs", "2", "--resume")
	for i, a := range args {
		if a == "distmult" {
			args[i] = "complex"
		}
	}
	_, errOut, code = runCmd(args...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "--model distmult (now complex)")
}

// realrun export --format pbg refuses, in one line saying why, a work
// directory whose model PBG cannot express.
func TestExportPBGRefusesModelWithoutPBGForm(t *testing.T) {
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	_, errOut, code := runCmd("--dataset", "fb15k", "--scale", "0.02", "--p", "2", "--c", "2", "--dim", "8", "--epochs", "1", "--workers", "1",
		"--progress", "none", "--eval", "none", "--model", "transe-l1", "--batch", "200", "--negatives", "20", "--workdir", work)
	require.Equal(t, 0, code, errOut)
	out, errOut, code := runCmd("export", work, "--format", "pbg", "--out", filepath.Join(dir, "pbg"))
	assert.Equal(t, 2, code, "stdout %q stderr %q", out, errOut)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
	assert.Contains(t, errOut, "the model transe-l1 has no PyTorch-BigGraph form: transe-l1 scores with the l1 comparator")
	_, err := os.Stat(filepath.Join(dir, "pbg"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}

// A work directory trained before the objective was recorded (its
// training.json has no --loss) was trained with the softmax loss: it
// resumes with it, and another loss is refused naming softmax.
func TestResumeOlderDirectoryObjective(t *testing.T) {
	work := filepath.Join(t.TempDir(), "work")
	base := []string{"--dataset", "fb15k", "--scale", "0.02", "--p", "2", "--c", "2", "--dim", "8", "--workers", "1",
		"--progress", "none", "--eval", "none", "--model", "distmult", "--batch", "200", "--negatives", "20", "--workdir", work}
	_, errOut, code := runCmd(append(base, "--epochs", "1", "--loss", "softmax")...)
	require.Equal(t, 0, code, errOut)
	path := filepath.Join(work, workdir.SettingsFile)
	was, err := workdir.Recorded(work)
	require.NoError(t, err)
	require.Equal(t, "softmax", was["--loss"])
	delete(was, "--loss")
	require.NoError(t, workdir.Record(work, was))
	_, err = os.Stat(path)
	require.NoError(t, err)

	_, errOut, code = runCmd(append(base, "--epochs", "2", "--resume", "--loss", "logistic")...)
	assert.Equal(t, 2, code, errOut)
	assert.Contains(t, errOut, "--loss softmax (now logistic)")
	_, errOut, code = runCmd(append(base, "--epochs", "2", "--resume", "--loss", "softmax")...)
	assert.Equal(t, 0, code, errOut)
}
