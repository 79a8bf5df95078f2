package cuda

// What the engine keeps: relation tables (State, Restore), partitions in GPU slots (Install, Evict).

import (
	"fmt"
	"time"
	"unsafe"

	"github.com/tierflow/tierflow/report"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
)

// Relations implements realrun.Engine: the relation embeddings, copied
// from the GPU.
func (e *Engine) Relations() []float32 {
	st := e.State()
	if st == nil {
		return nil
	}
	return st[:len(st)/2]
}

// State implements realrun.Stateful: relation embeddings and Adagrad state.
func (e *Engine) State() []float32 {
	if !e.h.Model.UsesRelations() {
		return nil
	}
	done, err := e.bind()
	if err != nil {
		return nil
	}
	defer done()
	n := e.nrel * e.relW
	out := make([]float32, 2*n)
	if e.g.dtoh(unsafe.Pointer(&out[0]), e.rel.p, 4*n, computeStream) != nil ||
		e.g.dtoh(unsafe.Pointer(&out[n]), e.relState.p, 4*n, computeStream) != nil ||
		e.g.sync(computeStream) != nil {
		return nil
	}
	return out
}

// Restore implements realrun.Stateful.
func (e *Engine) Restore(state []float32) error {
	done, err := e.bind()
	if err != nil {
		return err
	}
	defer done()
	return e.restore(state)
}

func (e *Engine) restore(state []float32) error {
	n := e.nrel * e.relW
	if !e.h.Model.UsesRelations() {
		if len(state) != 0 {
			return fmt.Errorf("checkpoint holds %d relation floats, the engine 0", len(state))
		}
		return nil
	}
	if int64(len(state)) != 2*n {
		return fmt.Errorf("checkpoint holds %d relation floats, the engine %d", len(state), 2*n)
	}
	if err := e.g.htod(e.rel.p, unsafe.Pointer(&state[0]), 4*n, computeStream); err != nil {
		return err
	}
	if err := e.g.htod(e.relState.p, unsafe.Pointer(&state[n]), 4*n, computeStream); err != nil {
		return err
	}
	return e.g.sync(computeStream)
}

// Install implements realrun.SlotResident: partition part, just read into
// buf, moves to GPU slot slot.
func (e *Engine) Install(slot, part int, buf *store.Buffer) error {
	return e.slotCopy(slot, part, buf, true)
}

// Evict implements realrun.SlotResident: partition part's trained rows
// and state come back from GPU slot slot into buf for the writer.
func (e *Engine) Evict(slot, part int, buf *store.Buffer) error {
	return e.slotCopy(slot, part, buf, false)
}

// slotCopy moves a whole partition between a host buffer and a GPU slot
// on the copy stream, so that it overlaps training.
func (e *Engine) slotCopy(slot, part int, buf *store.Buffer, install bool) error {
	if e.mode != realrun.BufferGPU {
		return nil
	}
	what := fmt.Sprintf("evict partition %d from GPU slot %d", part, slot)
	if install {
		what = fmt.Sprintf("install partition %d in GPU slot %d", part, slot)
	}
	done, err := e.bind()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer done()
	e.mu.Lock()
	if s, ok := e.where[part]; !install && (!ok || s != slot) {
		e.mu.Unlock()
		return fmt.Errorf("%s: the slot holds another partition", what)
	}
	e.pin(buf)
	e.mu.Unlock()
	b := buf.Bytes()
	n := int64(len(b))
	start := time.Since(e.t0).Seconds()
	if install {
		err = e.g.htod(e.slotMem[slot].p, unsafe.Pointer(&b[0]), n, copyStream)
	} else {
		err = e.g.dtoh(unsafe.Pointer(&b[0]), e.slotMem[slot].p, n, copyStream)
	}
	if err == nil {
		err = e.g.sync(copyStream)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.copySpans = append(e.copySpans, report.Interval{Start: start, End: time.Since(e.t0).Seconds()})
	if !install {
		e.d2h += n
		e.slotOut += n
		return nil
	}
	e.h2d += n
	e.slotIn += n
	for p, s := range e.where {
		if s == slot {
			delete(e.where, p)
		}
	}
	e.where[part] = slot
	return nil
}
