package cuda

// The engine's memory: device buffers, pinned host memory and their allocation (allocAll).

import (
	"fmt"
	"unsafe"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/sample"
	"github.com/tierflow/tierflow/realrun/store"
)

// accum is one table's side of a step (the Acc of kernels/train.cu): the
// gradient accumulator (rule sum), the touched-row flags and list, and
// for rule each the head of every row's list of occurrences and each
// occurrence slot's successor.
type accum struct {
	acc, flag, list, head, next dev
	rows                        int64
}

// newAccum allocates the accumulator side of a table of rows rows of
// width floats whose steps see at most slots occurrences (rule each).
func (e *Engine) newAccum(rows, width, slots int64) (accum, error) {
	a := accum{rows: rows}
	for _, x := range []struct {
		p    *dev
		n    int64
		fill uint32
	}{{&a.acc, rows * width, 0}, {&a.flag, rows, 0}, {&a.list, rows, 0}, {&a.head, rows, 0xffffffff}, {&a.next, slots, 0}} {
		var err error
		if *x.p, err = e.alloc(4 * x.n); err != nil {
			return a, err
		}
		if err = e.g.memset32(x.p.p, x.fill, x.n, computeStream); err != nil {
			return a, err
		}
	}
	return a, e.g.sync(computeStream)
}

// words is a's Acc as the kernels read it (five pointers).
func (a accum) words() []uint64 {
	return []uint64{uint64(a.acc.p), uint64(a.flag.p), uint64(a.list.p), uint64(a.head.p), uint64(a.next.p)}
}

// tables are the embedding tables a bucket trains: sources (A) and
// destinations (B), each rows×d embeddings followed by their Adagrad
// state; same when the bucket's two partitions are one table.
type tables struct {
	embA, stateA, embB, stateB ptr
	rowsA, rowsB               int64
	same                       bool
}

// dev is device memory of n bytes.
type dev struct {
	p ptr
	n int64
}

// at is the address of the float32 or int32 element i.
func (d dev) at(i int64) ptr { return d.p + ptr(4*i) }

// ptrs are pointers to each element of xs.
func ptrs[T any](xs []T) []*T {
	out := make([]*T, len(xs))
	for i := range xs {
		out[i] = &xs[i]
	}
	return out
}

// pinned is page-locked host memory.
type pinned struct {
	p unsafe.Pointer
	n int64
}

func (h pinned) int32s() []int32   { return unsafe.Slice((*int32)(h.p), h.n/4) }
func (h pinned) floats() []float32 { return unsafe.Slice((*float32)(h.p), h.n/4) }

func (e *Engine) alloc(n int64) (dev, error) {
	n = max(n, 4)
	p, err := e.g.alloc(n)
	if err != nil {
		return dev{}, fmt.Errorf("GPU memory, %d bytes: %w", n, err)
	}
	d := dev{p: p, n: n}
	e.allocs = append(e.allocs, d)
	return d, nil
}

func (e *Engine) allocPinned(n int64) (pinned, error) {
	p, err := e.g.hostAlloc(n)
	if err != nil {
		return pinned{}, fmt.Errorf("pinned host memory, %d bytes: %w", n, err)
	}
	return pinned{p: p, n: n}, nil
}

func (e *Engine) allocAll(st *store.Store, o realrun.EngineOptions) error {
	var err error
	d := int64(e.d)
	b := int64(e.h.Batch)
	m := int64(e.h.Negatives)
	nc := int64(e.chunk)
	negs := int64(e.maxChunks) * m
	slots := 2*nc + m // occurrence slots of one chunk in a table (rule each)
	e.nrel = int64(st.M.Relations)
	e.relW = int64(e.h.Model.RelWidth(e.d))
	if e.h.Model.UsesRelations() {
		if e.rel, err = e.alloc(4 * e.nrel * e.relW); err != nil {
			return err
		}
		if e.relState, err = e.alloc(4 * e.nrel * e.relW); err != nil {
			return err
		}
		// Relations start as every engine starts them (same seed, same rule).
		emb, state := sample.InitRelations(e.h.Model, st.M.Relations, e.h.Dim, o.Seed)
		if int64(len(emb)) != e.nrel*e.relW {
			return fmt.Errorf("relation rows: initialised %d floats, want %d relations of %d (%s, d=%d)",
				len(emb), e.nrel, e.relW, e.h.Model, e.d)
		}
		if err := e.restore(append(emb, state...)); err != nil {
			return err
		}
		if e.acc[2], err = e.newAccum(e.nrel, e.relW, nc); err != nil {
			return err
		}
	}
	rows := e.rows
	if e.mode == realrun.BufferHost {
		e.capRows = b + negs
		rows = e.capRows
		for i := range e.compact {
			if e.compact[i], err = e.alloc(2 * 4 * rows * d); err != nil {
				return err
			}
		}
		if e.stage, err = e.allocPinned(2 * 2 * 4 * rows * d); err != nil {
			return err
		}
		e.host = newHostSide(e.rows, e.h.Workers)
	} else {
		for i := 0; i < o.C; i++ {
			s, err := e.alloc(e.pbytes)
			if err != nil {
				return fmt.Errorf("partition slot %d of %d: %w", i+1, o.C, err)
			}
			e.slotMem = append(e.slotMem, s)
		}
	}
	for t := 0; t < 2; t++ {
		if e.acc[t], err = e.newAccum(rows, d, slots); err != nil {
			return err
		}
	}
	words := append(append(e.acc[0].words(), e.acc[1].words()...), e.acc[2].words()...)
	if e.accs, err = e.alloc(8 * int64(len(words))); err != nil {
		return err
	}
	if err := e.g.htod(e.accs.p, unsafe.Pointer(&words[0]), 8*int64(len(words)), computeStream); err != nil {
		return err
	}
	if err := e.g.sync(computeStream); err != nil {
		return err
	}
	G := int64(e.maxGroup)
	gR := nc * e.relW // rule each's per-occurrence relation gradients (rule sum adds into the accumulator)
	if e.rule != ruleEach {
		gR = 0
	}
	for _, x := range []struct {
		p *dev
		n int64
	}{{&e.Q, G * 2 * nc * d}, {&e.gQ, G * 2 * nc * d}, {&e.N, G * m * d}, {&e.gN, G * m * d},
		{&e.T, G * 2 * nc * m}, {&e.pos, G * 2 * nc}, {&e.gp, G * 2 * nc}, {&e.gR, gR},
		{&e.qn, G * 2 * nc}, {&e.aq, G * 2 * nc}, {&e.nn, G * m}, {&e.bn, G * m},
		{&e.loss, 2 * lossParts}, {&e.counts, 4}} {
		if *x.p, err = e.alloc(4 * x.n); err != nil {
			return err
		}
	}
	if err := e.g.memset32(e.counts.p, 0, 4, computeStream); err != nil {
		return err
	}
	slot := pieceInts + int64(e.pieceChunks)*int64(e.L)
	for j := range e.idx {
		if e.idx[j], err = e.alloc(4 * slot); err != nil {
			return err
		}
		if e.idxHost[j], err = e.allocPinned(4 * slot); err != nil {
			return err
		}
	}
	return e.g.sync(computeStream)
}

// pin registers a host partition buffer as page-locked memory once, so
// that its copies run at full PCIe speed (disk → pinned host → GPU).
func (e *Engine) pin(buf *store.Buffer) {
	b := buf.Bytes()
	key := unsafe.Pointer(unsafe.SliceData(b))
	if _, ok := e.regd[key]; ok {
		return
	}
	err := e.g.register(b)
	if err != nil {
		// A buffer freed while registered (a failed epoch) leaves its
		// address registered: drop the old registration and retry.
		e.g.unregister(b)
		err = e.g.register(b)
	}
	if err == nil {
		e.regd[key] = b
	} // else: the copy runs from pageable memory (slower, still correct)
}

func (e *Engine) unregisterAll() {
	for k, b := range e.regd {
		e.g.unregister(b)
		delete(e.regd, k)
	}
}
