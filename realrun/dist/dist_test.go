package dist

import (
	"context"
	"encoding/json"
	"net"
	"path/filepath"
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

type run struct {
	st     *store.Store
	h      realrun.Hyper
	prefix string
	cli    *clientv3.Client
	srv    *Server
}

func newRun(t *testing.T, dataset string, p, epochs int, m workload.Model) *run {
	t.Helper()
	st := fixture.Prepare(t, dataset, 0.0005, p, 16, m)
	srv, cli := server(t)
	sums, err := Prepare(st)
	require.NoError(t, err)
	h := fixture.Hyper(m, 16)
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
