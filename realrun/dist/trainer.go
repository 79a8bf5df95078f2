package dist

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"time"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/report"
)

// TrainerEpoch is one trainer's figures for one epoch.
type TrainerEpoch struct {
	Trainer int `json:"trainer"`
	Epoch   int `json:"epoch"`
	// Engine is the engine the trainer trained with (its Name).
	Engine  string `json:"engine,omitempty"`
	Buckets int    `json:"buckets"`
	Edges   int64  `json:"edges"`
	// TrainSeconds is the time its engine trained; WaitBucketSeconds the
	// time the lock server had no bucket for it (occupancy); and
	// TransferSeconds the time it read and wrote partitions and edges and
	// talked to etcd. Seconds is its epoch, from its first request to its
	// last commit.
	TrainSeconds      float64 `json:"train_s"`
	WaitBucketSeconds float64 `json:"wait_bucket_s"`
	TransferSeconds   float64 `json:"transfer_s"`
	Seconds           float64 `json:"seconds"`
	// Loads and Saves are partitions read from and written to the shared
	// store; ReadBytes and WriteBytes their bytes, EdgeBytes the edges'.
	Loads      int     `json:"loads"`
	Saves      int     `json:"saves"`
	ReadBytes  int64   `json:"read_bytes"`
	WriteBytes int64   `json:"write_bytes"`
	EdgeBytes  int64   `json:"edge_bytes"`
	Loss       float64 `json:"loss"`
	// Lost counts its buckets whose commit failed (it lost its lease).
	Lost int `json:"lost,omitempty"`
	// Occupancy is TrainSeconds over Seconds.
	Occupancy float64 `json:"occupancy"`
	// Spans, when the run is traced (Config.Trace), are what the trainer
	// did, in Unix seconds: on track "train" its buckets, on "transfer"
	// their loads and saves (partitions, edges, the commit), on "wait
	// for bucket" its waits for the lock server.
	Spans []report.Span `json:"spans,omitempty"`
}

// The tracks of a trainer's spans.
const (
	TrackTrain    = "train"
	TrackTransfer = "transfer"
	TrackWait     = "wait for bucket"
)

// FilesDir is the directory of the shared store named name (RunState.Files):
// a new version of a partition is a new file, never written in place.
func FilesDir(st *store.Store, name string) string {
	return filepath.Join(st.Dir, "dist", name)
}

// DefaultSyncEdges is how many edges a trainer trains between exchanges
// of the shared relation parameters: a few batches' worth.
const DefaultSyncEdges = 2000

// Trainer is one trainer process's loop: PyTorch-BigGraph's trainer on
// tierflow's engine, its buckets from the lock server in etcd, its
// partitions through the shared store.
type Trainer struct {
	ID    int
	Store *store.Store
	// Blobs is where partitions and edges move (nil: the shared work
	// directory, DirBlobs).
	Blobs  Blobs
	Coord  *Coord
	Engine realrun.Engine
	Seed   int64
	// MaxOutage is how long etcd may be unreachable before the trainer
	// stops (0: 30 s).
	MaxOutage time.Duration
	// SyncEdges is how many edges it trains between exchanges of the
	// shared relation parameters (0: DefaultSyncEdges).
	SyncEdges int
	// Log receives one-line notices (nil: none).
	Log io.Writer
	// Trace records the spans of every epoch (TrainerEpoch.Spans).
	Trace bool

	cache map[int]cached
	cur   TrainerEpoch
	mark  time.Time
}

type cached struct {
	buf     *store.Buffer
	version int
}

// span records what the trainer did from from to to on track, when
// traced.
func (t *Trainer) span(track, name string, from, to time.Time, args map[string]any) {
	if t.Trace {
		t.cur.Spans = append(t.cur.Spans, report.Span{Track: track, Name: name, Start: unix(from), End: unix(to), Args: args})
	}
}

// unix is t in Unix seconds.
func unix(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }

func (t *Trainer) logf(format string, a ...any) {
	if t.Log != nil {
		fmt.Fprintf(t.Log, "trainer %d: "+format+"\n", append([]any{t.ID}, a...)...)
	}
}

// retry runs op until it succeeds, waiting out an etcd outage up to
// MaxOutage; ErrLostBucket and errors that are not etcd's end it at once.
func (t *Trainer) retry(ctx context.Context, what string, op func(ctx context.Context) error) error {
	limit := t.MaxOutage
	if limit == 0 {
		limit = 30 * time.Second
	}
	start := time.Now()
	for {
		octx, cancel := context.WithTimeout(ctx, t.Coord.OpTimeout)
		err := op(octx)
		cancel()
		if err == nil || errors.Is(err, ErrLostBucket) || ctx.Err() != nil {
			return err
		}
		if time.Since(start) > limit {
			return fmt.Errorf("%s: etcd unreachable for %s, stopping (the store holds every committed bucket; start the trainer again to rejoin): %w", what, limit, err)
		}
		t.logf("%s: %v; retrying", what, err)
		time.Sleep(500 * time.Millisecond)
	}
}

// Run trains until the run is done and returns the figures of every epoch
// it took part in.
func (t *Trainer) Run(ctx context.Context) ([]TrainerEpoch, error) {
	if err := CheckUntyped(t.Store); err != nil {
		return nil, err
	}
	t.cache = map[int]cached{}
	if t.Blobs == nil {
		t.Blobs = DirBlobs(t.Store)
	}
	defer func() {
		for _, c := range t.cache {
			c.buf.Free()
		}
	}()
	var out []TrainerEpoch
	last := lockserver.None
	t.cur = TrainerEpoch{Trainer: t.ID, Epoch: 0}
	var start time.Time
	waiting, reported := false, false
	// waitName names the wait: for a bucket, or for the launcher's
	// checkpoint inside the epoch (the lock server paused).
	waitName := ""
	var waitFrom time.Time
	for {
		var b orderings.Bucket
		var ok bool
		var st RunState
		if err := t.retry(ctx, "acquire", func(ctx context.Context) (err error) {
			b, ok, st, err = t.Coord.Acquire(ctx, last)
			return err
		}); err != nil {
			return out, err
		}
		// An epoch's figures are reported when the next one starts, or
		// when the run is held after it (its launcher evaluates it).
		if t.cur.Epoch > 0 && !reported && (st.Epoch != t.cur.Epoch || st.Held()) {
			if waiting {
				t.cur.WaitBucketSeconds += time.Since(waitFrom).Seconds()
				t.span(TrackWait, waitName, waitFrom, time.Now(), nil)
				waiting = false
			}
			t.cur.Seconds = time.Since(start).Seconds()
			if t.cur.Seconds > 0 {
				t.cur.Occupancy = t.cur.TrainSeconds / t.cur.Seconds
			}
			out = append(out, t.cur)
			cur := t.cur
			if err := t.retry(ctx, "report", func(ctx context.Context) error { return t.Coord.PutReport(ctx, cur.Epoch, cur) }); err != nil {
				return out, err
			}
			reported = true
		}
		if st.Epoch != t.cur.Epoch {
			// Epochs the others trained while this trainer waited get
			// an empty report of it too.
			for e := t.cur.Epoch + 1; t.cur.Epoch > 0 && e < st.Epoch && e <= st.Epochs; e++ {
				skipped := TrainerEpoch{Trainer: t.ID, Epoch: e}
				out = append(out, skipped)
				if err := t.retry(ctx, "report", func(ctx context.Context) error { return t.Coord.PutReport(ctx, e, skipped) }); err != nil {
					return out, err
				}
			}
			t.cur = TrainerEpoch{Trainer: t.ID, Epoch: st.Epoch, Engine: t.Engine.Name()}
			start = time.Now()
			last = lockserver.None
			waiting, reported = false, false
			if !ok && !st.Done() && !st.Held() {
				continue // the epoch just began: ask at once
			}
		}
		if st.Done() {
			return out, nil
		}
		if !ok {
			if !waiting {
				waiting, waitFrom, waitName = true, time.Now(), "wait for a bucket"
			}
			if st.Pause {
				waitName = "wait for a bucket: paused for a checkpoint"
			}
			_, rev, err := t.Coord.State(ctx)
			if err == nil {
				t.Coord.Wait(ctx, rev, time.Second)
			} else {
				time.Sleep(200 * time.Millisecond)
			}
			continue
		}
		if waiting {
			t.cur.WaitBucketSeconds += time.Since(waitFrom).Seconds()
			t.span(TrackWait, waitName, waitFrom, time.Now(), nil)
			waiting = false
		}
		if err := t.bucket(ctx, b, st); errors.Is(err, ErrLostBucket) {
			t.logf("%v", err)
			t.cur.Lost++
			t.dropCache()
			continue
		} else if err != nil {
			return out, err
		}
		last = b
	}
}

func (t *Trainer) dropCache() {
	for p, c := range t.cache {
		c.buf.Free()
		delete(t.cache, p)
	}
}

// partition returns partition p at the committed version, from the cache
// when this trainer wrote that version last, else read and verified.
func (t *Trainer) partition(p int, st RunState) (*store.Buffer, error) {
	if c, ok := t.cache[p]; ok && c.version == st.Versions[p] {
		return c.buf, nil
	}
	if c, ok := t.cache[p]; ok {
		c.buf.Free()
		delete(t.cache, p)
	}
	buf, err := t.Store.NewBuffer()
	if err != nil {
		return nil, err
	}
	n, err := t.Blobs.ReadPartition(st.Files[p], p, buf)
	if err == nil {
		err = store.CheckSum(store.PartitionIn(FilesDir(t.Store, st.Files[p]), p), buf.Bytes(), st.Sums[p])
	}
	if err != nil {
		buf.Free()
		return nil, fmt.Errorf("partition %d version %d: %w", p, st.Versions[p], err)
	}
	t.cur.Loads++
	t.cur.ReadBytes += n
	t.cache[p] = cached{buf: buf, version: st.Versions[p]}
	return buf, nil
}

// bucket trains bucket b: loads its partitions and edges, trains them
// with the shared relation parameters, writes both partitions as new
// versions and commits them with the bucket's release in one transaction.
func (t *Trainer) bucket(ctx context.Context, b orderings.Bucket, st RunState) error {
	t0 := time.Now()
	read0, written0 := t.cur.ReadBytes, t.cur.WriteBytes
	parts := []int{b.Src}
	if b.Dst != b.Src {
		parts = append(parts, b.Dst)
	}
	// Keep only this bucket's partitions cached.
	for p, c := range t.cache {
		if p != b.Src && p != b.Dst {
			c.buf.Free()
			delete(t.cache, p)
		}
	}
	src, err := t.partition(b.Src, st)
	if err != nil {
		return err
	}
	dst := src
	if b.Dst != b.Src {
		if dst, err = t.partition(b.Dst, st); err != nil {
			return err
		}
	}
	edges, eb, err := t.Blobs.ReadBucket(b.Src, b.Dst)
	if err != nil {
		return err
	}
	t.cur.EdgeBytes += eb
	// The shared parameters (relation embeddings and their Adagrad sums:
	// both add up over updates) as the parameter server has them now.
	i := b.Src*st.Lock.P + b.Dst
	rng := rand.New(rand.NewPCG(uint64(t.Seed), uint64(st.Epoch)<<32|uint64(i)))
	// The shared parameters (relation embeddings and their Adagrad sums:
	// both add up over updates) are pulled from the parameter server
	// before every SyncEdges edges and the update pushed after them, so
	// that trainers training at once see each other's relation updates
	// within a bucket, as PBG's background sync lets them.
	sf, shares := t.Engine.(realrun.Stateful)
	shares = shares && len(t.Engine.Relations()) > 0
	every := len(edges)
	if shares {
		every = t.SyncEdges
		if every <= 0 {
			every = DefaultSyncEdges
		}
	}
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	// An engine that keeps its partition slots in its own memory (the
	// CUDA engine's GPU slots) gets the bucket's partitions installed in
	// slots 0 and 1 and gives them back trained.
	sr, resident := t.Engine.(realrun.SlotResident)
	if resident {
		for k, p := range parts {
			if err := sr.Install(k, p, t.cache[p].buf); err != nil {
				return err
			}
		}
	}
	t1 := time.Now()
	var loss float64
	for lo := 0; lo < len(edges) || lo == 0; lo += every {
		part := edges[lo:min(lo+every, len(edges))]
		var before []float32
		if shares {
			var shared []float32
			if err := t.retry(ctx, "relations", func(ctx context.Context) (err error) { shared, err = t.Coord.Relations(ctx); return err }); err != nil {
				return err
			}
			if shared != nil {
				if err := sf.Restore(shared); err != nil {
					return fmt.Errorf("shared relations: %w", err)
				}
			}
			before = sf.State()
		}
		l, err := t.Engine.TrainBucket(part, b.Src, src, b.Dst, dst, rng)
		if err != nil {
			return err
		}
		loss += l
		if shares {
			after := sf.State()
			delta := make([]float32, len(after))
			for k := range after {
				delta[k] = after[k] - before[k]
			}
			if err := t.retry(ctx, "relations", func(ctx context.Context) error { return t.Coord.AddRelations(ctx, before, delta) }); err != nil {
				return err
			}
		}
		if len(edges) == 0 {
			break
		}
	}
	if resident {
		for k, p := range parts {
			if err := sr.Evict(k, p, t.cache[p].buf); err != nil {
				return err
			}
		}
	}
	t2 := time.Now()
	t.cur.TrainSeconds += t2.Sub(t1).Seconds()
	t.cur.Loss += loss
	t.cur.Buckets++
	t.cur.Edges += int64(len(edges))
	versions, files, sums := map[int]int{}, map[int]string{}, map[int]uint64{}
	for _, p := range parts {
		v := st.Versions[p] + 1
		files[p] = t.Coord.Tag(p, v)
		buf := t.cache[p].buf
		n, err := t.Blobs.WritePartition(files[p], p, buf)
		if err != nil {
			return err
		}
		t.cur.Saves++
		t.cur.WriteBytes += n
		versions[p], sums[p] = v, store.Checksum(buf.Bytes())
	}
	if err := t.retry(ctx, "commit", func(ctx context.Context) error { return t.Coord.Commit(ctx, b, versions, files, sums) }); err != nil {
		for _, p := range parts {
			t.Blobs.RemovePartition(files[p], p) // never committed
		}
		return err
	}
	for _, p := range parts {
		t.cache[p] = cached{buf: t.cache[p].buf, version: versions[p]}
		if old := st.Files[p]; old != InitialFiles {
			t.Blobs.RemovePartition(old, p) // nobody reads a superseded version
		}
	}
	t3 := time.Now()
	t.cur.TransferSeconds += t1.Sub(t0).Seconds() + t3.Sub(t2).Seconds()
	name := fmt.Sprintf("bucket (%d,%d)", b.Src, b.Dst)
	t.span(TrackTransfer, "load "+name, t0, t1, map[string]any{"partitions": parts, "bytes": t.cur.ReadBytes - read0 + eb})
	t.span(TrackTrain, name, t1, t2, map[string]any{"edges": len(edges), "loss": loss, "epoch": st.Epoch})
	t.span(TrackTransfer, "save "+name+" and commit", t2, t3, map[string]any{"partitions": parts, "bytes": t.cur.WriteBytes - written0})
	return nil
}
