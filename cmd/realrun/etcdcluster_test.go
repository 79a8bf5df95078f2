//go:build !nodist

package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/distargs"
	"github.com/tierflow/tierflow/internal/s3server"
	"github.com/tierflow/tierflow/internal/testhosts"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
)

// kill is what killMember saw: the member it killed, whether it led,
// the epoch, and how long after the kill the run committed its next
// bucket.
type kill struct {
	member  int
	leader  bool
	epoch   int
	recover time.Duration
	objects int // the run's objects on the S3 server after the next commit
	err     error
}

// killMember waits, watching the run's state in etcd, until epoch 2
// has a bucket being trained, kills a member of c (the leader, or a
// follower) and measures the time to the next commit.
func killMember(c *dist.Cluster, prefix string, leader bool, done chan<- kill) {
	k := kill{member: -1}
	defer func() { done <- k }()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cli, err := c.Client.Connect(10 * time.Second)
	if err != nil {
		k.err = err
		return
	}
	defer cli.Close()
	obs := dist.Observer(cli, prefix)
	for {
		s, rev, err := obs.State(ctx)
		if err != nil {
			k.err = err
			return
		}
		if s.Done() || s.Epoch > 2 {
			k.err = fmt.Errorf("epoch %d: the run passed epoch 2 before a member was killed", s.Epoch)
			return
		}
		if s.Epoch == 2 && s.Lock.Active() > 0 {
			k.epoch = s.Epoch
			break
		}
		obs.Wait(ctx, rev, 5*time.Second)
	}
	lead, err := c.Leader(ctx, cli)
	if err != nil {
		k.err = err
		return
	}
	k.member, k.leader = (lead+1)%len(c.Members), leader
	if leader {
		k.member = lead
	}
	t0 := time.Now()
	if k.err = c.Kill(k.member); k.err != nil {
		return
	}
	// The next commit: a bucket's versions change.
	s0, rev, err := stateAfter(ctx, obs)
	if err != nil {
		k.err = err
		return
	}
	for {
		obs.Wait(ctx, rev, 5*time.Second)
		s, r, err := stateAfter(ctx, obs)
		if err != nil {
			k.err = err
			return
		}
		if committed(s0, s) {
			k.recover = time.Since(t0)
			return
		}
		rev = r
	}
}

// stateAfter reads the state, waiting out the election a killed member
// may cause.
func stateAfter(ctx context.Context, obs *dist.Coord) (dist.RunState, int64, error) {
	for {
		s, rev, err := obs.State(ctx)
		if err == nil || ctx.Err() != nil {
			return s, rev, err
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// committed reports whether b holds a bucket committed after a.
func committed(a, b dist.RunState) bool {
	if a.Epoch != b.Epoch {
		return true
	}
	for p := range a.Versions {
		if a.Versions[p] != b.Versions[p] {
			return true
		}
	}
	return false
}

// A run on three etcd members, processes of their own (realrun
// --etcd-members 3), loses one in the middle of an epoch, a bucket being
// trained: a follower, and separately the leader. The run completes,
// every partition of every checkpoint verifies against its checksum,
// every epoch trained every bucket, and what was lost is at most the
// bucket in flight (a trainer whose lease lapsed in the election).
// The launcher itself runs no member: losing one is losing a process.
// On the project's test hosts (root), each member is on a host of its
// own, its client and peer traffic through a shaped link, and each
// trainer on one of them; the last case also moves every partition
// through a real S3-compatible server (versitygw) at a URL, with the
// credentials in the environment.
func TestEtcdMemberLost(t *testing.T) {
	argv, err := selfArgv()
	require.NoError(t, err)
	for _, tc := range []struct {
		name      string
		leader    bool
		testHosts bool
		s3        bool // partitions through a real S3-compatible server (versitygw) at a URL
	}{{"a follower", false, false, false}, {"the leader", true, false, false}, {"the leader, members on test hosts", true, true, false},
		{"the leader, members on test hosts, partitions through versitygw", true, true, true}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			o := job.Defaults
			o.Dataset, o.Scale, o.P, o.C, o.Dim, o.Epochs, o.Workers, o.Workdir, o.Eval = "fb15k", 0.3, 4, 2, 64, 3, 1, filepath.Join(dir, "work"), "none"
			o.Model, o.Batch, o.Negatives = "complex", 500, 100
			killed := make(chan kill, 1)
			var srv *s3server.Server // set before the run starts, read by OnCluster's goroutine
			d := dist.DistOptions{Trainers: 2, Members: 3, Argv: argv, Lease: 5 * time.Second,
				TrainerArgs: distargs.Trainer, MemberArgs: distargs.Member,
				OnCluster: func(c *dist.Cluster, prefix string) {
					seen := make(chan kill, 1)
					go killMember(c, prefix, tc.leader, seen)
					go func() {
						k := <-seen
						if srv != nil && k.err == nil {
							keys, err := srv.Objects("runs/")
							k.objects, k.err = len(keys), err
						}
						killed <- k
					}()
				}}
			if tc.testHosts {
				net := testhosts.ForTest(t, 3, "1gbit")
				d.Listen = net.Gateway
				inHost := func(i int, argv []string) []string {
					return append([]string{"ip", "netns", "exec", net.Hosts[i].Name}, argv...)
				}
				d.Wrap, d.WrapMember = inHost, inHost
				for _, h := range net.Hosts {
					d.MemberHosts = append(d.MemberHosts, h.Addr)
				}
				if tc.s3 {
					srv = s3server.ForTest(t, net.Gateway, "tierflow-members")
					srv.SetEnv(t)
					d.Objects = &dist.ObjectStore{Bucket: srv.Bucket, Prefix: "runs", Endpoint: srv.Endpoint}
				}
			}
			start := time.Now()
			out, err := dist.TrainDistributed(context.Background(), o, d, io.Discard)
			require.NoError(t, err)
			k := <-killed
			require.NoError(t, k.err)
			assert.Equal(t, 3, out.Members)
			if srv != nil {
				assert.Equal(t, "s3://tierflow-members/runs", out.Objects)
				assert.Equal(t, srv.Endpoint, out.ObjectsEndpoint)
				assert.Positive(t, k.objects, "partitions, edges and the manifest on the server in the middle of the run")
				keys, err := srv.Objects("runs/")
				require.NoError(t, err)
				assert.Empty(t, keys, "the run's objects removed at its end")
			}
			assert.Empty(t, out.Failed, "no trainer failed")
			assert.LessOrEqual(t, out.Lost, 1, "at most the bucket in flight")
			require.Len(t, out.Epochs, 3)
			var perEpoch []int
			for _, e := range out.Epochs {
				n := 0
				for _, tr := range e.Trainers {
					n += tr.Buckets
				}
				perEpoch = append(perEpoch, n)
				// Trained counts a bucket whose commit was refused too.
				assert.GreaterOrEqual(t, n, 16, "epoch %d: every bucket trained", e.Epoch)
				assert.LessOrEqual(t, n, 16+out.Lost, "epoch %d", e.Epoch)
			}
			st, err := store.Open(out.Workdir)
			require.NoError(t, err)
			cps, err := st.Checkpoints()
			require.NoError(t, err)
			require.NotEmpty(t, cps)
			for _, c := range cps {
				assert.NoError(t, st.VerifyCheckpoint(c), "checkpoint %s", c.Dir)
			}
			assert.Equal(t, 3, cps[len(cps)-1].Epoch, "the last epoch is committed")
			t.Logf("killed member %d (leader: %v) in epoch %d; next commit %.2f s after the kill (%d of the run's objects on the S3 server then); buckets trained per epoch %v; lost %d; run %.1f s; epochs %.1f/%.1f/%.1f s",
				k.member, k.leader, k.epoch, k.recover.Seconds(), k.objects, perEpoch, out.Lost, time.Since(start).Seconds(), out.Epochs[0].Seconds, out.Epochs[1].Seconds, out.Epochs[2].Seconds)
		})
	}
}
