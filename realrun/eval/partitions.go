package eval

import (
	"fmt"
	"slices"
	"sync"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
)

// The rule by which a trained checkpoint is read out of core, in one
// place for evaluation, export and queries (realrun/query): a working set
// plus at least one partition buffer must fit the memory budget, and the
// partitions are streamed through at most two buffers (one read ahead
// while the other is used).

// Budget checks that the working set plus at least one partition buffer
// fits the memory budget and returns how many partition buffers do (at
// most two) and the memory planned for with them. who names the reader
// in the error ("evaluation") and flag what raises the budget (the field
// that sets it, "{EvalMemory}", or words); what describes the working
// set.
//
// A typed work directory's resident table (store.ResidentPart, the rows
// of its unpartitioned entity types) is streamed through a buffer of its
// own, counted in the working set here.
func Budget(st *store.Store, memory, working int64, who, what, flag string) (nbuf int, used int64, err error) {
	part := st.M.PartitionBytes
	if res := st.M.ResidentBytes(); res > 0 {
		working += res
		what += fmt.Sprintf(", and the resident table (%s)", mb(res))
	}
	if working+part > memory {
		return 0, 0, inputerr.Errorf("%s memory budget %s cannot hold one partition (%s) plus the working set (%s: %s); raise %s to at least %s",
			who, mb(memory), mb(part), what, mb(working), flag, mb(working+part))
	}
	n := min(2, int64(st.M.P), (memory-working)/part)
	return int(n), working + n*part, nil
}

// Span is the store nodes partition p holds: the first one and how many
// (rows past the last node of the last partition hold none).
// store.ResidentPart's are the resident nodes, [PartitionedNodes, Nodes).
func Span(m store.Manifest, p int) (lo, n int64) {
	if p == store.ResidentPart {
		return m.PartitionedNodes(), m.Resident
	}
	lo = int64(p) * m.Rows
	return lo, max(min(m.Rows, m.PartitionedNodes()-lo), 0)
}

// partOf is the partition holding store node v (store.ResidentPart for a
// resident one).
func partOf(m store.Manifest, v int64) int {
	if m.IsResident(v) {
		return store.ResidentPart
	}
	return int(v / m.Rows)
}

// AllParts are every partition of the store, 0 to P−1, then
// store.ResidentPart when it has resident nodes: what a reader of every
// node's embedding streams.
func AllParts(m store.Manifest) []int {
	all := make([]int, m.P, m.P+1)
	for p := range all {
		all[p] = p
	}
	if m.Resident > 0 {
		all = append(all, store.ResidentPart)
	}
	return all
}

// Stream reads the given partitions of the store's current checkpoint
// (the one it views: store.View) in order, each checked against its
// checksum, through nbuf buffers (with two, the next is read while fn
// works on the one before), and calls fn with each partition's embeddings
// (its rows·d floats, not its Adagrad state; Span says which nodes they
// are). store.ResidentPart among parts streams the resident table, read
// into a buffer of its own (Budget counts it). Once stop (nil: never)
// closes, it returns ErrStopped before the next partition. progress, if
// not nil, is called with the partitions done.
func Stream(st *store.Store, parts []int, nbuf int, stop <-chan struct{}, progress func(done, total int), fn func(p int, emb []float32) error) error {
	dir := st.CurrentDir()
	if progress == nil {
		progress = func(int, int) {}
	}
	sums, err := st.PartitionSums(dir)
	if err != nil {
		return err
	}
	nbuf = max(1, min(nbuf, len(parts)))
	type loaded struct {
		p   int
		buf *store.Buffer
		err error
	}
	free := make(chan *store.Buffer, nbuf)
	var all []*store.Buffer
	defer func() {
		for _, b := range all {
			b.Free()
		}
	}()
	for i := 0; i < nbuf; i++ {
		b, err := st.NewBuffer()
		if err != nil {
			return err
		}
		all = append(all, b)
		free <- b
	}
	var resident *store.Buffer
	if slices.Contains(parts, store.ResidentPart) {
		b, err := st.NewResidentBuffer()
		if err != nil {
			return err
		}
		all = append(all, b)
		resident = b
	}
	full := make(chan loaded, nbuf)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(full)
		for _, p := range parts {
			var b *store.Buffer
			if p == store.ResidentPart {
				b = resident
			} else {
				select {
				case b = <-free:
				case <-quit:
					return
				}
			}
			_, err := store.ReadPartitionChecked(dir, p, b, sums[p])
			full <- loaded{p, b, err}
			if err != nil {
				return
			}
		}
	}()
	defer func() { close(quit); wg.Wait() }()
	progress(0, len(parts))
	done := 0
	d := int64(st.M.Dim)
	for l := range full {
		if l.err != nil {
			return l.err
		}
		if realrun.Stopped(stop) {
			return ErrStopped
		}
		_, n := Span(st.M, l.p)
		if err := fn(l.p, l.buf.Floats()[:n*d]); err != nil {
			return err
		}
		if l.p != store.ResidentPart {
			free <- l.buf
		}
		done++
		progress(done, len(parts))
	}
	return nil
}

// Rows are embedding rows gathered from the partitions, by store node.
type Rows struct {
	index map[int32]int
	data  []float32
	d     int
}

// Row is node v's embedding (v must be one of the gathered nodes).
func (g *Rows) Row(v int32) []float32 {
	i := g.index[v]
	return g.data[i*g.d : (i+1)*g.d]
}

// rows is Rows under evaluation's name for it.
type rows = Rows

func (g *Rows) row(v int32) []float32 { return g.Row(v) }

// Gather reads the embedding rows of the given store nodes (repeats
// allowed; nodes is sorted in place) from the store's current checkpoint,
// streaming only the partitions that hold some of them through nbuf
// buffers (Stream, stop included), and the resident table when some are
// resident nodes.
func Gather(st *store.Store, nodes []int32, nbuf int, stop <-chan struct{}, progress func(done, total int)) (*Rows, error) {
	d := st.M.Dim
	slices.Sort(nodes)
	nodes = slices.Compact(nodes)
	g := &Rows{index: make(map[int32]int, len(nodes)), data: make([]float32, len(nodes)*d), d: d}
	var parts []int
	for i, v := range nodes {
		if v < 0 || int64(v) >= st.M.Nodes {
			return nil, fmt.Errorf("gather: node %d of %d", v, st.M.Nodes)
		}
		g.index[v] = i
		if p := partOf(st.M, int64(v)); p != store.ResidentPart && (len(parts) == 0 || parts[len(parts)-1] != p) {
			parts = append(parts, p)
		}
	}
	if len(nodes) > 0 && st.M.IsResident(int64(nodes[len(nodes)-1])) {
		parts = append(parts, store.ResidentPart) // the resident nodes sort last
	}
	at := 0
	err := Stream(st, parts, nbuf, stop, progress, func(p int, emb []float32) error {
		lo, _ := Span(st.M, p)
		for ; at < len(nodes) && partOf(st.M, int64(nodes[at])) == p; at++ {
			o := (int64(nodes[at]) - lo) * int64(d)
			copy(g.data[at*d:(at+1)*d], emb[o:o+int64(d)])
		}
		return nil
	})
	return g, err
}
