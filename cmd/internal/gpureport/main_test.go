package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rep "github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/validate"
)

// A bundle folder with two compare-sim files of one shape: the report
// pools them, marks each file's first epoch, counts the epochs within
// 10% with and without those, and checks the ranking of the pairs whose
// ranges do not overlap.
func TestReport(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, v any) {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755))
		data, err := json.Marshal(v)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), data, 0o644))
	}
	write("ceilings.json", map[string]any{"gpu": "test GPU", "sgemm_batched_fp32_flops": 30e12, "sgemm_batched_tf32_flops": 70e12})
	write("throughput/in-gpu.json", map[string]any{"model": "dot", "dim": 100, "negatives": 1000,
		"epochs": []map[string]any{{"edges_per_second": 10e6, "epoch_seconds": 1.5, "gpu": map[string]any{"gemm": "cuBLAS"}}}})
	cmp := func(ord string, meas, pred float64) validate.Comparison {
		r := func(s float64) rep.Report {
			return rep.Report{System: "realrun-cuda", Ordering: ord, Dataset: "twitter@0.002", Dim: 100, P: 16, C: 4, EpochSeconds: s, ReadBytes: 100e6}
		}
		c := validate.Compare(r(meas), r(pred))
		c.Ordering, c.CountsMatch = ord, true
		return c
	}
	// beta's first epoch (a process's first) is 20% slow; hilbert and
	// beta never overlap and the prediction orders them alike.
	write("compare-sim/a.json", validate.CompareOutput{Results: []validate.Comparison{cmp("beta", 0.65, 0.52), cmp("hilbert", 1.1, 1.08), cmp("beta", 0.53, 0.52)}})
	write("extra/b.json", validate.CompareOutput{Results: []validate.Comparison{cmp("hilbert", 1.12, 1.08), cmp("beta", 0.54, 0.52)}})
	var out bytes.Buffer
	require.NoError(t, report(&out, dir))
	s := out.String()
	assert.Contains(t, s, "| in-gpu | 10000000 | 12.0 | 40% |")
	assert.Contains(t, s, "4 of 5 epochs within 10% of their prediction; 3 of 3 after the first epoch of each process (the first ones: beta -20.0%, hilbert -3.6%)")
	assert.Contains(t, s, "ranked the same way by the prediction: 1.")
	assert.Contains(t, s, "| beta | 4 | 3 | 0.540 (0.530–0.650) | 0.520 |")
}
