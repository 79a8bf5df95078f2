package dist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/realrun"
	_ "github.com/tierflow/tierflow/realrun/cpu" // the cpu engine
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

func server(t *testing.T) (*Server, *clientv3.Client) {
	t.Helper()
	srv, err := StartServer(filepath.Join(t.TempDir(), "etcd"), "127.0.0.1", 0)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cli, err := Connect([]string{srv.Endpoint}, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { cli.Close() })
	return srv, cli
}

func b(src, dst int) orderings.Bucket { return orderings.Bucket{Src: src, Dst: dst} }

// The lock server's policy through etcd: the hand-checked P = 4, M = 2
// start of orderings/lockserver, a duplicate id refused, a dead trainer's
// bucket back in the pool.
func TestCoordinator(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	require.NoError(t, Init(ctx, cli, "/t", Config{Epochs: 1}, 4, make([]uint64, 4)))
	assert.ErrorContains(t, Init(ctx, cli, "/t", Config{Epochs: 1}, 4, make([]uint64, 4)), "already exists")
	c0, err := Join(ctx, cli, "/t", 0, 2*time.Second)
	require.NoError(t, err)
	c1, err := Join(ctx, cli, "/t", 1, 2*time.Second)
	require.NoError(t, err)
	_, err = Join(ctx, cli, "/t", 1, 2*time.Second)
	assert.ErrorIs(t, err, ErrDuplicate)

	got, ok, _, err := c0.Acquire(ctx, lockserver.None)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, b(0, 0), got)
	_, ok, _, err = c1.Acquire(ctx, lockserver.None)
	require.NoError(t, err)
	assert.False(t, ok, "only partition 0 is initialised and T0 holds it")
	got, ok, _, err = c0.Acquire(ctx, b(0, 0))
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, b(0, 1), got)
	require.NoError(t, c0.Commit(ctx, b(0, 0), map[int]int{0: 1}, map[int]string{0: "x"}, map[int]uint64{0: 7}))
	s, _, err := c0.State(ctx)
	require.NoError(t, err)
	assert.Equal(t, 1, s.Versions[0])
	assert.Equal(t, uint64(7), s.Sums[0])
	assert.ErrorIs(t, c1.Commit(ctx, b(0, 1), nil, nil, nil), ErrLostBucket, "T1 does not hold (0,1)")

	// T0 dies holding (0,1): once its lease is gone the bucket is free.
	c0.Leave()
	got, ok, s, err = c1.Acquire(ctx, lockserver.None)
	require.NoError(t, err)
	require.True(t, ok)
	assert.Equal(t, b(0, 1), got, "(0,1) is back in the pool and first in order")
	assert.Equal(t, 1, s.Lost)
	assert.ErrorIs(t, c0.Commit(ctx, b(0, 1), nil, nil, nil), ErrLostBucket)
}

// An etcd member lost between a transaction's commit and its reply
// leaves the trainer with an error for a change that landed. Asked again,
// Acquire hands back the bucket the lost answer gave (asking for another
// would leave that one held by a live trainer forever, and the epoch would
// never end), and Commit reports success for the versions already in the
// state rather than a lost bucket.
func TestCoordAnswerLost(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	require.NoError(t, Init(ctx, cli, "/t", Config{Epochs: 1}, 2, make([]uint64, 2)))
	c0, err := Join(ctx, cli, "/t", 0, 5*time.Second)
	require.NoError(t, err)
	c1, err := Join(ctx, cli, "/t", 1, 5*time.Second)
	require.NoError(t, err)

	got, ok, _, err := c0.Acquire(ctx, lockserver.None)
	require.NoError(t, err)
	require.True(t, ok)
	c0.held = nil // the reply never reached the trainer
	again, ok, s, err := c0.Acquire(ctx, lockserver.None)
	require.NoError(t, err)
	require.True(t, ok, "the bucket the lost answer gave")
	assert.Equal(t, got, again)
	assert.Equal(t, 1, s.Lock.Active(), "still one bucket held, not two")

	i := got.Src*2 + got.Dst
	versions, files, sums := map[int]int{got.Src: 1}, map[int]string{got.Src: c0.Tag(got.Src, 1)}, map[int]uint64{got.Src: 9}
	require.NoError(t, c0.Commit(ctx, got, versions, files, sums))
	_, rev, err := c0.State(ctx)
	require.NoError(t, err)
	c0.held = map[int]bool{i: true} // the commit's reply lost: the trainer tries again
	assert.NoError(t, c0.Commit(ctx, got, versions, files, sums), "the versions are in the state: the commit landed")
	_, rev2, err := c0.State(ctx)
	require.NoError(t, err)
	assert.Equal(t, rev, rev2, "the state not written again")
	assert.ErrorIs(t, c1.Commit(ctx, got, map[int]int{got.Src: 1}, map[int]string{got.Src: c1.Tag(got.Src, 1)}, sums), ErrLostBucket,
		"another trainer's files for the same version are not this commit")
	assert.ErrorIs(t, c0.Commit(ctx, got, map[int]int{got.Src: 2}, map[int]string{got.Src: c0.Tag(got.Src, 2)}, sums), ErrLostBucket,
		"versions the state does not hold: the bucket is not this trainer's")
}

func TestRelationsAdd(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	c := &Coord{cli: cli, prefix: "/r", OpTimeout: time.Second}
	got, err := c.Relations(ctx)
	require.NoError(t, err)
	assert.Nil(t, got)
	require.NoError(t, c.AddRelations(ctx, []float32{1, 2}, []float32{0.5, -1}))
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, c.AddRelations(ctx, nil, []float32{1, 1}))
		}()
	}
	wg.Wait()
	got, err = c.Relations(ctx)
	require.NoError(t, err)
	assert.Equal(t, []float32{5.5, 5}, got, "every concurrent delta applied once")
}

// The shared relations in chunks: a state over etcd's request limit
// (1.5 MiB) is stored and read back whole; concurrent adds, by two
// trainers to the same chunks, lose nothing; a chunk that no delta
// changes is not written again.
func TestRelationsChunked(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		change []int // the chunks each add changes
	}{
		{"one chunk", 5, []int{0}},
		{"a chunk exactly", RelationChunk, []int{0}},
		{"over the request limit, every chunk", 4*RelationChunk + 7, []int{0, 1, 2, 3, 4}},
		{"over the request limit, one chunk", 4*RelationChunk + 7, []int{2}},
		{"over the request limit, the first and last", 4*RelationChunk + 7, []int{0, 4}},
		// 11.9 MB, read back in one range read of 23 chunks
		{"Freebase86m's: 14,824 relations in ComplEx at d=100", 14824 * 100 * 2, []int{5, 22}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, cli := server(t)
			ctx := context.Background()
			c0 := &Coord{cli: cli, prefix: "/r", OpTimeout: time.Second}
			c1 := &Coord{cli: cli, prefix: "/r", OpTimeout: time.Second}
			base := make([]float32, tc.n)
			for i := range base {
				base[i] = float32(i % 1000)
			}
			require.NoError(t, c0.AddRelations(ctx, base, make([]float32, tc.n)), "seeded as seedRelations does")
			got, err := c0.Relations(ctx)
			require.NoError(t, err)
			require.Equal(t, base, got)
			revs := func() map[string]int64 {
				r, err := cli.Get(ctx, "/r/relations/", clientv3.WithPrefix())
				require.NoError(t, err)
				m := map[string]int64{}
				for _, kv := range r.Kvs {
					m[string(kv.Key)] = kv.ModRevision
				}
				return m
			}
			before := revs()
			require.Len(t, before, (tc.n+RelationChunk-1)/RelationChunk)
			delta := make([]float32, tc.n)
			for _, k := range tc.change {
				for i := k * RelationChunk; i < min((k+1)*RelationChunk, tc.n); i += 97 {
					delta[i] = 1
				}
			}
			const adds = 3
			var wg sync.WaitGroup
			for _, c := range []*Coord{c0, c1} {
				for range adds {
					wg.Add(1)
					go func() {
						defer wg.Done()
						assert.NoError(t, c.AddRelations(ctx, base, delta))
					}()
				}
			}
			wg.Wait()
			got, err = c1.Relations(ctx)
			require.NoError(t, err)
			want := slices.Clone(base)
			for i := range want {
				want[i] += 2 * adds * delta[i]
			}
			require.Equal(t, want, got, "every concurrent delta added once")
			after := revs()
			for k := range (tc.n + RelationChunk - 1) / RelationChunk {
				key := fmt.Sprintf("/r/relations/%04d", k)
				assert.Equal(t, slices.Contains(tc.change, k), after[key] != before[key], "chunk %d written only if changed", k)
			}
		})
	}
}

// Two first writers at once, with no relations yet: each writes every
// chunk, and both deltas are in the result.
func TestRelationsFirstWriters(t *testing.T) {
	_, cli := server(t)
	ctx := context.Background()
	n := 3*RelationChunk + 1
	base, delta := make([]float32, n), make([]float32, n)
	for i := range delta {
		base[i], delta[i] = 1, float32(i%3)
	}
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			assert.NoError(t, (&Coord{cli: cli, prefix: "/r", OpTimeout: time.Second}).AddRelations(ctx, base, delta))
		}()
	}
	wg.Wait()
	got, err := Observer(cli, "/r").Relations(ctx)
	require.NoError(t, err)
	for i := range got {
		if got[i] != 1+2*delta[i] {
			t.Fatalf("value %d: %v, want %v", i, got[i], 1+2*delta[i])
		}
	}
	assert.Len(t, got, n)
	assert.ErrorContains(t, Observer(cli, "/r").AddRelations(ctx, nil, []float32{1, 0, 0, 0, 0}), "hold", "a state of another length is refused")
}

type run struct {
	st     *store.Store
	h      realrun.Hyper
	prefix string
	cli    *clientv3.Client
	srv    *Server
}

func newRun(t *testing.T, dataset string, p, epochs int, m workload.Model) *run {
	t.Helper()
	return newRunD(t, dataset, p, epochs, m, 16)
}

// newRunD is newRun at dimension d.
func newRunD(t *testing.T, dataset string, p, epochs int, m workload.Model, d int) *run {
	t.Helper()
	st := fixture.Prepare(t, dataset, 0.0005, p, d, m)
	srv, cli := server(t)
	sums, err := Prepare(st)
	require.NoError(t, err)
	h := fixture.Hyper(m, d)
	hb, err := json.Marshal(h)
	require.NoError(t, err)
	r := &run{st: st, h: h, prefix: NewPrefix(st), cli: cli, srv: srv}
	require.NoError(t, Init(context.Background(), cli, r.prefix, Config{Epochs: epochs, Seed: 3, Hyper: hb}, p, sums))
	return r
}

func (r *run) trainer(t *testing.T, id int) *Trainer {
	t.Helper()
	degrees, err := r.st.Degrees()
	require.NoError(t, err)
	eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: r.h, Store: r.st, Degrees: degrees, Seed: 3, C: 2})
	require.NoError(t, err)
	co, err := Join(context.Background(), r.cli, r.prefix, id, 3*time.Second)
	require.NoError(t, err)
	t.Cleanup(co.Leave)
	return &Trainer{ID: id, Store: r.st, Coord: co, Engine: eng, Seed: 3}
}

// runAll runs trainers to the end and returns their epochs.
func runAll(t *testing.T, ts ...*Trainer) [][]TrainerEpoch {
	t.Helper()
	out := make([][]TrainerEpoch, len(ts))
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, tr := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = tr.Run(context.Background())
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	return out
}

// Two trainers train every bucket of every epoch once, and the result is
// committed as a checkpoint whose every partition verifies.
func TestTwoTrainers(t *testing.T) {
	r := newRun(t, "fb15k", 4, 2, workload.ComplEx)
	eps := runAll(t, r.trainer(t, 0), r.trainer(t, 1))
	// A trainer may sit out a whole epoch of so small a graph (the other
	// trains it before it asks); every epoch's buckets are trained once.
	buckets := map[int]int{}
	for _, tr := range eps {
		for _, e := range tr {
			buckets[e.Epoch] += e.Buckets
			// both partitions saved after every bucket, one for a diagonal one
			assert.GreaterOrEqual(t, e.Saves, e.Buckets)
			assert.LessOrEqual(t, e.Saves, 2*e.Buckets)
		}
	}
	assert.Equal(t, map[int]int{1: 16, 2: 16}, buckets)
	// Every version a trainer wrote is a directory of its own partition:
	// a directory of two is removed (as empty, by the trainer that
	// superseded one) while its writer creates the other in it.
	dirs, err := os.ReadDir(filepath.Join(r.st.Dir, "dist"))
	require.NoError(t, err)
	require.Greater(t, len(dirs), 1)
	for _, d := range dirs {
		if d.Name() == InitialFiles {
			continue
		}
		files, err := os.ReadDir(filepath.Join(r.st.Dir, "dist", d.Name()))
		require.NoError(t, err)
		assert.Len(t, files, 1, d.Name())
	}
	degrees, err := r.st.Degrees()
	require.NoError(t, err)
	eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: r.h, Store: r.st, Degrees: degrees, Seed: 3, C: 2})
	require.NoError(t, err)
	before := r.st.Current
	require.NoError(t, Finish(context.Background(), r.cli, r.prefix, r.st, eng, 2))
	assert.Equal(t, before+2, r.st.Current)
	cps, err := r.st.Checkpoints()
	require.NoError(t, err)
	require.NoError(t, r.st.VerifyCheckpoint(cps[len(cps)-1]))
	rel, err := (&Coord{cli: r.cli, prefix: r.prefix, OpTimeout: time.Second}).Relations(context.Background())
	require.NoError(t, err)
	assert.Equal(t, rel[:len(eng.Relations())], eng.Relations(), "the shared relations are committed")
}

// A graph whose shared relation state is over etcd's request limit
// (1.5 MiB; the 120 relations of fb15k at scale 0.0005 in ComplEx at d=2048: 2 MB with
// their Adagrad sums) trains with two trainers, its checkpoint verifies
// and holds the shared relations: every trainer's change added.
func TestRelationsOverRequestLimit(t *testing.T) {
	r := newRunD(t, "fb15k", 2, 1, workload.ComplEx, 8192)
	t0, t1 := r.trainer(t, 0), r.trainer(t, 1)
	state := t0.Engine.(realrun.Stateful).State()
	require.Greater(t, 4*len(state), 3<<19, "the relation state is over 1.5 MiB")
	init := slices.Clone(state)
	// A trainer that fails leaves at once, so that the other does not
	// wait for its bucket until the test's deadline.
	eps := make([][]TrainerEpoch, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i, tr := range []*Trainer{t0, t1} {
		tr.MaxOutage, tr.Log = 3*time.Second, testLog{t}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if eps[i], errs[i] = tr.Run(context.Background()); errs[i] != nil {
				tr.Coord.Leave()
			}
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	buckets := 0
	for _, tr := range eps {
		for _, e := range tr {
			buckets += e.Buckets
		}
	}
	assert.Equal(t, 4, buckets)
	degrees, err := r.st.Degrees()
	require.NoError(t, err)
	eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: r.h, Store: r.st, Degrees: degrees, Seed: 3, C: 2})
	require.NoError(t, err)
	require.NoError(t, Finish(context.Background(), r.cli, r.prefix, r.st, eng, 1))
	cps, err := r.st.Checkpoints()
	require.NoError(t, err)
	require.NoError(t, r.st.VerifyCheckpoint(cps[len(cps)-1]))
	rel, err := Observer(r.cli, r.prefix).Relations(context.Background())
	require.NoError(t, err)
	require.Len(t, rel, len(state))
	assert.Equal(t, rel, eng.(realrun.Stateful).State(), "the shared relations are committed")
	assert.NotEqual(t, init, rel, "the trainers' changes are in them")
}

// etcd goes away for a few seconds in the middle of an epoch: the
// trainers wait and resume, and the run completes.
func TestEtcdOutage(t *testing.T) {
	r := newRun(t, "twitter", 4, 2, workload.Dot)
	ts := []*Trainer{r.trainer(t, 0), r.trainer(t, 1)}
	for _, tr := range ts {
		tr.MaxOutage = 60 * time.Second
		tr.Log = testLog{t}
	}
	done := make(chan [][]TrainerEpoch)
	go func() { done <- runAll(t, ts...) }()
	dir := r.srv.e.Config().Dir
	addr := r.srv.e.Clients[0].Addr().String()
	// Take etcd away once the first bucket is committed: the watch says
	// when, so the outage lands in the middle of the first epoch.
	obs := Observer(r.cli, r.prefix)
	for {
		s, rev, err := obs.State(context.Background())
		require.NoError(t, err)
		if s.Versions[0]+s.Versions[1]+s.Versions[2]+s.Versions[3] > 0 {
			break
		}
		obs.Wait(context.Background(), rev, 5*time.Second)
	}
	r.srv.Close()
	// The outage itself: wall time the trainers must ride out, not a
	// synchronisation.
	time.Sleep(3 * time.Second)
	host, port := splitHostPort(t, addr)
	t0 := time.Now()
	srv, err := StartServer(dir, host, port)
	require.NoError(t, err)
	t.Logf("%.3f etcd back after %.1f s to restart", float64(time.Now().UnixMilli()%100000)/1000, time.Since(t0).Seconds())
	t.Cleanup(srv.Close)
	select {
	case eps := <-done:
		buckets := 0
		for _, tr := range eps {
			for _, e := range tr {
				buckets += e.Buckets
			}
		}
		assert.GreaterOrEqual(t, buckets, 32, "every bucket of both epochs trained (a bucket whose commit failed is trained again)")
	case <-time.After(90 * time.Second):
		t.Fatal("the run did not finish after etcd came back")
	}
	s, _, err := (&Coord{cli: r.cli, prefix: r.prefix, OpTimeout: 5 * time.Second}).State(context.Background())
	require.NoError(t, err)
	assert.True(t, s.Done())
}

func splitHostPort(t *testing.T, addr string) (string, int) {
	t.Helper()
	h, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return h, n
}

type testLog struct{ t *testing.T }

func (l testLog) Write(b []byte) (int, error) {
	l.t.Logf("%.3f %s", float64(time.Now().UnixMilli()%100000)/1000, b)
	return len(b), nil
}

func TestEtcdClientCheck(t *testing.T) {
	for _, tc := range []struct {
		c    EtcdClient
		want string // "": fine
	}{
		{EtcdClient{Endpoints: []string{"http://a:1", "b:2"}}, ""},
		{EtcdClient{Endpoints: []string{"https://a:1"}, CACert: "ca", Cert: "c", Key: "k", User: "u", Password: "p"}, ""},
		{EtcdClient{}, "no endpoint"},
		{EtcdClient{Endpoints: []string{"a"}}, `etcd endpoint "a": want HOST:PORT`},
		{EtcdClient{Endpoints: []string{"unix://a:1"}}, `etcd endpoint "unix://a:1"`},
		{EtcdClient{Endpoints: []string{"http://a:1", "https://b:1"}}, "all http or all https"},
		{EtcdClient{Endpoints: []string{"http://a:1"}, CACert: "ca"}, "TLS needs https://"},
		{EtcdClient{Endpoints: []string{"https://a:1"}, Cert: "c"}, "a certificate and its key go together"},
		{EtcdClient{Endpoints: []string{"https://a:1"}, Password: "p"}, "given without a user"},
		{EtcdClient{Endpoints: []string{"https://a:1"}, User: "u"}, "etcd user u: no password"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			err := tc.c.Check()
			if tc.want == "" {
				assert.NoError(t, err)
				return
			}
			assert.ErrorContains(t, err, tc.want)
		})
	}
}

// The etcd a run starts has authentication on, with a root password new
// each time: a client without it is refused, one with it is not.
func TestEnableAuth(t *testing.T) {
	srv, cli := server(t)
	ctx := context.Background()
	pw, err := EnableAuth(ctx, cli)
	require.NoError(t, err)
	assert.Len(t, pw, 64)
	other, err := EnableAuth(ctx, cli)
	assert.Error(t, err, "auth is on: the first client is no longer let in")
	assert.Empty(t, other)
	_, err = Connect([]string{srv.Endpoint}, 5*time.Second)
	assert.ErrorIs(t, err, ErrAuth, "no credentials: refused")
	assert.ErrorContains(t, err, "(no user)")
	_, err = EtcdClient{Endpoints: []string{srv.Endpoint}, User: "root", Password: "not-" + pw}.Connect(5 * time.Second)
	assert.ErrorIs(t, err, ErrAuth)
	root, err := EtcdClient{Endpoints: []string{srv.Endpoint}, User: "root", Password: pw}.Connect(5 * time.Second)
	require.NoError(t, err)
	defer root.Close()
	_, err = root.Put(ctx, "/tierflow/x", "1")
	assert.NoError(t, err)
}
