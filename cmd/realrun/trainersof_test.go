//go:build !nodist

package main

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/realrun/dist"
)

// TestTrainersOf: the summary counts every trainer that reported an
// epoch, one that joined from elsewhere too, in the right number.
func TestTrainersOf(t *testing.T) {
	epoch := func(ids ...int) dist.DistEpoch {
		var e dist.DistEpoch
		for _, id := range ids {
			e.Trainers = append(e.Trainers, dist.TrainerEpoch{Trainer: id})
		}
		return e
	}
	for _, tc := range []struct {
		launched int
		epochs   []dist.DistEpoch
		want     string
	}{
		{launched: 2, epochs: []dist.DistEpoch{epoch(0, 1), epoch(0, 1)}, want: "2 trainers"},
		{launched: 1, epochs: []dist.DistEpoch{epoch(0), epoch(0, 1)}, want: "2 trainers"}, // one joined in epoch 2
		{launched: 1, epochs: []dist.DistEpoch{epoch(0)}, want: "1 trainer"},
		{launched: 3, want: "3 trainers"}, // stopped before any report
	} {
		assert.Equal(t, tc.want, trainersOf(dist.DistOutput{Trainers: tc.launched, Epochs: tc.epochs}))
	}
}
