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
// in the error ("evaluation") and flag the flag that raises the budget
// ("--eval-memory"); what describes the working set.
func Budget(st *store.Store, memory, working int64, who, what, flag string) (nbuf int, used int64, err error) {
	part := st.M.PartitionBytes
	if working+part > memory {
		return 0, 0, inputerr.Errorf("%s memory budget %s cannot hold one partition (%s) plus the working set (%s: %s); raise %s to at least %s",
			who, mb(memory), mb(part), what, mb(working), flag, mb(working+part))
	}
	n := min(2, int64(st.M.P), (memory-working)/part)
	return int(n), working + n*part, nil
}

// Stream reads the given partitions of the store's current checkpoint
// (the one it views: store.View) in order, each checked against its
// checksum, through nbuf buffers (with two, the next is read while fn
// works on the one before), and calls fn with each partition's embeddings
// (its rows·d floats, not its Adagrad state). Once stop (nil: never)
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
	full := make(chan loaded, nbuf)
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(full)
		for _, p := range parts {
			var b *store.Buffer
			select {
			case b = <-free:
			case <-quit:
				return
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
		lo := int64(l.p) * st.M.Rows
		n := min(st.M.Rows, st.M.Nodes-lo)
		if err := fn(l.p, l.buf.Floats()[:max(n, 0)*d]); err != nil {
			return err
		}
		free <- l.buf
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
// buffers (Stream, stop included).
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
		if p := int(int64(v) / st.M.Rows); len(parts) == 0 || parts[len(parts)-1] != p {
			parts = append(parts, p)
		}
	}
	at := 0
	err := Stream(st, parts, nbuf, stop, progress, func(p int, emb []float32) error {
		lo := int64(p) * st.M.Rows
		for ; at < len(nodes) && int64(nodes[at])/st.M.Rows == int64(p); at++ {
			o := (int64(nodes[at]) - lo) * int64(d)
			copy(g.data[at*d:(at+1)*d], emb[o:o+int64(d)])
		}
		return nil
	})
	return g, err
}
