package dist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
)

// ErrTyped says a distributed run was asked to train a work directory
// with entity types, which several trainers do not support yet.
var ErrTyped = errors.New("several trainers do not support entity types yet")

// CheckUntyped refuses a work directory with entity types (a typed
// schema): the trainers share partitions through the lock server but no
// resident table.
func CheckUntyped(st *store.Store) error {
	if st.M.Typed() {
		return fmt.Errorf("work directory %s has entity types: %w", st.Dir, ErrTyped)
	}
	return nil
}

// Prepare makes the shared store's first version of every partition (a
// link to the work directory's current checkpoint) and returns their
// checksums.
func Prepare(st *store.Store) ([]uint64, error) {
	if err := CheckUntyped(st); err != nil {
		return nil, err
	}
	sums, err := st.PartitionSums(st.CurrentDir())
	if err != nil {
		return nil, err
	}
	dir := FilesDir(st, InitialFiles)
	if err := os.RemoveAll(FilesDir(st, "")); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	out := make([]uint64, st.M.P)
	for i := range out {
		if err := store.Link(st.CurrentDir(), dir, i); err != nil {
			return nil, fmt.Errorf("shared store: %w", err)
		}
		out[i] = sums[i]
	}
	return out, nil
}

// Finish commits the run's last partition versions and relations as the
// work directory's next checkpoint, epochs epochs after its current one,
// so that evaluation and export read them as after any training.
func Finish(ctx context.Context, cli *clientv3.Client, prefix string, st *store.Store, eng realrun.Engine, epochs int) error {
	c := &Coord{cli: cli, prefix: prefix, OpTimeout: 10 * time.Second}
	s, _, err := c.State(ctx)
	if err != nil {
		return err
	}
	if !s.Done() {
		return fmt.Errorf("the run is not done: epoch %d of %d, %d buckets left", s.Epoch, s.Epochs, s.Lock.Remaining())
	}
	return commit(ctx, c, s, st, eng, st.Current+epochs, 0, nil)
}

// CommitEpoch commits a run held after epoch e (RunState.Held: every
// bucket of it trained) as the work directory's checkpoint e: the
// partitions' committed versions, linked, and the shared relations as
// the engine's state. Evaluation then reads it as after one machine's
// epoch.
func CommitEpoch(ctx context.Context, cli *clientv3.Client, prefix string, st *store.Store, eng realrun.Engine, s RunState) error {
	if !s.Held() {
		return fmt.Errorf("epoch %d is not done: %d buckets left, %d being trained", s.Epoch, s.Lock.Remaining(), s.Lock.Active())
	}
	return commit(ctx, &Coord{cli: cli, prefix: prefix, OpTimeout: 10 * time.Second}, s, st, eng, s.Epoch, 0, nil)
}

// CommitWithin commits a run paused inside epoch s.Epoch (RunState.Paused:
// no bucket in flight) as the work directory's checkpoint s.Trained()
// buckets into it: the partitions' committed versions, which hold
// exactly the buckets done, the shared relations as the engine's state,
// and the position (realrun.Position with the lock server's state), from
// which a resumed run trains the other buckets of the epoch.
func CommitWithin(ctx context.Context, cli *clientv3.Client, prefix string, st *store.Store, eng realrun.Engine, s RunState) error {
	if !s.Paused() {
		return fmt.Errorf("epoch %d is not paused with no bucket in flight (%d being trained)", s.Epoch, s.Lock.Active())
	}
	k := s.Trained()
	lock := lockserver.State{P: s.Lock.P, Done: slices.Clone(s.Lock.Done), Holder: slices.Clone(s.Lock.Holder), Inited: slices.Clone(s.Lock.Inited)}
	data, err := json.Marshal(realrun.Position{Epoch: s.Epoch, Bucket: k, Lock: &lock})
	if err != nil {
		return err
	}
	return commit(ctx, &Coord{cli: cli, prefix: prefix, OpTimeout: 10 * time.Second}, s, st, eng, s.Epoch-1, k, map[string][]byte{realrun.PositionFile: data})
}

// commit commits the partition versions of state s and the shared
// relations, with the extra files more, as checkpoint e+k of the work
// directory (k buckets into epoch e+1; 0: after epoch e).
func commit(ctx context.Context, c *Coord, s RunState, st *store.Store, eng realrun.Engine, e, k int, more map[string][]byte) error {
	if sf, ok := eng.(realrun.Stateful); ok && len(eng.Relations()) > 0 {
		shared, err := c.Relations(ctx)
		if err != nil {
			return err
		}
		if shared != nil {
			if err := sf.Restore(shared); err != nil {
				return fmt.Errorf("shared relations: %w", err)
			}
		}
	}
	dir, err := st.Begin(e, k)
	if err != nil {
		return err
	}
	sums := map[int]uint64{}
	for p := range s.Files {
		if err := store.Link(FilesDir(st, s.Files[p]), dir, p); err != nil {
			return fmt.Errorf("commit partition %d: %w", p, err)
		}
		sums[p] = s.Sums[p]
	}
	extra, err := realrun.EngineState(eng)
	if err != nil {
		return err
	}
	maps.Copy(extra, more)
	return st.Commit(e, k, sums, extra)
}

// Local starts n trainer processes, all joined to the run, and waits for
// them. argv gives a trainer's command line and what it adds to this
// process's environment (NAME=value). A trainer that fails is reported;
// the others go on (its bucket returns to the pool when its lease
// expires).
func Local(ctx context.Context, n int, argv func(id int) (args, env []string), stderr io.Writer) []error {
	errs := make([]error, n)
	cmds := make([]*exec.Cmd, n)
	for i := range n {
		args, env := argv(i)
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Stdout, cmd.Stderr = io.Discard, stderr
		if len(env) > 0 {
			cmd.Env = append(os.Environ(), env...)
		}
		if err := cmd.Start(); err != nil {
			errs[i] = fmt.Errorf("trainer %d: %w", i, err)
			continue
		}
		cmds[i] = cmd
	}
	for i, cmd := range cmds {
		if cmd == nil {
			continue
		}
		if err := cmd.Wait(); err != nil {
			errs[i] = fmt.Errorf("trainer %d: %w", i, err)
		}
	}
	return errs
}

// TrainerOptions are one trainer process's: where etcd is, the run's
// shared work directory (only for a run without an object store), its
// id, the run's prefix, its lease.
type TrainerOptions struct {
	Etcd EtcdClient
	// Store is the run's work directory on a filesystem every trainer
	// sees; a run through an object store needs none (its data, manifest
	// and degrees included, is in the store).
	Store  string
	ID     int
	Prefix string
	Lease  time.Duration
	Log    io.Writer
}

// ErrNeedStore is a trainer given no work directory for a run that moves
// its partitions through one.
var ErrNeedStore = errors.New("the run moves its partitions through its shared work directory, and this trainer was given none")

// RunTrainer is `realrun trainer`: it joins the run in etcd, opens the
// run's store (the object store the run names, else the shared work
// directory) and the engine, and trains until the run is done.
func RunTrainer(ctx context.Context, o TrainerOptions) ([]TrainerEpoch, error) {
	if o.ID < 0 {
		return nil, fmt.Errorf("trainer id %d: must not be negative", o.ID)
	}
	cli, err := o.Etcd.Connect(5 * time.Second)
	if err != nil {
		return nil, err
	}
	defer cli.Close()
	if err := CheckAccess(ctx, cli, o.Etcd); err != nil {
		return nil, err
	}
	cfg, err := ReadConfig(ctx, cli, o.Prefix)
	if err != nil {
		return nil, err
	}
	var st *store.Store
	var blobs Blobs
	if cfg.Objects != nil {
		ob, err := ConnectObjects(ctx, *cfg.Objects, 10*time.Second)
		if err != nil {
			return nil, err
		}
		// The manifest and degrees, in a directory of this trainer's
		// own that goes with it.
		tmp, err := os.MkdirTemp("", "tierflow-trainer-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		if st, err = ob.FetchStore(o.Prefix, tmp); err != nil {
			return nil, err
		}
		blobs = ob.Blobs(o.Prefix, st)
	} else {
		if o.Store == "" {
			return nil, ErrNeedStore
		}
		if st, err = store.Open(o.Store); err != nil {
			return nil, fmt.Errorf("{Store}: %w: %w", ErrNotShared, err)
		}
		if _, err := os.Stat(FilesDir(st, InitialFiles)); err != nil {
			return nil, fmt.Errorf("{Store} %s: %w (no %s)", o.Store, ErrNotShared, FilesDir(st, InitialFiles))
		}
		blobs = DirBlobs(st)
	}
	var h realrun.Hyper
	if err := json.Unmarshal(cfg.Hyper, &h); err != nil {
		return nil, fmt.Errorf("run config: %w", err)
	}
	degrees, err := st.Degrees()
	if err != nil {
		return nil, err
	}
	eng, err := realrun.NewEngine(realrun.EngineOptions{Engine: cfg.Engine, Buffer: cfg.Buffer, Hyper: h, Store: st, Degrees: degrees, Seed: cfg.Seed, C: 2})
	if err != nil {
		return nil, err
	}
	if c, ok := eng.(io.Closer); ok {
		defer c.Close()
	}
	lease := o.Lease
	if lease == 0 {
		lease = 5 * time.Second
	}
	co, err := Join(ctx, cli, o.Prefix, o.ID, lease)
	if err != nil {
		return nil, err
	}
	defer co.Leave()
	t := &Trainer{ID: o.ID, Store: st, Coord: co, Engine: eng, Seed: cfg.Seed, Log: o.Log, Blobs: blobs, Trace: cfg.Trace}
	return t.Run(ctx)
}

// ParseEndpoints splits a comma-separated endpoint list.
func ParseEndpoints(s string) ([]string, error) {
	var out []string
	for _, e := range strings.Split(s, ",") {
		if e = strings.TrimSpace(e); e != "" {
			out = append(out, e)
		}
	}
	if len(out) == 0 {
		return nil, errors.New("{Etcd}: no endpoint")
	}
	return out, nil
}

// NewPrefix is a fresh etcd prefix for a run on a work directory.
func NewPrefix(st *store.Store) string {
	return fmt.Sprintf("%s%x/%d", KeyPrefix, store.Checksum([]byte(st.Dir)), time.Now().UnixNano())
}
