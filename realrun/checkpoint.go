package realrun

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Stateful engines keep state beside the partitions (relation
// embeddings and their optimizer state) that a checkpoint must carry.
// Checkpoints hold it as opaque little-endian float32s, so that every
// engine (CPU, GPU) writes the same format.
type Stateful interface {
	// State returns the engine's state to checkpoint.
	State() []float32
	// Restore sets the state back from a checkpoint.
	Restore(state []float32) error
}

// The extra files of a checkpoint: the engine's state and, inside an
// epoch, the position.
const (
	StateFile    = "state.bin"
	PositionFile = "position.json"
)

// Position is where a checkpoint inside an epoch stands: everything
// besides the partitions and the engine state needed to continue from
// its bucket as if uninterrupted.
type Position struct {
	// Plan is a checksum of the Plan's buckets and loads: a checkpoint
	// resumes only with the Plan it was taken with.
	Plan uint64 `json:"plan"`
	// Epoch is the epoch in progress, Bucket how many of its buckets are
	// done and Loads how many of the Plan's loads.
	Epoch  int `json:"epoch"`
	Bucket int `json:"bucket"`
	Loads  int `json:"loads"`
	// Slots is the partition in every buffer slot (-1: empty).
	Slots []int `json:"slots"`
	// Counts are the loads, swaps and writes performed so far.
	Counts orderings.Counts `json:"counts"`
	// Loss is the epoch's summed loss so far.
	Loss float64 `json:"loss"`
	// RNG is the state of the epoch's random generator (PCG).
	RNG []byte `json:"rng"`
	// Lock, for a checkpoint several trainers took (realrun/dist), is
	// the lock server's state of the epoch then: the buckets trained,
	// none held. Such a position has no Plan, loads or slots.
	Lock *lockserver.State `json:"lock,omitempty"`
}

// planSum identifies a Plan by its bucket order and load schedule.
func planSum(plan *orderings.Plan) uint64 {
	data, _ := json.Marshal(struct {
		B any
		L any
	}{plan.Buckets, plan.Loads})
	return store.Checksum(data)
}

// Check reports whether pos can resume epoch at bucket with plan: the
// Plan it was taken with, the position the work directory records, and
// inside the Plan.
func (pos *Position) Check(plan *orderings.Plan, epoch, bucket int) error {
	switch {
	case pos.Lock != nil:
		return fmt.Errorf("the checkpoint inside epoch %d was taken by several trainers, whose buckets follow no Plan; resume it with {Distributed}", pos.Epoch)
	case pos.Plan != planSum(plan):
		return fmt.Errorf("the checkpoint inside epoch %d was taken with another Plan (ordering, p, c, policy or seed differ); resume with the same flags", pos.Epoch)
	case pos.Epoch != epoch || pos.Bucket != bucket:
		return fmt.Errorf("checkpoint position epoch %d bucket %d, resuming epoch %d, the work directory says bucket %d", pos.Epoch, pos.Bucket, epoch, bucket)
	case pos.Bucket < 1 || pos.Bucket >= len(plan.Buckets) || pos.Loads < 0 || pos.Loads > len(plan.Loads):
		return fmt.Errorf("checkpoint position bucket %d, load %d outside the Plan", pos.Bucket, pos.Loads)
	}
	return nil
}

// engineState is the engine's part of a checkpoint.
func engineState(eng Compute) (map[string][]byte, error) {
	extra := map[string][]byte{}
	if sf, ok := eng.(Stateful); ok {
		st := sf.State()
		b := make([]byte, 4*len(st))
		for i, x := range st {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		extra[StateFile] = b
	}
	return extra, nil
}

// checkpointInside commits a checkpoint after pos.Bucket buckets of the
// epoch: with the loader held back and every write-back on disk, resident
// partitions trained since loaded are written, every other partition is
// linked from where its latest copy is, and the engine state and position
// go beside them. Training waits for it; its cost is returned.
func checkpointInside(st *store.Store, bm *bufferManager, eng Compute, base int, pos Position) (CheckpointCost, error) {
	t0 := bm.since()
	if err := bm.quiesce(); err != nil {
		return CheckpointCost{}, err
	}
	cost := CheckpointCost{Bucket: pos.Bucket}
	e := base
	dir, err := st.Begin(e, pos.Bucket)
	if err != nil {
		return cost, err
	}
	sums := map[int]uint64{}
	for p := 0; p < st.M.P; p++ {
		switch s := bm.where[p]; {
		case s != orderings.None && bm.dirty[p]:
			start := bm.since()
			n, err := store.WritePartitionIn(dir, p, bm.slots[s])
			bm.record(IOEvent{Kind: "checkpoint", Partition: p, Slot: s, Start: start, End: bm.since(), Bytes: n})
			if err != nil {
				return cost, err
			}
			sums[p] = store.Checksum(bm.slots[s].Bytes())
			cost.Bytes += n
			cost.Partitions++
		case bm.saved[p]:
			if err := store.Link(bm.to, dir, p); err != nil {
				return cost, err
			}
			sums[p] = bm.checksums[p]
		default:
			if err := store.Link(bm.from, dir, p); err != nil {
				return cost, err
			}
			sums[p] = bm.fromSums[p]
		}
	}
	if bm.res != nil {
		// The resident table is trained by nearly every bucket: written
		// with every checkpoint.
		n, sum, err := bm.writeResident(dir, "checkpoint")
		if err != nil {
			return cost, err
		}
		sums[store.ResidentPart] = sum
		cost.Bytes += n
	}
	pos.Loads, pos.Slots, pos.Counts = bm.loadsDone, bm.slotPartitions(), bm.counts
	extra, err := engineState(eng)
	if err != nil {
		return cost, err
	}
	if extra[PositionFile], err = json.Marshal(pos); err != nil {
		return cost, err
	}
	for _, b := range extra {
		cost.Bytes += int64(len(b))
	}
	if err := st.Commit(e, pos.Bucket, sums, extra); err != nil {
		return cost, fmt.Errorf("checkpoint inside epoch %d: %w", pos.Epoch, err)
	}
	bm.checkpointed(dir, sums)
	cost.Seconds = bm.since() - t0
	return cost, nil
}

// epochSums are the checksums of the epoch's checkpoint; a partition not
// written since the last checkpoint is linked from it. The resident table
// (a typed store's) was written at the epoch's end (RunEpoch).
func epochSums(st *store.Store, bm *bufferManager) (map[int]uint64, error) {
	sums := map[int]uint64{}
	if bm.res != nil {
		sums[store.ResidentPart] = bm.resSum
	}
	for p := 0; p < st.M.P; p++ {
		if bm.saved[p] {
			sums[p] = bm.checksums[p]
			continue
		}
		if err := store.Link(bm.from, bm.to, p); err != nil {
			return nil, err
		}
		sums[p] = bm.fromSums[p]
	}
	return sums, nil
}

// Resume restores the engine's state from the store's current checkpoint
// after checking every partition and extra file against the checksums
// recorded when they were written (a torn or altered file is an error
// naming it), and returns the position inside an epoch the checkpoint
// was taken at (nil for an epoch checkpoint).
func Resume(st *store.Store, eng Compute) (*Position, error) {
	if st.Current == 0 && st.Bucket == 0 {
		return nil, nil
	}
	dir := st.CurrentDir()
	sums, err := st.PartitionSums(dir)
	if err != nil {
		return nil, err
	}
	buf, err := st.NewBuffer()
	if err != nil {
		return nil, err
	}
	defer buf.Free()
	for p := 0; p < st.M.P; p++ {
		if _, err := store.ReadPartitionChecked(dir, p, buf, sums[p]); err != nil {
			return nil, err
		}
	}
	if st.M.Resident > 0 {
		res, err := st.NewResidentBuffer()
		if err != nil {
			return nil, err
		}
		_, err = store.ReadPartitionChecked(dir, store.ResidentPart, res, sums[store.ResidentPart])
		res.Free()
		if err != nil {
			return nil, err
		}
	}
	if sf, ok := eng.(Stateful); ok {
		b, err := st.ReadExtra(StateFile)
		if err != nil {
			return nil, err
		}
		if err := sf.Restore(decodeState(b)); err != nil {
			return nil, err
		}
	}
	if st.Bucket == 0 {
		return nil, nil
	}
	data, err := st.ReadExtra(PositionFile)
	if err != nil {
		return nil, err
	}
	var pos Position
	if err := json.Unmarshal(data, &pos); err != nil {
		return nil, fmt.Errorf("checkpoint %s: %s: %w", dir, PositionFile, err)
	}
	return &pos, nil
}

// EngineState is the engine's part of a checkpoint (the extra files a
// checkpoint carries beside the partitions), for callers that commit a
// checkpoint themselves (the distributed run).
func EngineState(eng Compute) (map[string][]byte, error) { return engineState(eng) }

// decodeState reads a checkpoint's engine state file back as the float32s
// engineState wrote.
func decodeState(b []byte) []float32 {
	state := make([]float32, len(b)/4)
	for i := range state {
		state[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return state
}

// CheckpointRelations returns the relation embeddings of the store's
// current checkpoint (nil for a model without relations), without an
// engine: the initial ones for checkpoint 0, else the first half of the
// engine state file, which every engine lays out as the relation
// embeddings (relations × kind.RelWidth(d)) followed by their Adagrad
// state (the same size).
func CheckpointRelations(st *store.Store, kind workload.Model, seed int64) ([]float32, error) {
	if !kind.UsesRelations() {
		return nil, nil
	}
	w := kind.RelWidth(st.M.Dim)
	n := st.M.Relations * w
	if st.Current == 0 && st.Bucket == 0 {
		emb, _ := sample.InitRelations(kind, st.M.Relations, st.M.Dim, seed)
		return emb, nil
	}
	b, err := st.ReadExtra(StateFile)
	if err != nil {
		return nil, err
	}
	if len(b) != 2*4*n {
		return nil, fmt.Errorf("checkpoint %s: %s holds %d bytes, want %d relations × %d floats (%s, d=%d) and their Adagrad state (%d bytes)",
			st.CurrentDir(), StateFile, len(b), st.M.Relations, w, kind, st.M.Dim, 2*4*n)
	}
	return decodeState(b)[:n], nil
}
