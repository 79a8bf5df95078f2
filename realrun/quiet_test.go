package realrun

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestQuietBuckets: a bucket is quiet when no transfer or checksum of
// the epoch overlaps its compute; its stall may.
func TestQuietBuckets(t *testing.T) {
	io := []IOEvent{
		{Kind: "load", Start: 0, End: 1},
		{Kind: "write", Start: 5, End: 6, CheckStart: 4.5, CheckEnd: 5},
		{Kind: "checkpoint", Start: 9, End: 9.5},
	}
	tests := []struct {
		name  string
		b     BucketRun
		quiet bool
	}{
		{"stalled on the load, then quiet", BucketRun{Edges: 10, Start: 0.5, StallSeconds: 0.5, Compute: 1, End: 2}, true},
		{"beside the load", BucketRun{Edges: 10, Start: 0.5, Compute: 1, End: 1.5}, false},
		{"between transfers", BucketRun{Edges: 10, Start: 2, Compute: 2, End: 4}, true},
		{"beside the write's checksum", BucketRun{Edges: 10, Start: 4, Compute: 0.6, End: 4.6}, false},
		{"beside the write", BucketRun{Edges: 10, Start: 5.5, Compute: 1, End: 6.5}, false},
		{"after everything", BucketRun{Edges: 10, Start: 10, Compute: 1, End: 11}, true},
		{"beside a checkpoint", BucketRun{Edges: 10, Start: 8.9, Compute: 0.2, End: 9.1}, false},
		{"empty", BucketRun{Edges: 0, Start: 7, Compute: 0, End: 7}, false},
	}
	var e Epoch
	e.IO = io
	want, wantSec := []BucketRun{}, 0.0
	for _, tt := range tests {
		e.Buckets = append(e.Buckets, tt.b)
		one := e
		one.Buckets = []BucketRun{tt.b}
		q, _ := QuietBuckets(one)
		assert.Equal(t, tt.quiet, len(q) == 1, tt.name)
		if tt.quiet {
			want = append(want, tt.b)
			wantSec += tt.b.Compute
		}
	}
	q, sec := QuietBuckets(e)
	assert.Equal(t, want, q)
	assert.InDelta(t, wantSec, sec, 1e-12)
}
