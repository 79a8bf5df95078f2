package cuda

import (
	"runtime"
	"sync"
	"unsafe"

	"github.com/tierflow/tierflow/realrun/store"
)

// hostSide is --buffer host's bookkeeping on the host: for each of a
// batch's two tables, which compact row a partition row has in the batch
// being staged (stamp says which batch wrote local), and the goroutines
// that move rows between the partitions and the pinned stage.
type hostSide struct {
	stamp, local [2][]int32
	batch        int32
	movers       int
}

func newHostSide(rows int64, workers int) *hostSide {
	h := &hostSide{movers: min(max(workers, runtime.GOMAXPROCS(0)), 16)}
	for t := range h.stamp {
		h.stamp[t] = make([]int32, rows)
		h.local[t] = make([]int32, rows)
	}
	return h
}

// hostStage is one batch's compact tables (--buffer host): the distinct
// rows of the source (and destination) partition the batch touches, in
// compact order.
type hostStage struct {
	rows  [2][]int32
	same  bool
	bytes int64
}

// dedupe rewrites the indices of piece p (a whole batch, in buf: its
// chunk blocks of L int32s) from partition rows to compact rows, and returns the
// batch's compact tables: table 0 the source partition's rows (every row
// when same), table 1 the destination's. The producer calls it, so that it
// overlaps the GPU.
func (h *hostSide) dedupe(p piece, buf []int32, nc, m, L int, same bool) *hostStage {
	h.batch++
	if h.batch <= 0 { // wrapped: forget every stamp
		for t := range h.stamp {
			clear(h.stamp[t])
		}
		h.batch = 1
	}
	hs := &hostStage{same: same}
	use := func(t int, r int32) int32 {
		if same {
			t = 0
		}
		if h.stamp[t][r] == h.batch {
			return h.local[t][r]
		}
		l := int32(len(hs.rows[t]))
		h.stamp[t][r], h.local[t][r] = h.batch, l
		hs.rows[t] = append(hs.rows[t], r)
		return l
	}
	for c := 0; c < p.chunks; c++ {
		n := nc
		if c == p.chunks-1 {
			n = p.last
		}
		ci := buf[c*L+1 : (c+1)*L] // after the chunk's count
		for i := 0; i < n; i++ {
			ci[i] = use(0, ci[i])
			ci[nc+i] = use(1, ci[nc+i])
		}
		neg, sel := ci[3*nc:3*nc+m], ci[3*nc+m:3*nc+2*m]
		for k := range neg {
			neg[k] = use(int(sel[k]), neg[k])
			if same {
				sel[k] = 0
			}
		}
	}
	return hs
}

// tables are the indices of hs's compact tables: 0 alone when the batch's
// two partitions are one.
func (hs *hostStage) tables() []int {
	if hs.same {
		return []int{0}
	}
	return []int{0, 1}
}

// hostTables are batch hs's compact tables on the GPU: each table's rows,
// then their Adagrad state.
func (e *Engine) hostTables(hs *hostStage) tables {
	d := int64(e.d)
	n0, n1 := int64(len(hs.rows[0])), int64(len(hs.rows[1]))
	t := tables{embA: e.compact[0].p, stateA: e.compact[0].at(n0 * d), rowsA: n0,
		embB: e.compact[1].p, stateB: e.compact[1].at(n1 * d), rowsB: n1, same: hs.same}
	if hs.same {
		t.embB, t.stateB, t.rowsB = t.embA, t.stateA, t.rowsA
	}
	return t
}

// stageRows gathers the rows of batch hs from the host partitions into the
// pinned stage (embeddings, then Adagrad state, per table) and ships them
// to the GPU's compact tables (hostTables).
func (e *Engine) stageRows(hs *hostStage, src, dst *store.Buffer) error {
	d := int64(e.d)
	parts := [2]*store.Buffer{src, dst}
	if err := e.g.record(evStageStart, computeStream); err != nil {
		return err
	}
	for _, k := range hs.tables() {
		n := int64(len(hs.rows[k]))
		if n == 0 {
			continue
		}
		e.moveRows(hs, k, parts[k], true)
		if err := e.g.htod(e.compact[k].p, unsafe.Pointer(&e.stage.floats()[int64(k)*2*e.capRows*d]), 4*2*n*d, computeStream); err != nil {
			return err
		}
		hs.bytes += 4 * 2 * n * d
	}
	if err := e.g.record(evStageEnd, computeStream); err != nil {
		return err
	}
	e.count(hs.bytes, 0)
	return nil
}

// unstageRows copies the trained compact rows and state back into the
// host partitions, once the batch's kernels are done.
func (e *Engine) unstageRows(hs *hostStage, src, dst *store.Buffer) error {
	d := int64(e.d)
	stage := e.stage.floats()
	if err := e.g.record(evUnstageStart, computeStream); err != nil {
		return err
	}
	for _, k := range hs.tables() {
		n := int64(len(hs.rows[k]))
		if n == 0 {
			continue
		}
		emb := stage[int64(k)*2*e.capRows*d:]
		if err := e.g.dtoh(unsafe.Pointer(&emb[0]), e.compact[k].p, 4*2*n*d, computeStream); err != nil {
			return err
		}
	}
	if err := e.g.record(evUnstageEnd, computeStream); err != nil {
		return err
	}
	if err := e.g.sync(computeStream); err != nil {
		return err
	}
	in, err := e.g.elapsed(evStageStart, evStageEnd)
	if err != nil {
		return err
	}
	out, err := e.g.elapsed(evUnstageStart, evUnstageEnd)
	if err != nil {
		return err
	}
	e.mu.Lock()
	e.stageSeconds += in + out
	e.mu.Unlock()
	e.count(0, hs.bytes)
	parts := [2]*store.Buffer{src, dst}
	for _, k := range hs.tables() {
		e.moveRows(hs, k, parts[k], false)
	}
	return nil
}

// moveRows copies table t's rows (embeddings, then Adagrad state) from the
// partition into the pinned stage (toStage) or back, split over the host
// side's movers when the batch is large enough to pay for them.
func (e *Engine) moveRows(hs *hostStage, t int, part *store.Buffer, toStage bool) {
	d := int64(e.d)
	rd := e.rows * d
	f := part.Floats()
	rows := hs.rows[t]
	n := int64(len(rows))
	emb := e.stage.floats()[int64(t)*2*e.capRows*d:]
	state := emb[n*d:]
	move := func(lo, hi int) {
		for j := lo; j < hi; j++ {
			r := int64(rows[j])
			se, ss := emb[int64(j)*d:int64(j+1)*d], state[int64(j)*d:int64(j+1)*d]
			pe, ps := f[r*d:(r+1)*d], f[rd+r*d:rd+(r+1)*d]
			if toStage {
				copy(se, pe)
				copy(ss, ps)
			} else {
				copy(pe, se)
				copy(ps, ss)
			}
		}
	}
	w := 1
	if e.host != nil {
		w = min(e.host.movers, len(rows)/1024)
	}
	if w <= 1 {
		move(0, len(rows))
		return
	}
	var wg sync.WaitGroup
	per := (len(rows) + w - 1) / w
	for lo := 0; lo < len(rows); lo += per {
		wg.Add(1)
		go func(lo, hi int) {
			defer wg.Done()
			move(lo, hi)
		}(lo, min(lo+per, len(rows)))
	}
	wg.Wait()
}
