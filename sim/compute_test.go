package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/workload"
)

// TestShapeNote: simulating the CPU engine with a profile measured at
// another training shape says so in one line naming each difference; the
// same shape, a profile without a shape, or a GPU system say nothing.
func TestShapeNote(t *testing.T) {
	rr, err := LookupSystem("realrun")
	require.NoError(t, err)
	marius, err := LookupSystem("marius")
	require.NoError(t, err)
	shape := devices.TrainShape{Model: "complex", Dim: 64, Batch: 10000, Negatives: 100, Chunk: 100, Workers: 2, Rows: 5000}
	tr := workload.Training{Model: workload.ComplEx, Dim: 64, Batch: 10000, Negatives: 100}
	with := func(sys System, ts *devices.TrainShape, tr workload.Training) Scenario {
		var prof devices.Profile
		prof.CPU.TrainShape = ts
		return Scenario{System: sys, Profile: prof, Training: tr}
	}
	assert.Empty(t, shapeNote("cal.yaml", with(rr, &shape, tr)))
	assert.Empty(t, shapeNote("cal.yaml", with(rr, nil, tr)))
	wider := tr
	wider.Dim, wider.Batch = 128, 50000
	assert.Empty(t, shapeNote("cal.yaml", with(marius, &shape, wider)))
	note := shapeNote("cal.yaml", with(rr, &shape, wider))
	assert.Contains(t, note, "{Device} cal.yaml: cpu.train was measured at complex, d=64")
	assert.Contains(t, note, "d 64 → 128 (2.00×), batch 10000 → 50000 (5.00×)")
	assert.NotContains(t, note, "\n")
}

// rule's terms at them; pairwise operations at their own rate, or at a
// third of the FLOP rate without one.
