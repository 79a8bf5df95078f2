package realrun

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/crc64"
	"math"
	"strconv"

	"github.com/tierflow/tierflow/realrun/store"
)

// Stateful engines keep state beside the partitions (relation
// embeddings) that a checkpoint must carry.
type Stateful interface {
	// State returns the engine's state to checkpoint.
	State() []float32
	// Restore sets the state back from a checkpoint.
	Restore(state []float32) error
}

// State implements Stateful: relation embeddings and their Adagrad state.
func (c *CPU) State() []float32 {
	return append(append([]float32(nil), c.rel.emb...), c.rel.state...)
}

// Restore implements Stateful.
func (c *CPU) Restore(state []float32) error {
	if len(state) != len(c.rel.emb)+len(c.rel.state) {
		return fmt.Errorf("checkpoint holds %d relation floats, the engine %d", len(state), len(c.rel.emb)+len(c.rel.state))
	}
	n := copy(c.rel.emb, state)
	copy(c.rel.state, state[n:])
	return nil
}

func checkpointExtra(eng Compute, sums map[int]uint64) (map[string][]byte, error) {
	extra := map[string][]byte{}
	strs := map[string]string{}
	for p, s := range sums {
		strs[strconv.Itoa(p)] = strconv.FormatUint(s, 16)
	}
	data, err := json.Marshal(strs)
	if err != nil {
		return nil, err
	}
	extra["checksums.json"] = data
	if sf, ok := eng.(Stateful); ok {
		st := sf.State()
		b := make([]byte, 4*len(st))
		for i, x := range st {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
		}
		extra["state.bin"] = b
	}
	return extra, nil
}

// Resume restores the engine's state from the store's current checkpoint
// and checks every partition against the checksum recorded when it was
// written; a torn or altered partition is an error.
func Resume(st *store.Store, eng Compute) error {
	if st.Current == 0 {
		return nil
	}
	data, err := st.ReadExtra("checksums.json")
	if err != nil {
		return err
	}
	var strs map[string]string
	if err := json.Unmarshal(data, &strs); err != nil {
		return fmt.Errorf("checkpoint %d: checksums: %w", st.Current, err)
	}
	buf, err := st.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	table := crc64.MakeTable(crc64.ECMA)
	for p := 0; p < st.M.P; p++ {
		want, err := strconv.ParseUint(strs[strconv.Itoa(p)], 16, 64)
		if err != nil {
			return fmt.Errorf("checkpoint %d: no checksum for partition %d", st.Current, p)
		}
		if _, err := st.ReadPartition(p, buf); err != nil {
			return err
		}
		if got := crc64.Checksum(buf.Bytes(), table); got != want {
			return fmt.Errorf("checkpoint %d: partition %d is torn (checksum %x, recorded %x)", st.Current, p, got, want)
		}
	}
	if sf, ok := eng.(Stateful); ok {
		b, err := st.ReadExtra("state.bin")
		if err != nil {
			return err
		}
		state := make([]float32, len(b)/4)
		for i := range state {
			state[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
		}
		return sf.Restore(state)
	}
	return nil
}
