package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun"
)

func TestCheckpointSummary(t *testing.T) {
	var a, b realrun.Epoch
	a.InsideCheckpoints, a.CheckpointBytes, a.CheckpointWaitSeconds = 2, 3_000_000, 0.5
	b.InsideCheckpoints, b.CheckpointBytes, b.CheckpointWaitSeconds = 1, 1_500_000, 0.25
	assert.Equal(t, "checkpoints inside epochs: 3, 4.5 MB written, training waited 0.8 s for them",
		checkpointSummary(Output{Epochs: []realrun.Epoch{a, b}}))
	assert.Empty(t, checkpointSummary(Output{}), "no line when none was taken")
}
