package orderings

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Bucket is one edge bucket: the edges whose source node lies in partition
// Src and whose destination node lies in partition Dst. It serialises as the
// two-element JSON array [src, dst].
type Bucket struct {
	Src, Dst int
}

// MarshalJSON encodes b as [src, dst].
func (b Bucket) MarshalJSON() ([]byte, error) {
	return json.Marshal([2]int{b.Src, b.Dst})
}

// UnmarshalJSON decodes [src, dst].
func (b *Bucket) UnmarshalJSON(data []byte) error {
	var a []int
	if err := json.Unmarshal(data, &a); err != nil {
		return fmt.Errorf("bucket: %w", err)
	}
	if len(a) != 2 {
		return fmt.Errorf("bucket: want [src, dst], got %d numbers", len(a))
	}
	b.Src, b.Dst = a[0], a[1]
	return nil
}

// String formats b as (src,dst).
func (b Bucket) String() string { return fmt.Sprintf("(%d,%d)", b.Src, b.Dst) }

// None marks the absence of a partition (a load into an empty slot evicts None).
const None = -1

// Load is one partition read from disk into the buffer, as scheduled by a
// replay of the bucket order under an eviction policy.
type Load struct {
	// Partition is the node partition that is read.
	Partition int `json:"partition"`
	// Slot is the buffer slot (0..C-1) it is read into.
	Slot int `json:"slot"`
	// Evicts is the partition that previously occupied Slot and is written
	// back before (or while) the load happens, or None during the initial fill.
	Evicts int `json:"evicts"`
	// IssueAt is the index of the first bucket during which the load may be
	// in flight: the evicted partition's last use + 1 (0 for fill loads).
	// The buckets IssueAt..NeededAt-1 form the prefetch window.
	IssueAt int `json:"issue_at"`
	// NeededAt is the index of the bucket that needs the partition.
	NeededAt int `json:"needed_at"`
	// Swap is true when the load happens after the buffer first held C
	// partitions (Marius §4.1: the initial fill is free).
	Swap bool `json:"swap"`
}

// Window is the number of buckets that can be computed while the load is in
// flight.
func (l Load) Window() int { return l.NeededAt - l.IssueAt }

// Counts are the I/O counts of a plan, in partitions. Bytes follow from
// multiplying by the partition size (see Counts.Bytes).
type Counts struct {
	// Swaps are loads after the buffer first held C partitions.
	Swaps int `json:"swaps"`
	// Loads are all partition reads: the initial fill plus the swaps.
	Loads int `json:"loads"`
	// Writes are write-backs of evicted partitions (every eviction writes).
	Writes int `json:"writes"`
	// FinalWrites are the partitions still resident at the end of the epoch,
	// flushed to disk then.
	FinalWrites int `json:"final_writes"`
	// PrefetchableSwaps are swaps whose prefetch window holds at least one
	// bucket to compute while the load is in flight.
	PrefetchableSwaps int `json:"prefetchable_swaps"`
}

// Bytes returns the bytes read and written in one epoch when every
// partition occupies partitionBytes on disk.
func (c Counts) Bytes(partitionBytes int64) (read, write int64) {
	return int64(c.Loads) * partitionBytes, int64(c.Writes+c.FinalWrites) * partitionBytes
}

// Plan is one epoch's schedule: the bucket order both interpreters (the
// simulator and the real engine) execute, and the buffer schedule derived
// from it by replay. A Plan is plain data; it never changes after Build.
type Plan struct {
	// Ordering is the name of the ordering that produced Buckets.
	Ordering string `json:"ordering"`
	// Policy is the eviction policy the load schedule was replayed under.
	Policy string `json:"policy"`
	// Seed is the seed the ordering was generated with.
	Seed int64 `json:"seed"`
	// P is the number of node partitions, C the buffer capacity in partitions.
	P int `json:"p"`
	C int `json:"c"`
	// Buckets is the order: every one of the P² buckets exactly once.
	Buckets []Bucket `json:"buckets"`
	// States is the buffer-state sequence the ordering was built from, where
	// it defines one (BETA, COVER, Legend); nil otherwise. The replayed
	// schedule (Loads) is authoritative for I/O.
	States [][]int `json:"states,omitempty"`
	// Loads is the load schedule, in the order the loads are needed.
	Loads []Load `json:"loads"`
	// FinalResident lists the partitions resident after the last bucket,
	// by slot (None for an empty slot); they are flushed at epoch end.
	FinalResident []int `json:"final_resident"`
	// Counts summarises Loads.
	Counts Counts `json:"counts"`
}

// MaxP is the largest partition count a Plan may have; p² buckets of
// 16 bytes each are held in memory, so 1<<14 needs about 4 GiB.
const MaxP = 1 << 14

// ErrInvalidPlan wraps every validation failure.
var ErrInvalidPlan = errors.New("invalid plan")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidPlan, fmt.Sprintf(format, args...))
}

// CheckPC reports whether p and c describe a usable configuration:
// 2 ≤ c ≤ p ≤ MaxP. A buffer of one partition cannot hold both sides of an
// off-diagonal bucket, and p is capped so the order fits in memory.
func CheckPC(p, c int) error {
	switch {
	case p < 2:
		return fmt.Errorf("p must be at least 2, got %d", p)
	case p > MaxP:
		return fmt.Errorf("p = %d needs %d buckets (%.1f GB for the order alone); the limit is p ≤ %d",
			p, int64(p)*int64(p), float64(int64(p)*int64(p)*16)/1e9, MaxP)
	case c < 2:
		return fmt.Errorf("c must be at least 2, got %d", c)
	case c > p:
		return fmt.Errorf("c = %d exceeds p = %d", c, p)
	}
	return nil
}

// Validate checks that the plan is internally consistent: every bucket
// appears exactly once, the schedule never exceeds C resident partitions,
// every partition is resident when a bucket that needs it runs, the load
// windows are consistent with the evictions, and the counts match.
func (pl *Plan) Validate() error {
	if err := CheckPC(pl.P, pl.C); err != nil {
		return invalid("%v", err)
	}
	p, c := pl.P, pl.C
	if len(pl.Buckets) != p*p {
		return invalid("%d buckets, want p² = %d", len(pl.Buckets), p*p)
	}
	seen := make([]bool, p*p)
	for k, b := range pl.Buckets {
		if b.Src < 0 || b.Src >= p || b.Dst < 0 || b.Dst >= p {
			return invalid("bucket %d %v is outside %d×%d", k, b, p, p)
		}
		if seen[b.Src*p+b.Dst] {
			return invalid("bucket %v appears twice (again at index %d)", b, k)
		}
		seen[b.Src*p+b.Dst] = true
	}
	for _, st := range pl.States {
		if len(st) > c {
			return invalid("buffer state %v holds more than c = %d partitions", st, c)
		}
	}
	// Re-execute the schedule.
	slots := make([]int, c)
	for i := range slots {
		slots[i] = None
	}
	where := make([]int, p) // slot of a resident partition, or None
	for i := range where {
		where[i] = None
	}
	lastUse := make([]int, p)
	for i := range lastUse {
		lastUse[i] = -1
	}
	var cnt Counts
	filled := 0
	next := 0 // next load to apply
	for k, b := range pl.Buckets {
		for next < len(pl.Loads) && pl.Loads[next].NeededAt == k {
			l := pl.Loads[next]
			if l.Partition < 0 || l.Partition >= p {
				return invalid("load %d: partition %d out of range", next, l.Partition)
			}
			if l.Slot < 0 || l.Slot >= c {
				return invalid("load %d: slot %d out of range [0,%d)", next, l.Slot, c)
			}
			if where[l.Partition] != None {
				return invalid("load %d: partition %d is already resident", next, l.Partition)
			}
			if slots[l.Slot] != l.Evicts {
				return invalid("load %d: slot %d holds %d, not the evicted %d", next, l.Slot, slots[l.Slot], l.Evicts)
			}
			wantIssue := 0
			if l.Evicts != None {
				if l.Evicts == b.Src || l.Evicts == b.Dst {
					return invalid("load %d evicts partition %d, which bucket %d %v needs", next, l.Evicts, k, b)
				}
				where[l.Evicts] = None
				wantIssue = lastUse[l.Evicts] + 1
				cnt.Writes++
			}
			if l.IssueAt != wantIssue {
				return invalid("load %d: issue_at %d, want %d (evicted partition's last use + 1)", next, l.IssueAt, wantIssue)
			}
			if l.Swap != (filled == c) {
				return invalid("load %d: swap flag %v but the buffer holds %d of %d", next, l.Swap, filled, c)
			}
			if l.Swap {
				cnt.Swaps++
				if l.Window() > 0 {
					cnt.PrefetchableSwaps++
				}
			} else {
				filled++
			}
			if l.Evicts == None && l.Swap {
				return invalid("load %d: a swap must evict a partition", next)
			}
			slots[l.Slot] = l.Partition
			where[l.Partition] = l.Slot
			cnt.Loads++
			next++
		}
		if next < len(pl.Loads) && pl.Loads[next].NeededAt < k {
			return invalid("load %d: needed_at %d is out of order", next, pl.Loads[next].NeededAt)
		}
		if where[b.Src] == None || where[b.Dst] == None {
			return invalid("bucket %d %v runs while a partition it needs is not resident", k, b)
		}
		lastUse[b.Src], lastUse[b.Dst] = k, k
	}
	if next != len(pl.Loads) {
		return invalid("load %d: needed_at %d is beyond the last bucket", next, pl.Loads[next].NeededAt)
	}
	if len(pl.FinalResident) != c {
		return invalid("final_resident has %d slots, want c = %d", len(pl.FinalResident), c)
	}
	for s, x := range slots {
		if pl.FinalResident[s] != x {
			return invalid("final_resident slot %d is %d, the schedule leaves %d", s, pl.FinalResident[s], x)
		}
		if x != None {
			cnt.FinalWrites++
		}
	}
	if cnt != pl.Counts {
		return invalid("counts %+v do not match the schedule's %+v", pl.Counts, cnt)
	}
	return nil
}

// WriteJSON writes the plan as indented JSON.
func (pl *Plan) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	if err := enc.Encode(pl); err != nil {
		return fmt.Errorf("encode plan: %w", err)
	}
	return nil
}

// ReadJSON reads a plan written by WriteJSON and validates it.
func ReadJSON(r io.Reader) (*Plan, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var pl Plan
	if err := dec.Decode(&pl); err != nil {
		return nil, fmt.Errorf("decode plan: %w", err)
	}
	if err := pl.Validate(); err != nil {
		return nil, err
	}
	return &pl, nil
}

// Prefix is the Plan's first k buckets as a Plan of its own: the loads
// they need, exactly as the whole Plan issues them, and the partitions
// left resident after bucket k−1, flushed at its end. It is not a whole
// epoch (Validate refuses it): it is what the engine executes first, for
// a probe that runs the beginning of an epoch. k is held to [1, p²].
func (pl *Plan) Prefix(k int) *Plan {
	k = min(max(k, 1), len(pl.Buckets))
	out := &Plan{Ordering: pl.Ordering, Policy: pl.Policy, Seed: pl.Seed, P: pl.P, C: pl.C, Buckets: pl.Buckets[:k:k]}
	slots := make([]int, pl.C)
	for i := range slots {
		slots[i] = None
	}
	for _, l := range pl.Loads {
		if l.NeededAt >= k {
			break
		}
		out.Loads = append(out.Loads, l)
		if l.Slot >= 0 && l.Slot < len(slots) {
			slots[l.Slot] = l.Partition
		}
		out.Counts.Loads++
		if l.Evicts != None {
			out.Counts.Writes++
		}
		if l.Swap {
			out.Counts.Swaps++
			if l.Window() > 0 {
				out.Counts.PrefetchableSwaps++
			}
		}
	}
	out.FinalResident = slots
	for _, x := range slots {
		if x != None {
			out.Counts.FinalWrites++
		}
	}
	return out
}
