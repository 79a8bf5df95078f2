package workload

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseInterval(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want CheckpointInterval
		err  string
	}{
		{"", CheckpointInterval{}, ""},
		{"0", CheckpointInterval{}, ""},
		{"30s", CheckpointInterval{Every: 30 * time.Second}, ""},
		{"1h30m", CheckpointInterval{Every: 90 * time.Minute}, ""},
		{"64b", CheckpointInterval{Buckets: 64}, ""},
		{" 1b ", CheckpointInterval{Buckets: 1}, ""},
		{"0b", CheckpointInterval{}, "positive whole number"},
		{"-3b", CheckpointInterval{}, "positive whole number"},
		{"+3b", CheckpointInterval{}, "positive whole number"},
		{"1.5b", CheckpointInterval{}, "positive whole number"},
		{"b", CheckpointInterval{}, "positive whole number"},
		{"-5s", CheckpointInterval{}, "must be positive"},
		{"64", CheckpointInterval{}, "want a duration"},
		{"64buckets", CheckpointInterval{}, "want a duration"},
		{"soon", CheckpointInterval{}, "want a duration"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseInterval(tc.in)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

// FuzzParseInterval: any string parses to an interval that prints back
// to itself, or to an error; never a panic, never a non-positive interval.
func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"", "0", "30s", "64b", "1h30m", "-1b", "1e9b", "9223372036854775807b", "5"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		iv, err := ParseInterval(s)
		if err != nil {
			return
		}
		if iv == (CheckpointInterval{}) {
			return
		}
		if iv.Buckets < 0 || iv.Every < 0 || (iv.Buckets > 0) == (iv.Every > 0) {
			t.Fatalf("%q: parsed to %+v", s, iv)
		}
		back, err := ParseInterval(iv.String())
		if err != nil || back != iv {
			t.Fatalf("%q: %+v prints as %q, which parses to %+v, %v", s, iv, iv.String(), back, err)
		}
	})
}

// TestCheckpointsInsideTheEpoch: checkpoints every 16 buckets cost
// writes of at most c partitions each and lengthen the epoch by the time
// training waits for them; without the flag nothing changes.
