package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// outdir writes an OUTDIR as run.sh leaves it, with steps.json as given.
func outdir(t *testing.T, steps string) string {
	dir := t.TempDir()
	files := map[string]string{
		"env.json":           `{"date": "2026-01-01T00:00:00Z", "hostname": "h", "nproc": 2, "mode": "emulated"}`,
		"summary.txt":        "summary\n",
		"steps.json":         steps,
		"tests/cuda.txt":     "--- SKIP\n",
		"calibrate/cal.yaml": "name: x\n",
	}
	for name, data := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644))
	}
	return dir
}

func steps(extra ...string) string {
	s := []string{
		`{"step": "ceilings", "status": "skipped", "reason": "no GPU: nothing to measure", "seconds": 0, "outputs": []}`,
		`{"step": "gpu-tests/cuda", "status": "skipped", "reason": "no usable CUDA GPU", "seconds": 0.1, "outputs": ["tests/cuda.txt"]}`,
		`{"step": "emulator-tests", "status": "run", "reason": "", "seconds": 5, "outputs": []}`,
		`{"step": "throughput/in-gpu", "status": "run (emulated: no GPU)", "reason": "stand-in", "seconds": 0.5, "outputs": []}`,
		`{"step": "quality/cpu", "status": "run", "reason": "MRR 0.1", "seconds": 0.2, "outputs": []}`,
		`{"step": "profile/in-gpu", "status": "run (emulated: no GPU)", "reason": "stand-in", "seconds": 0.5, "outputs": []}`,
		`{"step": "calibrate/databound", "status": "run (emulated: no GPU)", "reason": "stand-in", "seconds": 10, "outputs": ["calibrate/cal.yaml"]}`,
	}
	return "[\n" + strings.Join(append(s, extra...), ",\n") + "\n]\n"
}

func TestCheck(t *testing.T) {
	host := `{"step": "compare-sim-databound/host-c4", "status": "skipped", "reason": "refused", "seconds": 0, "outputs": []}`
	lines, err := Check(outdir(t, steps(host)))
	require.NoError(t, err)
	require.Len(t, lines, len(Groups)+1)

	for _, tc := range []struct{ name, steps, want string }{
		{"a group missing", steps(), "no step compare-sim-databound"},
		{"a failed step", steps(host, `{"step": "quality/cuda", "status": "failed", "reason": "exit 1", "seconds": 1, "outputs": []}`), "quality/cuda failed"},
		{"a skip without reason", steps(host, `{"step": "quality/cuda", "status": "skipped", "reason": " ", "seconds": 0, "outputs": []}`), "without a reason"},
		{"an unknown status", steps(host, `{"step": "quality/cuda", "status": "ok", "reason": "", "seconds": 0, "outputs": []}`), "status \"ok\""},
		{"an unknown step", steps(host, `{"step": "bench", "status": "run", "reason": "", "seconds": 0, "outputs": []}`), "unknown step"},
		{"a missing output", steps(host, `{"step": "quality/cuda", "status": "run", "reason": "", "seconds": 0, "outputs": ["quality/cuda.json"]}`), "quality/cuda.json"},
		{"no seconds", steps(host, `{"step": "quality/cuda", "status": "run", "reason": "", "outputs": []}`), "no seconds"},
		{"not JSON", "[{", "steps.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Check(outdir(t, tc.steps))
			require.ErrorContains(t, err, tc.want)
		})
	}
}
