// Package lockserver is PyTorch-BigGraph's bucket-assignment policy for
// several trainers: which edge bucket a trainer may take next, given the
// buckets done this epoch and the partitions other trainers hold.
//
// It is plain state and pure decisions, with no clock and no I/O, so that
// the simulator drives it under simulated time and a distributed engine
// under real time (its State kept in a coordination store), as PBG §4.2
// describes its lock server:
//
//   - a trainer gets a bucket not yet trained this epoch whose two
//     partitions no other trainer holds (the partitions it holds itself
//     count as free to it);
//   - among those it prefers one sharing the source partition of its last
//     bucket, then one sharing the destination, then the rest, each group
//     in row-major order, so that it reuses a partition it already has;
//   - in the first epoch, while initialisation spreads, a bucket must
//     touch a partition that some trainer has already initialised:
//     partition 0 is initialised from the start, and both partitions of
//     every bucket handed out join it (only the first bucket works on
//     partitions nobody has trained).
//
// A State with an Order (a saved Plan's bucket order) instead hands out
// the first bucket of that order that qualifies: the order is a
// priority, followed as far as the partitions other trainers hold allow.
//
// When no bucket qualifies, Acquire reports it and the trainer must wait:
// that wait is PBG's "incomplete occupancy".
package lockserver

import (
	"errors"
	"fmt"

	"github.com/tierflow/tierflow/orderings"
)

// Bucket is an edge bucket: edges from partition Src to partition Dst.
type Bucket = orderings.Bucket

// None is a trainer's last bucket when it has none (the epoch's start, or
// after it gave its partitions back).
var None = Bucket{Src: -1, Dst: -1}

// State is one epoch of the lock server. The zero value is not usable;
// use NewEpoch.
type State struct {
	// P is the number of partitions; there are P² buckets.
	P int `json:"p"`
	// Done marks the buckets handed out this epoch, row-major (Src·P+Dst).
	Done []bool `json:"done"`
	// Holder is, by bucket, the trainer training it now, or -1.
	Holder []int `json:"holder"`
	// Inited, in the first epoch, marks the partitions some trainer has
	// initialised; nil after the first epoch (every partition qualifies).
	Inited []bool `json:"inited,omitempty"`
	// Order, if set, is the priority of the buckets (their row-major
	// indices, every one once): Choose takes the first that qualifies,
	// in place of the affinity to the trainer's last bucket.
	Order []int `json:"order,omitempty"`
}

// ErrBadBucket is returned when a release names a bucket that is not held.
var ErrBadBucket = errors.New("bucket not held")

// NewEpoch starts an epoch over p partitions; first says whether it is the
// first epoch (partitions start uninitialised, all but partition 0).
func NewEpoch(p int, first bool) (*State, error) {
	if p < 1 {
		return nil, fmt.Errorf("lockserver: p must be at least 1, got %d", p)
	}
	s := &State{P: p, Done: make([]bool, p*p), Holder: make([]int, p*p)}
	for i := range s.Holder {
		s.Holder[i] = -1
	}
	if first {
		s.Inited = make([]bool, p)
		s.Inited[0] = true
	}
	return s, nil
}

// Remaining is the number of buckets not yet handed out this epoch.
func (s *State) Remaining() int {
	n := 0
	for _, d := range s.Done {
		if !d {
			n++
		}
	}
	return n
}

// Active is the number of buckets being trained now.
func (s *State) Active() int {
	n := 0
	for _, h := range s.Holder {
		if h >= 0 {
			n++
		}
	}
	return n
}

// lockedBy returns, by partition, the trainer holding it (-1: free).
func (s *State) lockedBy() []int {
	locked := make([]int, s.P)
	for i := range locked {
		locked[i] = -1
	}
	for i, h := range s.Holder {
		if h >= 0 {
			locked[i/s.P], locked[i%s.P] = h, h
		}
	}
	return locked
}

// Choose returns the bucket the policy gives trainer next, given its last
// bucket (None if it holds none), without changing the state; ok is false
// when no bucket qualifies now.
func (s *State) Choose(trainer int, last Bucket) (b Bucket, ok bool) {
	locked := s.lockedBy()
	free := func(part int) bool { return locked[part] < 0 || locked[part] == trainer }
	best, bestScore := -1, -1
	for k := range s.Done {
		i := k
		if s.Order != nil {
			i = s.Order[k]
		}
		src, dst := i/s.P, i%s.P
		if s.Done[i] || !free(src) || !free(dst) {
			continue
		}
		if s.Inited != nil && !s.Inited[src] && !s.Inited[dst] {
			continue
		}
		if s.Order != nil {
			best = i
			break
		}
		score := 0
		if src == last.Src {
			score += 2
		}
		if dst == last.Dst {
			score++
		}
		if score > bestScore {
			best, bestScore = i, score
		}
	}
	if best < 0 {
		return Bucket{}, false
	}
	return Bucket{Src: best / s.P, Dst: best % s.P}, true
}

// Acquire gives trainer its next bucket (Choose) and records it: the
// bucket is done for this epoch and held by trainer, and its partitions
// are initialised. The trainer's last bucket stays held until Release.
func (s *State) Acquire(trainer int, last Bucket) (Bucket, bool) {
	b, ok := s.Choose(trainer, last)
	if !ok {
		return Bucket{}, false
	}
	i := b.Src*s.P + b.Dst
	s.Done[i], s.Holder[i] = true, trainer
	if s.Inited != nil {
		s.Inited[b.Src], s.Inited[b.Dst] = true, true
	}
	return b, true
}

// Release frees bucket b's partitions (its trainer has saved those it no
// longer needs).
func (s *State) Release(b Bucket) error {
	if b.Src < 0 || b.Src >= s.P || b.Dst < 0 || b.Dst >= s.P || s.Holder[b.Src*s.P+b.Dst] < 0 {
		return fmt.Errorf("lockserver: release %v: %w", b, ErrBadBucket)
	}
	s.Holder[b.Src*s.P+b.Dst] = -1
	return nil
}

// SetOrder makes order (every bucket once) the priority the buckets are
// handed out in (State.Order).
func (s *State) SetOrder(order []Bucket) error {
	if len(order) != s.P*s.P {
		return fmt.Errorf("lockserver: an order of %d buckets, want every one of the %d buckets once", len(order), s.P*s.P)
	}
	idx := make([]int, len(order))
	seen := make([]bool, len(order))
	for k, b := range order {
		if b.Src < 0 || b.Src >= s.P || b.Dst < 0 || b.Dst >= s.P {
			return fmt.Errorf("lockserver: bucket %v of the order is outside p=%d", b, s.P)
		}
		i := b.Src*s.P + b.Dst
		if seen[i] {
			return fmt.Errorf("lockserver: bucket %v twice in the order", b)
		}
		seen[i], idx[k] = true, i
	}
	s.Order = idx
	return nil
}

// MaxParallel is the most trainers that can train at once over p
// partitions: every bucket being trained locks two partitions (one for a
// diagonal bucket), so ⌊p/2⌋ trainers on off-diagonal buckets, at least 1.
func MaxParallel(p int) int { return max(p/2, 1) }
