package dist

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/report"
)

// RunState is a distributed run's shared state, one etcd key changed only
// by compare-and-swap: the lock server's epoch state, and the committed
// version and checksum of every partition in the shared store.
type RunState struct {
	// Epochs is the number of epochs to train; Epoch the one in progress
	// (1-based; Epochs+1 once the run is done).
	Epochs int `json:"epochs"`
	Epoch  int `json:"epoch"`
	// Lock is the lock server's state for Epoch.
	Lock *lockserver.State `json:"lock"`
	// Versions, Files and Sums are, by partition, the committed version,
	// the store directory holding it (named by version and writer, so
	// that a trainer that lost its bucket can never overwrite a committed
	// file) and its CRC-32C.
	Versions []int    `json:"versions"`
	Files    []string `json:"files"`
	Sums     []uint64 `json:"sums"`
	// Lost counts buckets handed back to the pool because their trainer
	// died (its lease expired) before committing them.
	Lost int `json:"lost"`
	// Hold is the epoch after which the run waits, once every bucket of
	// it is trained, until its launcher has checkpointed and evaluated it
	// and lets the next one start (Release); 0: the epochs follow each
	// other at once.
	Hold int `json:"hold,omitempty"`
	// Pause stops the lock server handing out buckets: the launcher
	// checkpoints inside the epoch once the buckets in flight are
	// committed (Paused), then lifts it (Unpause).
	Pause bool `json:"pause,omitempty"`
	// PauseEvery, when positive, makes the commit of the bucket that
	// brings the buckets trained since the last checkpoint (PausedAt, in
	// Trained's count) to PauseEvery set Pause, so that no bucket goes
	// out before the launcher has checkpointed.
	PauseEvery int `json:"pause_every,omitempty"`
	PausedAt   int `json:"paused_at,omitempty"`
}

// Done reports whether every epoch is trained.
func (s RunState) Done() bool { return s.Epoch > s.Epochs }

// Held reports whether the run waits for its launcher: epoch Hold is
// trained, every bucket of it committed.
func (s RunState) Held() bool {
	return s.Hold > 0 && s.Epoch == s.Hold && !s.Done() && s.Lock.Remaining() == 0 && s.Lock.Active() == 0
}

// Paused reports whether the run is paused (Pause) with no bucket in
// flight: the committed partitions are those of the buckets done
// (Lock.Done), each trained once, and no other.
func (s RunState) Paused() bool {
	return s.Pause && !s.Done() && s.Lock.Active() == 0
}

// Trained is the number of buckets of the epoch trained and committed.
func (s RunState) Trained() int {
	return len(s.Lock.Done) - s.Lock.Remaining() - s.Lock.Active()
}

// advance starts the next epoch (or ends the run after the last), with
// the same bucket order.
func (s *RunState) advance() {
	s.Epoch++
	if !s.Done() {
		order := s.Lock.Order
		s.Lock, _ = lockserver.NewEpoch(s.Lock.P, false)
		s.Lock.Order = order
	}
	s.PausedAt = 0
}

// Config is what every trainer of a run needs besides the store: the
// training settings, written once by whoever starts the run.
type Config struct {
	Run     string          `json:"run"`
	Epochs  int             `json:"epochs"`
	Seed    int64           `json:"seed"`
	Hyper   json.RawMessage `json:"hyper"`
	Workers int             `json:"workers"`
	// First is the first epoch the run trains (0: 1; a resumed run's is
	// after its checkpoint's), Epochs the last; Hold makes the run wait
	// after every epoch for its launcher (RunState.Hold).
	First int  `json:"first,omitempty"`
	Hold  bool `json:"hold,omitempty"`
	// Objects is the object store partitions and edges move through
	// (nil: the shared work directory); each trainer reaches it with
	// credentials of its own.
	Objects *ObjectStore `json:"objects,omitempty"`
	// Engine and Buffer are the trainers' engine and, for the CUDA
	// engine, where its partition slots live (realrun.EngineOptions;
	// "": the CPU engine).
	Engine string `json:"engine,omitempty"`
	Buffer string `json:"buffer,omitempty"`
	// Trace makes the trainers report the spans of their epochs (when
	// they trained, transferred and waited) with their figures.
	Trace bool `json:"trace,omitempty"`
	// Order, if set, is the priority of the buckets: the lock server
	// hands out the first one of it whose partitions are free
	// (lockserver.State.Order; a saved Plan's order).
	Order []orderings.Bucket `json:"order,omitempty"`
	// PauseEvery is how many buckets the trainers train between
	// checkpoints inside an epoch (RunState.PauseEvery; 0: the launcher
	// pauses the run when it wants a checkpoint).
	PauseEvery int `json:"pause_every,omitempty"`
	// Within is the lock server's state of epoch First as a checkpoint
	// inside it left it (the buckets trained before it; nil: from the
	// epoch's start).
	Within *lockserver.State `json:"within,omitempty"`
}

// InitialFiles is the store directory of every partition's first
// version (linked from the work directory's checkpoint).
const InitialFiles = "v000000"

// Tag names the directory of version version of partition p as this
// trainer writes it: unique to its lease and to the partition, so that
// no directory holds two partitions. (When two did, another trainer
// that superseded one removed the directory, as empty, between this
// trainer's creating it and writing the other into it.)
func (c *Coord) Tag(p, version int) string {
	return fmt.Sprintf("v%06d-p%d-t%d-%x", version, p, c.id, int64(c.lease))
}

// ErrLostBucket is returned by Commit when the trainer no longer holds
// the bucket: its lease expired and the bucket went back to the pool.
var ErrLostBucket = errors.New("bucket lost: this trainer's lease expired and the bucket was handed back")

// The errors that are the user's input: a trainer id already live, a
// run prefix with no run, etcd endpoints that do not answer, a store
// that is not the run's.
var (
	ErrDuplicate   = errors.New("a trainer with this id is already running")
	ErrNoRun       = errors.New("no such run")
	ErrUnreachable = errors.New("etcd not reachable")
	ErrNotShared   = errors.New("not the run's shared store")
)

// Coord is one trainer's handle on the run in etcd.
type Coord struct {
	cli    *clientv3.Client
	prefix string
	id     int
	lease  clientv3.LeaseID
	stopKA context.CancelFunc
	// OpTimeout bounds every etcd operation.
	OpTimeout time.Duration
	// held is the buckets this handle knows it holds (Acquire's answers
	// it received, less those it committed), so that an Acquire whose
	// answer was lost with an etcd member is recognised when asked
	// again. Only the trainer's loop calls Acquire and Commit.
	held map[int]bool
}

// Connect opens a client of the etcd at endpoints, without TLS or
// credentials (EtcdClient.Connect for those).
func Connect(endpoints []string, timeout time.Duration) (*clientv3.Client, error) {
	return EtcdClient{Endpoints: endpoints}.Connect(timeout)
}

func key(prefix string, parts ...string) string {
	return prefix + "/" + strings.Join(parts, "/")
}

// Init writes a new run's config and state under prefix; it refuses a
// prefix that already holds a run.
func Init(ctx context.Context, cli *clientv3.Client, prefix string, cfg Config, p int, sums []uint64) error {
	first := max(cfg.First, 1)
	ls, err := lockserver.NewEpoch(p, first == 1)
	if err != nil {
		return err
	}
	if w := cfg.Within; w != nil {
		if w.P != p || len(w.Done) != p*p || len(w.Holder) != p*p || w.Active() != 0 || w.Inited != nil && len(w.Inited) != p {
			return fmt.Errorf("the checkpoint's lock state is not of p=%d with no bucket held", p)
		}
		ls.Done, ls.Inited = slices.Clone(w.Done), slices.Clone(w.Inited)
	}
	if cfg.Order != nil {
		if err := ls.SetOrder(cfg.Order); err != nil {
			return err
		}
	}
	st := RunState{Epochs: cfg.Epochs, Epoch: first, Lock: ls, Versions: make([]int, p), Files: make([]string, p), Sums: sums}
	if cfg.Hold {
		st.Hold = first
	}
	st.PauseEvery, st.PausedAt = cfg.PauseEvery, st.Trained()
	for i := range st.Files {
		st.Files[i] = InitialFiles
	}
	sb, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cb, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key(prefix, "state")), "=", 0)).
		Then(clientv3.OpPut(key(prefix, "state"), string(sb)), clientv3.OpPut(key(prefix, "config"), string(cb))).Commit()
	if err != nil {
		return fmt.Errorf("etcd: init run %s: %w", prefix, err)
	}
	if !r.Succeeded {
		return fmt.Errorf("etcd: run %s already exists", prefix)
	}
	return nil
}

// ReadConfig reads the run's config.
func ReadConfig(ctx context.Context, cli *clientv3.Client, prefix string) (Config, error) {
	r, err := cli.Get(ctx, key(prefix, "config"))
	if err != nil {
		return Config{}, fmt.Errorf("etcd: %w", err)
	}
	if len(r.Kvs) == 0 {
		return Config{}, fmt.Errorf("etcd: %w %s (start one with realrun {Trainers})", ErrNoRun, prefix)
	}
	var c Config
	if err := json.Unmarshal(r.Kvs[0].Value, &c); err != nil {
		return Config{}, fmt.Errorf("etcd: run %s config: %w", prefix, err)
	}
	return c, nil
}

// Join registers trainer id under a lease of ttl kept alive in the
// background; a trainer that dies stops renewing it, and when it expires
// the trainer's bucket goes back to the pool.
func Join(ctx context.Context, cli *clientv3.Client, prefix string, id int, ttl time.Duration) (*Coord, error) {
	c := &Coord{cli: cli, prefix: prefix, id: id, OpTimeout: 3 * time.Second}
	g, err := cli.Grant(ctx, int64(max(ttl/time.Second, 1)))
	if err != nil {
		return nil, fmt.Errorf("etcd: lease: %w", err)
	}
	c.lease = g.ID
	k := key(prefix, "alive", strconv.Itoa(id))
	r, err := cli.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(k), "=", 0)).
		Then(clientv3.OpPut(k, strconv.FormatInt(int64(g.ID), 10), clientv3.WithLease(g.ID))).Commit()
	if err != nil {
		return nil, fmt.Errorf("etcd: join: %w", err)
	}
	if !r.Succeeded {
		cli.Revoke(ctx, g.ID)
		return nil, fmt.Errorf("trainer %d: %w", id, ErrDuplicate)
	}
	kactx, cancel := context.WithCancel(context.Background())
	ch, err := cli.KeepAlive(kactx, g.ID)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("etcd: keep-alive: %w", err)
	}
	go func() {
		for range ch {
		}
	}()
	c.stopKA = cancel
	return c, nil
}

// Leave stops renewing the lease and revokes it.
func (c *Coord) Leave() {
	c.stopKA()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c.cli.Revoke(ctx, c.lease)
}

// State reads the run's state and its revision.
func (c *Coord) State(ctx context.Context) (RunState, int64, error) {
	r, err := c.cli.Get(ctx, key(c.prefix, "state"))
	if err != nil {
		return RunState{}, 0, fmt.Errorf("etcd: %w", err)
	}
	if len(r.Kvs) == 0 {
		return RunState{}, 0, fmt.Errorf("etcd: no run %s", c.prefix)
	}
	var s RunState
	if err := json.Unmarshal(r.Kvs[0].Value, &s); err != nil {
		return RunState{}, 0, fmt.Errorf("etcd: run state: %w", err)
	}
	return s, r.Kvs[0].ModRevision, nil
}

// update applies f to the state by compare-and-swap until it sticks; f
// returns false to leave the state unchanged. f also gets the sessions
// of the live trainers, read in the same snapshot as the state: a
// trainer registers before it acquires, so any holder in the state that
// is missing from it is dead.
func (c *Coord) update(ctx context.Context, f func(s *RunState, live map[int]bool) (bool, error)) (RunState, error) {
	k := key(c.prefix, "state")
	for {
		r, err := c.cli.Txn(ctx).Then(clientv3.OpGet(k), clientv3.OpGet(key(c.prefix, "alive")+"/", clientv3.WithPrefix())).Commit()
		if err != nil {
			return RunState{}, fmt.Errorf("etcd: %w", err)
		}
		kvs := r.Responses[0].GetResponseRange().Kvs
		if len(kvs) == 0 {
			return RunState{}, fmt.Errorf("etcd: %w %s", ErrNoRun, c.prefix)
		}
		var s RunState
		if err := json.Unmarshal(kvs[0].Value, &s); err != nil {
			return s, fmt.Errorf("etcd: run state: %w", err)
		}
		live := map[int]bool{}
		for _, kv := range r.Responses[1].GetResponseRange().Kvs {
			if l, err := strconv.ParseInt(string(kv.Value), 10, 64); err == nil {
				live[int(l)] = true
			}
		}
		change, err := f(&s, live)
		if err != nil || !change {
			return s, err
		}
		b, err := json.Marshal(s)
		if err != nil {
			return s, err
		}
		t, err := c.cli.Txn(ctx).If(clientv3.Compare(clientv3.ModRevision(k), "=", kvs[0].ModRevision)).Then(clientv3.OpPut(k, string(b))).Commit()
		if err != nil {
			return s, fmt.Errorf("etcd: %w", err)
		}
		if t.Succeeded {
			return s, nil
		}
	}
}

// session is the trainer's identity at the lock server: its lease, not
// its id, so that a trainer started again under the same id is a new
// holder and the buckets its dead predecessor held go back to the pool.
func (c *Coord) session() int { return int(c.lease) }

// Acquire asks the lock server for trainer's next bucket (last: its last
// bucket, for affinity). Buckets held by trainers whose lease has
// expired go back to the pool first. When the epoch has no bucket left
// and none is being trained, the next epoch starts. ok is false when no
// bucket is free now; the returned state says whether the run is done.
func (c *Coord) Acquire(ctx context.Context, last orderings.Bucket) (b orderings.Bucket, ok bool, st RunState, err error) {
	st, err = c.update(ctx, func(s *RunState, live map[int]bool) (bool, error) {
		ok = false
		if s.Done() {
			return false, nil
		}
		changed := false
		for i, h := range s.Lock.Holder {
			if h >= 0 && !live[h] {
				s.Lock.Holder[i], s.Lock.Done[i] = -1, false
				s.Lost++
				changed = true
			}
		}
		// A bucket the state gives this session that this handle does
		// not know of was acquired by an earlier call whose answer was
		// lost (an etcd member gone between the commit and the reply):
		// it is this call's answer. Asking for another would leave it
		// held by a live trainer that never trains it, and the epoch
		// would never end.
		for i, h := range s.Lock.Holder {
			if h == c.session() && !c.held[i] {
				b, ok = orderings.Bucket{Src: i / s.Lock.P, Dst: i % s.Lock.P}, true
				return changed, nil
			}
		}
		if s.Held() || s.Pause {
			return changed, nil // the launcher has the epoch, or checkpoints inside it
		}
		if s.Lock.Remaining() == 0 && s.Lock.Active() == 0 {
			s.advance()
			return true, nil
		}
		b, ok = s.Lock.Acquire(c.session(), last)
		return ok || changed, nil
	})
	if err == nil && ok {
		if c.held == nil {
			c.held = map[int]bool{}
		}
		c.held[b.Src*st.Lock.P+b.Dst] = true
	}
	return b, ok, st, err
}

// Commit records the new versions and checksums of the partitions the
// trainer wrote for bucket b and releases b, in one transaction: a
// partition is in the store before its lock is released.
func (c *Coord) Commit(ctx context.Context, b orderings.Bucket, versions map[int]int, files map[int]string, sums map[int]uint64) error {
	var i int
	_, err := c.update(ctx, func(s *RunState, _ map[int]bool) (bool, error) {
		i = b.Src*s.Lock.P + b.Dst
		if s.Lock.Holder[i] != c.session() {
			if committed(*s, versions, files) {
				return false, nil // an earlier try landed; its answer was lost
			}
			return false, fmt.Errorf("%v: %w", b, ErrLostBucket)
		}
		for p, v := range versions {
			s.Versions[p], s.Files[p], s.Sums[p] = v, files[p], sums[p]
		}
		if err := s.Lock.Release(b); err != nil {
			return false, err
		}
		if s.PauseEvery > 0 && s.Lock.Remaining() > 0 && s.Trained()-s.PausedAt >= s.PauseEvery {
			s.Pause = true // the launcher checkpoints inside the epoch
		}
		return true, nil
	})
	if err == nil || errors.Is(err, ErrLostBucket) {
		delete(c.held, i)
	}
	return err
}

// committed reports whether the state already holds every partition
// version of a commit (its files are named for the trainer's lease and
// the version, so no other commit writes the same names).
func committed(s RunState, versions map[int]int, files map[int]string) bool {
	if len(versions) == 0 {
		return false
	}
	for p, v := range versions {
		if p < 0 || p >= len(s.Versions) || s.Versions[p] != v || s.Files[p] != files[p] {
			return false
		}
	}
	return true
}

// Release ends the launcher's hold on a run held after an epoch (Held):
// the next epoch starts, held after it in turn, or, with stop or after
// the last epoch, the run is done.
func (c *Coord) Release(ctx context.Context, stop bool) (RunState, error) {
	return c.update(ctx, func(s *RunState, _ map[int]bool) (bool, error) {
		if !s.Held() {
			return false, fmt.Errorf("etcd: run %s is not held after an epoch (epoch %d of %d, hold %d)", c.prefix, s.Epoch, s.Epochs, s.Hold)
		}
		if stop {
			s.Epochs = s.Epoch
		}
		s.advance()
		s.Hold = 0
		if !s.Done() {
			s.Hold = s.Epoch
		}
		return true, nil
	})
}

// Pause asks the lock server to hand out no bucket (RunState.Pause) so
// that the launcher can checkpoint inside the epoch; it does nothing
// (ok false) when the epoch has no bucket left to hand out or the run
// is held or done.
func (c *Coord) Pause(ctx context.Context) (ok bool, st RunState, err error) {
	st, err = c.update(ctx, func(s *RunState, _ map[int]bool) (bool, error) {
		ok = !s.Done() && !s.Held() && s.Lock.Remaining() > 0
		if !ok || s.Pause {
			return false, nil
		}
		s.Pause = true
		return true, nil
	})
	return ok, st, err
}

// Unpause lifts a Pause after a checkpoint: the lock server hands out
// buckets again, and counts the buckets to the next one (PauseEvery)
// from here.
func (c *Coord) Unpause(ctx context.Context) error {
	_, err := c.update(ctx, func(s *RunState, _ map[int]bool) (bool, error) {
		if !s.Pause {
			return false, nil
		}
		s.Pause, s.PausedAt = false, s.Trained()
		return true, nil
	})
	return err
}

// Wait blocks until the state changes after revision rev, or d passes.
func (c *Coord) Wait(ctx context.Context, rev int64, d time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	for range c.cli.Watch(ctx, key(c.prefix, "state"), clientv3.WithRev(rev+1)) {
		return
	}
}

// RelationChunk is how many float32s of the shared relation state go in
// one etcd value (512 KiB, a third of etcd's default request limit of
// 1.5 MiB, so that a chunk's compare-and-swap fits however the cluster
// is set up): the state — relation embeddings and their Adagrad sums:
// 11.9 MB for Freebase86m's 14,824 relations in ComplEx at d=100 — is
// kept as chunks under relations/, each changed by compare-and-swap on
// its own, so that a trainer's update rewrites only the chunks it
// changed.
const RelationChunk = 128 << 10

// relTxnOps is how many operations one transaction of the relation
// chunks holds at most (etcd's --max-txn-ops is 128 by default).
const relTxnOps = 64

// relWriters is how many chunks a trainer compare-and-swaps at once.
const relWriters = 4

func (c *Coord) relKey(i int) string {
	return key(c.prefix, "relations", fmt.Sprintf("%04d", i))
}

// relChunk decodes a chunk's value: the whole state's length, then its
// floats.
func relChunk(b []byte) (total int, f []float32, err error) {
	if len(b) < 4 || len(b)%4 != 0 {
		return 0, nil, fmt.Errorf("a relation chunk of %d bytes", len(b))
	}
	return int(binary.LittleEndian.Uint32(b)), floats(b[4:]), nil
}

func relValue(total int, f []float32) string {
	b := make([]byte, 4, 4+4*len(f))
	binary.LittleEndian.PutUint32(b, uint32(total))
	return string(append(b, bytesOf(f)...))
}

// Relations reads the shared relation parameters — the engine's state:
// relation embeddings and their Adagrad sums — in one range read of
// their chunks (nil before any are written). The first writer writes
// chunk 0 after every other, so that a reader sees them all or none.
func (c *Coord) Relations(ctx context.Context) ([]float32, error) {
	r, err := c.cli.Get(ctx, key(c.prefix, "relations")+"/", clientv3.WithPrefix())
	if err != nil {
		return nil, fmt.Errorf("etcd: relations: %w", err)
	}
	var out []float32
	seen, total := 0, -1
	for _, kv := range r.Kvs {
		i, err := strconv.Atoi(strings.TrimPrefix(string(kv.Key), key(c.prefix, "relations")+"/"))
		if err != nil {
			return nil, fmt.Errorf("etcd: relations: key %s: %w", kv.Key, err)
		}
		n, f, err := relChunk(kv.Value)
		if err != nil {
			return nil, fmt.Errorf("etcd: relations: key %s: %w", kv.Key, err)
		}
		if total < 0 {
			total, out = n, make([]float32, n)
		}
		if n != total || i < 0 || i*RelationChunk+len(f) > total || len(f) != min(RelationChunk, total-i*RelationChunk) {
			return nil, fmt.Errorf("etcd: relations: chunk %s of %d values does not fit a state of %d", kv.Key, len(f), total)
		}
		copy(out[i*RelationChunk:], f)
		seen++
	}
	if len(r.Kvs) == 0 || !slices.ContainsFunc(r.Kvs, func(kv *mvccpb.KeyValue) bool { return string(kv.Key) == c.relKey(0) }) {
		return nil, nil // none yet, or the first writer's still going
	}
	if want := (total + RelationChunk - 1) / RelationChunk; seen != want {
		return nil, fmt.Errorf("etcd: relations: %d chunks of %d", seen, want)
	}
	return out, nil
}

// AddRelations adds delta to the shared relation parameters, chunk by
// chunk, each by compare-and-swap, as a parameter server applies a
// trainer's update: a chunk delta leaves unchanged is not written. base
// initialises them when the run has none yet (nil: zeros); the first
// writer writes every chunk, chunk 0 last.
func (c *Coord) AddRelations(ctx context.Context, base, delta []float32) error {
	total := len(delta)
	if base != nil && len(base) != total {
		return fmt.Errorf("relations: a base of %d values, a change of %d", len(base), total)
	}
	n := (total + RelationChunk - 1) / RelationChunk
	r, err := c.cli.Get(ctx, c.relKey(0), clientv3.WithCountOnly())
	if err != nil {
		return fmt.Errorf("etcd: relations: %w", err)
	}
	first := r.Count == 0
	var todo []int
	for i := range n {
		lo, hi := i*RelationChunk, min((i+1)*RelationChunk, total)
		if first || slices.ContainsFunc(delta[lo:hi], func(x float32) bool { return x != 0 }) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil // nothing changed
	}
	last := -1
	if first {
		last, todo = todo[0], todo[1:] // chunk 0: once every other is there
	}
	// The chunks' current values, in as few reads as etcd's transaction
	// limit allows.
	cur := map[int]*mvccpb.KeyValue{}
	read := append(slices.Clone(todo), last)
	for lo := 0; lo < len(read); lo += relTxnOps {
		var ops []clientv3.Op
		for _, i := range read[lo:min(lo+relTxnOps, len(read))] {
			if i >= 0 {
				ops = append(ops, clientv3.OpGet(c.relKey(i)))
			}
		}
		t, err := c.cli.Txn(ctx).Then(ops...).Commit()
		if err != nil {
			return fmt.Errorf("etcd: relations: %w", err)
		}
		for _, op := range t.Responses {
			for _, kv := range op.GetResponseRange().Kvs {
				i, _ := strconv.Atoi(strings.TrimPrefix(string(kv.Key), key(c.prefix, "relations")+"/"))
				cur[i] = kv
			}
		}
	}
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
		sem  = make(chan struct{}, relWriters)
	)
	for _, i := range todo {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			if err := c.addChunk(ctx, i, cur[i], base, delta); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if last >= 0 {
		return c.addChunk(ctx, last, cur[last], base, delta)
	}
	return nil
}

// addChunk adds chunk i of delta to the chunk's value kv (nil: none yet,
// base's then) by compare-and-swap, taking the value that beat it and
// trying again until it sticks.
func (c *Coord) addChunk(ctx context.Context, i int, kv *mvccpb.KeyValue, base, delta []float32) error {
	k := c.relKey(i)
	lo, hi := i*RelationChunk, min((i+1)*RelationChunk, len(delta))
	for {
		var cur []float32
		cmp := clientv3.Compare(clientv3.CreateRevision(k), "=", 0)
		if kv != nil {
			total, f, err := relChunk(kv.Value)
			if err != nil {
				return fmt.Errorf("etcd: relations: key %s: %w", k, err)
			}
			if total != len(delta) || len(f) != hi-lo {
				return fmt.Errorf("etcd: relations: the run's hold %d values, this trainer's %d", total, len(delta))
			}
			cur, cmp = f, clientv3.Compare(clientv3.ModRevision(k), "=", kv.ModRevision)
		} else if base != nil {
			cur = base[lo:hi]
		} else {
			cur = make([]float32, hi-lo)
		}
		next := make([]float32, hi-lo)
		for j := range next {
			next[j] = cur[j] + delta[lo+j]
		}
		t, err := c.cli.Txn(ctx).If(cmp).Then(clientv3.OpPut(k, relValue(len(delta), next))).Else(clientv3.OpGet(k)).Commit()
		if err != nil {
			return fmt.Errorf("etcd: relations: chunk %d: %w", i, err)
		}
		if t.Succeeded {
			return nil
		}
		kv = nil
		if kvs := t.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			kv = kvs[0]
		}
	}
}

// spanChunk is how many spans of a trainer's epoch go in one etcd value
// (a few hundred bytes each: well under etcd's request limit of 1.5 MiB).
const spanChunk = 2000

// PutReport records the trainer's figures for an epoch; its spans go
// beside them in chunks, so that a long epoch's fit etcd's values.
func (c *Coord) PutReport(ctx context.Context, epoch int, r TrainerEpoch) error {
	spans := r.Spans
	r.Spans = nil
	for i := 0; i < len(spans); i += spanChunk {
		b, err := json.Marshal(spans[i:min(i+spanChunk, len(spans))])
		if err != nil {
			return err
		}
		k := key(c.prefix, "spans", fmt.Sprintf("%04d", epoch), strconv.Itoa(c.id), fmt.Sprintf("%06d", i/spanChunk))
		if _, err := c.cli.Put(ctx, k, string(b)); err != nil {
			return fmt.Errorf("etcd: %w", err)
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	k := key(c.prefix, "report", fmt.Sprintf("%04d", epoch), strconv.Itoa(c.id))
	if _, err := c.cli.Put(ctx, k, string(b)); err != nil {
		return fmt.Errorf("etcd: %w", err)
	}
	return nil
}

// Reports reads every trainer's figures for every epoch, by epoch, with
// their spans.
func Reports(ctx context.Context, cli *clientv3.Client, prefix string) (map[int][]TrainerEpoch, error) {
	sorted := []clientv3.OpOption{clientv3.WithPrefix(), clientv3.WithSort(clientv3.SortByKey, clientv3.SortAscend)}
	r, err := cli.Get(ctx, key(prefix, "report")+"/", sorted...)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	sp, err := cli.Get(ctx, key(prefix, "spans")+"/", sorted...)
	if err != nil {
		return nil, fmt.Errorf("etcd: %w", err)
	}
	spans := map[[2]int][]report.Span{}
	for _, kv := range sp.Kvs {
		var epoch, id int
		var chunk []report.Span
		if _, err := fmt.Sscanf(strings.TrimPrefix(string(kv.Key), key(prefix, "spans")+"/"), "%d/%d/", &epoch, &id); err != nil {
			return nil, fmt.Errorf("etcd: spans %s: %w", kv.Key, err)
		}
		if err := json.Unmarshal(kv.Value, &chunk); err != nil {
			return nil, fmt.Errorf("etcd: spans %s: %w", kv.Key, err)
		}
		spans[[2]int{epoch, id}] = append(spans[[2]int{epoch, id}], chunk...)
	}
	out := map[int][]TrainerEpoch{}
	for _, kv := range r.Kvs {
		var t TrainerEpoch
		if err := json.Unmarshal(kv.Value, &t); err != nil {
			return nil, fmt.Errorf("etcd: report %s: %w", kv.Key, err)
		}
		t.Spans = spans[[2]int{t.Epoch, t.Trainer}]
		out[t.Epoch] = append(out[t.Epoch], t)
	}
	return out, nil
}

func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func bytesOf(f []float32) []byte {
	b := make([]byte, 4*len(f))
	for i, x := range f {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// Observer is a read-only handle on a run (for tests and tools): State
// and Relations, no lease.
func Observer(cli *clientv3.Client, prefix string) *Coord {
	return &Coord{cli: cli, prefix: prefix, OpTimeout: 5 * time.Second}
}

// Session returns the lock-server identity (lease) of the live trainer
// with the given id.
func (c *Coord) Session(ctx context.Context, id int) (int, bool) {
	r, err := c.cli.Get(ctx, key(c.prefix, "alive", strconv.Itoa(id)))
	if err != nil || len(r.Kvs) == 0 {
		return 0, false
	}
	l, err := strconv.ParseInt(string(r.Kvs[0].Value), 10, 64)
	return int(l), err == nil
}
