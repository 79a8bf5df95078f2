package job

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/workload"
)

func f64(v float64) *float64 { return &v }

// The objective options resolve against the model's default: what is set
// replaces the default's part, a loss or regularizer other than the
// default's starts without the default's numbers, and a bad objective is
// a *workload.ObjectiveError naming its field.
func TestResolveObjective(t *testing.T) {
	for _, tc := range []struct {
		name  string
		model workload.Model
		edit  func(*Options)
		want  workload.Objective
		field workload.ObjectiveField // "": no error
	}{
		{"default", workload.DistMult, func(*Options) {}, workload.DefaultObjective(workload.DistMult), ""},
		{"default pair", "linear+cos", func(*Options) {}, workload.DefaultObjective("linear+cos"), ""},
		{"ranking", workload.TransEL2, func(o *Options) { o.Loss, o.Margin = "Ranking", f64(0.5) },
			workload.Objective{Loss: workload.Ranking, Margin: 0.5, Regularizer: workload.RegNone}, ""},
		{"ranking without margin", workload.TransEL2, func(o *Options) { o.Loss = "ranking" },
			workload.Objective{Loss: workload.Ranking, Regularizer: workload.RegNone}, ""},
		{"self-adversarial logistic", workload.RotatE, func(o *Options) { o.Loss, o.Margin, o.Adversarial = "logistic", f64(9), f64(1) },
			workload.Objective{Loss: workload.Logistic, Margin: 9, Adversarial: 1, Regularizer: workload.RegNone}, ""},
		{"n3", workload.TransEL2, func(o *Options) { o.Regularizer, o.RegCoef = "n3", f64(1e-3) },
			workload.Objective{Loss: workload.DefaultObjective(workload.TransEL2).LossKind(), Margin: workload.DefaultObjective(workload.TransEL2).Margin,
				Adversarial: workload.DefaultObjective(workload.TransEL2).Adversarial, Regularizer: workload.RegN3, RegCoef: 1e-3}, ""},
		{"the default's loss keeps its numbers", workload.ComplEx, func(o *Options) { o.Loss = string(workload.DefaultObjective(workload.ComplEx).LossKind()) },
			workload.DefaultObjective(workload.ComplEx), ""},
		{"another loss drops the default's numbers", workload.ComplEx, func(o *Options) { o.Loss = "ranking" },
			workload.Objective{Loss: workload.Ranking, Regularizer: workload.RegNone}, ""},
		{"softmax for a model whose default is another", workload.ComplEx, func(o *Options) { o.Loss = "softmax" },
			workload.Objective{Loss: workload.Softmax, Regularizer: workload.RegNone}, ""},
		{"unknown loss", workload.Dot, func(o *Options) { o.Loss = "hinge" }, workload.Objective{}, workload.FieldLoss},
		{"unknown regularizer", workload.Dot, func(o *Options) { o.Regularizer = "l7" }, workload.Objective{}, workload.FieldRegularizer},
		{"softmax margin", workload.Dot, func(o *Options) { o.Loss, o.Margin = "softmax", f64(1) }, workload.Objective{}, workload.FieldMargin},
		{"softmax adversarial", workload.Dot, func(o *Options) { o.Adversarial = f64(1) }, workload.Objective{}, workload.FieldAdversarial},
		{"negative margin", workload.TransEL1, func(o *Options) { o.Loss, o.Margin = "ranking", f64(-1) }, workload.Objective{}, workload.FieldMargin},
		{"coefficient without regularizer", workload.Dot, func(o *Options) { o.RegCoef = f64(0.1) }, workload.Objective{}, workload.FieldRegCoef},
		{"regularizer without coefficient", workload.Dot, func(o *Options) { o.Regularizer = "l2" }, workload.Objective{}, workload.FieldRegCoef},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Defaults
			tc.edit(&o)
			got, err := ResolveObjective(o, tc.model)
			if tc.field != "" {
				var oe *workload.ObjectiveError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, tc.field, oe.Field)
				return
			}
			require.NoError(t, err)
			want := tc.want
			want.Loss, want.Regularizer = want.LossKind(), want.Reg()
			assert.Equal(t, want, got)
		})
	}
}

// Configure puts the objective in the Hyper and among the settings a
// checkpoint resumes with (the loss always, the numbers and the
// regularisation where not zero); a bad one is bad input wrapping the
// ObjectiveError.
func TestConfigureObjective(t *testing.T) {
	o := Defaults
	o.Model, o.Dim = "transe-l2", 16
	cfg, err := Configure(o)
	require.NoError(t, err)
	assert.Equal(t, workload.DefaultObjective(workload.TransEL2).LossKind(), cfg.Hyper.Objective.LossKind())
	assert.Equal(t, "transe-l2", cfg.Settings["--model"])

	o.Loss, o.Margin, o.Adversarial, o.Regularizer, o.RegCoef = "ranking", f64(0.5), f64(2), "l2", f64(1e-4)
	cfg, err = Configure(o)
	require.NoError(t, err)
	assert.Equal(t, workload.Objective{Loss: workload.Ranking, Margin: 0.5, Adversarial: 2, Regularizer: workload.RegL2, RegCoef: 1e-4}, cfg.Hyper.Objective)
	for k, v := range map[string]string{"--loss": "ranking", "--margin": "0.5", "--adversarial": "2", "--regularizer": "l2", "--reg-coef": "0.0001"} {
		assert.Equal(t, v, cfg.Settings[k], k)
	}

	o = Defaults
	o.Loss = "softmax"
	cfg, err = Configure(o)
	require.NoError(t, err)
	assert.Equal(t, "softmax", cfg.Settings["--loss"], "the loss is always recorded")
	for _, k := range []string{"--margin", "--adversarial", "--regularizer", "--reg-coef"} {
		assert.NotContains(t, cfg.Settings, k, "zero numbers and no regularisation are not recorded")
	}

	o.Loss, o.Margin = "softmax", f64(1)
	_, err = Configure(o)
	var bad *inputerr.Error
	require.ErrorAs(t, err, &bad)
	var oe *workload.ObjectiveError
	require.ErrorAs(t, err, &oe)
	assert.Equal(t, workload.FieldMargin, oe.Field)
}

// --export-format pbg is refused before any work for a model PBG cannot
// express, with why.
func TestConfigureRefusesPBGExportWithoutPBGForm(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ model, why string }{
		{"transe-l1", "l1 comparator"}, {"rotate", "RotatE"}, {"linear+l1", "l1 comparator"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			o := Defaults
			o.Model, o.Dim, o.Export, o.ExportFormat = tc.model, 16, filepath.Join(dir, "pbg"), "pbg"
			_, err := Configure(o)
			var bad *inputerr.Error
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), "has no PyTorch-BigGraph form")
			assert.Contains(t, err.Error(), tc.why)
			assert.NotContains(t, err.Error(), "\n")
		})
	}
}
