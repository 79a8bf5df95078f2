package lockserver

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type step struct {
	name    string
	trainer int
	last    Bucket
	release *Bucket // released after the acquire (the trainer's old bucket)
	want    Bucket
	wait    bool // no bucket qualifies: the trainer must wait
}

func b(src, dst int) Bucket { return Bucket{Src: src, Dst: dst} }

func run(t *testing.T, s *State, steps []step) {
	t.Helper()
	for _, st := range steps {
		got, ok := s.Acquire(st.trainer, st.last)
		if st.wait {
			assert.False(t, ok, "%s: got %v, want a wait", st.name, got)
		} else {
			require.True(t, ok, "%s: had to wait, want %v", st.name, st.want)
			assert.Equal(t, st.want, got, st.name)
		}
		if st.release != nil {
			require.NoError(t, s.Release(*st.release), st.name)
		}
	}
}

// P = 4, M = 2, worked by hand from the rules in the package doc.
func TestFirstEpochP4M2(t *testing.T) {
	s, err := NewEpoch(4, true)
	require.NoError(t, err)
	run(t, s, []step{
		// only partition 0 is initialised: T0 gets the first bucket on it.
		{name: "T0 starts on (0,0)", trainer: 0, last: None, want: b(0, 0)},
		// every bucket T1 could take avoids partition 0, and none of
		// them touches an initialised partition.
		{name: "T1 waits: nothing initialised is free", trainer: 1, last: None, wait: true},
		// T0 keeps its source partition: (0,1), before its release of (0,0).
		{name: "T0 stays on source 0", trainer: 0, last: b(0, 0), want: b(0, 1), release: ptr(b(0, 0))},
		{name: "T1 still waits: 0 and 1 are T0's", trainer: 1, last: None, wait: true},
		{name: "T0 moves to (0,2)", trainer: 0, last: b(0, 1), want: b(0, 2), release: ptr(b(0, 1))},
		// 1 is initialised now and free: T1's first bucket.
		{name: "T1 starts on (1,1)", trainer: 1, last: None, want: b(1, 1)},
		// T0 holds 0 and 2, T1 holds 1: T0 may only use 0, 2 and 3.
		{name: "T0 on (0,3)", trainer: 0, last: b(0, 2), want: b(0, 3), release: ptr(b(0, 2))},
		// T1 prefers source 1; (1,0) and (1,3) are locked by T0, (1,2) is free.
		{name: "T1 on (1,2)", trainer: 1, last: b(1, 1), want: b(1, 2), release: ptr(b(1, 1))},
	})
	assert.Equal(t, 10, s.Remaining())
	assert.Equal(t, 2, s.Active())
}

// After the first epoch every partition qualifies: two trainers start at
// once on disjoint buckets.
func TestLaterEpochP4M2(t *testing.T) {
	s, err := NewEpoch(4, false)
	require.NoError(t, err)
	run(t, s, []step{
		{name: "T0 on (0,0)", trainer: 0, last: None, want: b(0, 0)},
		{name: "T1 on (1,1)", trainer: 1, last: None, want: b(1, 1)},
		// T0 prefers its source (0,x), then its destination (x,0); (0,1)
		// is locked by T1, so (0,2).
		{name: "T0 on (0,2)", trainer: 0, last: b(0, 0), want: b(0, 2), release: ptr(b(0, 0))},
		{name: "T1 on (1,3)", trainer: 1, last: b(1, 1), want: b(1, 3), release: ptr(b(1, 1))},
	})
}

// The end of an epoch: buckets remain but both their partitions are held
// by the other trainer, so a trainer waits although work is left.
func TestOccupancyAtTheEnd(t *testing.T) {
	s, err := NewEpoch(4, false)
	require.NoError(t, err)
	for i := range s.Done {
		s.Done[i] = true
	}
	s.Done[2*4+3] = false // only (2,3) is left
	s.Done[3*4+2] = false // and (3,2)
	got, ok := s.Acquire(0, None)
	require.True(t, ok)
	assert.Equal(t, b(2, 3), got)
	_, ok = s.Acquire(1, None)
	assert.False(t, ok, "(3,2) needs 2 and 3, both T0's")
	assert.Equal(t, 1, s.Remaining())
	// T0 itself may take it: its own partitions are free to it.
	got, ok = s.Acquire(0, b(2, 3))
	require.True(t, ok)
	assert.Equal(t, b(3, 2), got)
	assert.Equal(t, 0, s.Remaining())
}

func TestDestinationAffinity(t *testing.T) {
	s, err := NewEpoch(3, false)
	require.NoError(t, err)
	s.Done[0*3+0], s.Done[0*3+1], s.Done[0*3+2] = true, true, true // row 0 done
	got, ok := s.Acquire(0, b(0, 2))
	require.True(t, ok)
	assert.Equal(t, b(1, 2), got, "no (0,x) left: the first (x,2)")
}

func TestBadInput(t *testing.T) {
	_, err := NewEpoch(0, false)
	assert.ErrorContains(t, err, "p must be at least 1")
	s, err := NewEpoch(2, false)
	require.NoError(t, err)
	assert.ErrorIs(t, s.Release(b(0, 1)), ErrBadBucket)
	assert.ErrorIs(t, s.Release(b(5, 1)), ErrBadBucket)
	assert.Equal(t, 1, MaxParallel(2))
	assert.Equal(t, 8, MaxParallel(16))
}

// Every bucket is handed out exactly once, whatever the trainers do.
func TestEveryBucketOnce(t *testing.T) {
	for _, tc := range []struct{ p, m int }{{4, 2}, {8, 4}, {16, 8}, {5, 3}} {
		s, err := NewEpoch(tc.p, true)
		require.NoError(t, err)
		last := make([]Bucket, tc.m)
		for i := range last {
			last[i] = None
		}
		seen := map[Bucket]bool{}
		for round := 0; s.Remaining() > 0; round++ {
			require.Less(t, round, 10*tc.p*tc.p, "p=%d m=%d: stuck", tc.p, tc.m)
			for tr := range tc.m {
				got, ok := s.Acquire(tr, last[tr])
				if last[tr] != None {
					require.NoError(t, s.Release(last[tr]))
					last[tr] = None
				}
				if ok {
					assert.False(t, seen[got], "p=%d: %v twice", tc.p, got)
					seen[got] = true
					last[tr] = got
				}
			}
		}
		assert.Len(t, seen, tc.p*tc.p)
	}
}

func ptr(b Bucket) *Bucket { return &b }

// With an Order the buckets go out in it, as far as the partitions
// other trainers hold allow.
func TestOrder(t *testing.T) {
	s, err := NewEpoch(3, false)
	require.NoError(t, err)
	require.NoError(t, s.SetOrder([]Bucket{b(2, 2), b(2, 1), b(0, 0), b(1, 2), b(0, 1), b(1, 0), b(2, 0), b(0, 2), b(1, 1)}))
	run(t, s, []step{
		{name: "T0 takes the first", trainer: 0, last: None, want: b(2, 2)},
		{name: "T1: (2,1) and (1,2) need T0's 2; (0,0) is next", trainer: 1, last: None, want: b(0, 0)},
		{name: "T0 goes on in the order, not by affinity", trainer: 0, last: b(2, 2), want: b(2, 1), release: ptr(b(2, 2))},
		{name: "T1: (1,2) is T0's; (0,1) too", trainer: 1, last: b(0, 0), wait: true},
	})
	for _, tc := range []struct {
		name  string
		order []Bucket
		want  string
	}{
		{"short", []Bucket{b(0, 0)}, "an order of 1 buckets"},
		{"twice", []Bucket{b(0, 0), b(0, 0), b(0, 1), b(0, 2), b(1, 0), b(1, 1), b(1, 2), b(2, 0), b(2, 1)}, "twice"},
		{"outside", []Bucket{b(0, 3), b(0, 1), b(0, 2), b(1, 0), b(1, 1), b(1, 2), b(2, 0), b(2, 1), b(2, 2)}, "outside"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.ErrorContains(t, s.SetOrder(tc.order), tc.want)
		})
	}
}
