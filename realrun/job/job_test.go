package job

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
)

func TestConfigureDefaultWorkdirIsPerInput(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	for _, sub := range []string{"X", "Y"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, sub), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, sub, "train.tsv"), []byte("a b\nb c\nc d\nd a\n"), 0o644))
	}
	workdirOf := func(o Options) string {
		cfg, err := Configure(o)
		require.NoError(t, err)
		return cfg.Spec.Workdir
	}
	o := Defaults
	o.P, o.C = 2, 2
	o.Edges = filepath.Join(dir, "X", "train.tsv")
	x := workdirOf(o)
	o.Edges = filepath.Join(dir, "Y", "train.tsv")
	y := workdirOf(o)
	assert.NotEqual(t, x, y, "same base name, other file")
	assert.True(t, strings.HasPrefix(filepath.Base(x), "tierflow-train.tsv-"), x)
	assert.Equal(t, dir, filepath.Dir(x), "under the system temp dir")

	p := Defaults
	twitter := workdirOf(p)
	assert.True(t, strings.HasPrefix(filepath.Base(twitter), "tierflow-twitter@0.01-"), twitter)
	p.Seed = 2
	assert.NotEqual(t, twitter, workdirOf(p), "another data seed is another input")
	p.Seed, p.Dim = 1, 32
	assert.Equal(t, twitter, workdirOf(p), "the same input whatever the layout: a change there is named when the directory holds a checkpoint")
}

func TestConfigureSettings(t *testing.T) {
	o := Defaults
	o.Dim, o.OrderingSeed = 16, 3
	cfg, err := Configure(o)
	require.NoError(t, err)
	s := cfg.Settings
	assert.Equal(t, "twitter", s["--dataset"])
	assert.Equal(t, "0.01", s["--scale"])
	assert.Equal(t, "16", s["--dim"])
	assert.Equal(t, "beta", s["--ordering"])
	assert.Equal(t, "3", s["--ordering-seed"], "the Plan's seed")
	assert.Equal(t, "0.1", s["--lr"], "the learning rate as it trains (the graph kind's default)")
	assert.Equal(t, "100", s["--chunk"], "the chunk as it trains (as many as the negatives)")
	assert.NotContains(t, s, "--epochs", "epochs may change between runs")
	assert.NotContains(t, s, "--workers")
	assert.Equal(t, 2, cfg.Keep, "the default keeps two checkpoints")
	assert.Equal(t, 3, cfg.Spec.Copies, "two kept and one being written")
}

func TestConfigureRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		edit func(*Options)
		msg  string
	}{
		{"export into a missing folder", func(o *Options) { o.Export = filepath.Join(dir, "missing", "e.npy") }, "{Export}"},
		{"export extension against format", func(o *Options) { o.Export, o.ExportFormat = filepath.Join(dir, "e.tsv"), "npy" }, "{ExportFormat} is npy"},
		{"export extension naming no format", func(o *Options) { o.Export = filepath.Join(dir, "e.bin") }, `cannot tell the format from the extension ".bin"`},
		{"nothing valid", func(o *Options) { o.P, o.C, o.Orderings = 8, 4, "cover,legend" }, "none of the orderings is defined at p = 8, c = 4"},
		{"keep", func(o *Options) { o.KeepCheckpoints = -1 }, "{KeepCheckpoints} -1"},
		{"duplicate-row rule", func(o *Options) { o.Duplicates = "max" }, `{Duplicates}: unknown duplicate-row rule "max" (each or sum)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Defaults
			tc.edit(&o)
			_, err := Configure(o)
			var bad *inputerr.Error
			require.ErrorAs(t, err, &bad)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
	entries, _ := os.ReadDir(dir)
	assert.Empty(t, entries, "the checks leave nothing behind")
}

// TestConfigureDuplicates: --duplicates becomes Hyper.Duplicates; a
// rule other than the default is one of the settings a checkpoint is
// continued with, the default is not recorded (older directories resume).
func TestConfigureDuplicates(t *testing.T) {
	for _, tc := range []struct {
		flag    string
		rule    realrun.Duplicates
		setting string // "": none
	}{
		{"", realrun.DuplicatesEach, ""},
		{"each", realrun.DuplicatesEach, ""},
		{"sum", realrun.DuplicatesSum, "sum"},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			o := Defaults
			o.Duplicates = tc.flag
			cfg, err := Configure(o)
			require.NoError(t, err)
			assert.Equal(t, tc.rule, cfg.Hyper.Rule())
			if tc.setting == "" {
				assert.NotContains(t, cfg.Settings, "--duplicates")
			} else {
				assert.Equal(t, tc.setting, cfg.Settings["--duplicates"])
			}
		})
	}
}

// The CUDA engine multiplies on TF32 tensor cores unless asked for FP32;
// the CPU engine takes neither flag, and the two flags exclude each other.
func TestConfigurePrecision(t *testing.T) {
	if !slices.Contains(realrun.EngineNames(), "cuda") {
		realrun.RegisterEngine("cuda", func(realrun.EngineOptions) (realrun.Engine, error) { return nil, errors.New("not in this test") })
	}
	for _, tc := range []struct {
		name, engine string
		tf32, fp32   bool
		want         bool   // Hyper.TF32
		err          string // "": configured
	}{
		{"cuda default", "cuda", false, false, true, ""},
		{"cuda --tf32", "cuda", true, false, true, ""},
		{"cuda --fp32", "cuda", false, true, false, ""},
		{"cpu", "cpu", false, false, false, ""},
		{"cpu --tf32", "cpu", true, false, false, "{TF32}: goes with {Engine} cuda"},
		{"cpu --fp32", "cpu", false, true, false, "{FP32}: goes with {Engine} cuda"},
		{"both", "cuda", true, true, false, "{TF32} and {FP32}: choose one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Defaults
			o.Engine, o.TF32, o.FP32 = tc.engine, tc.tf32, tc.fp32
			cfg, err := Configure(o)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, cfg.Hyper.TF32)
		})
	}
}
