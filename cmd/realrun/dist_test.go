//go:build !nodist

package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/cmd/internal/distargs"
	"github.com/tierflow/tierflow/internal/s3server"
	"github.com/tierflow/tierflow/internal/testhosts"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/validate"
	"github.com/tierflow/tierflow/workload"
)

// The command at a tiny scale: two trainer processes and an
// embedded etcd, per-trainer occupancy in the JSON.
func TestTrainersJSON(t *testing.T) {
	dir := t.TempDir()
	out, errOut, code := runCmd("--trainers", "2", "--dataset", "twitter", "--scale", "0.0005", "--p", "4", "--dim", "16",
		"--epochs", "2", "--workdir", filepath.Join(dir, "work"), "--json", "--compare-sim")
	require.Equal(t, 0, code, errOut)
	var got struct {
		Trainers int `json:"trainers"`
		Epochs   []struct {
			Seconds  float64             `json:"seconds"`
			Trainers []dist.TrainerEpoch `json:"trainers"`
		} `json:"epochs"`
		MRR       float64          `json:"mrr"`
		Lost      int              `json:"lost"`
		Predicted []dist.Predicted `json:"predicted"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &got))
	assert.Equal(t, 2, got.Trainers)
	require.Len(t, got.Epochs, 2)
	for _, e := range got.Epochs {
		require.Len(t, e.Trainers, 2)
		buckets := 0
		for _, tr := range e.Trainers {
			buckets += tr.Buckets
			assert.Positive(t, tr.Occupancy)
			assert.LessOrEqual(t, tr.Occupancy, 1.0)
		}
		assert.Equal(t, 16, buckets)
	}
	// --compare-sim: the simulator's epochs beside them, with the same saves
	// (every partition of every bucket written back).
	require.Len(t, got.Predicted, 2)
	for i, p := range got.Predicted {
		saves := 0
		for _, tr := range got.Epochs[i].Trainers {
			saves += tr.Saves
		}
		assert.Equal(t, saves, p.Saves)
		assert.Positive(t, p.Seconds)
	}
	assert.Positive(t, got.MRR)
	assert.Zero(t, got.Lost)
}

func TestTrainersBadInput(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--trainers", "0"}, "--trainers 0: must be at least 1"},
		{[]string{"--trainers", "2", "--p", "1"}, "--p 1: several trainers share at least 2 partitions"},
		{[]string{"--trainers", "2", "--lease", "10ms"}, "--lease 10ms: at least 1s"},
		{[]string{"--trainers", "2", "--keep", "best", "--eval", "end"}, "--keep best: needs the validation MRR after each epoch (--eval every)"},
		{[]string{"--trainers", "2", "--early-stop", "-1"}, "--early-stop -1: must not be negative"},
		{[]string{"--trainers", "2", "--timeline", filepath.Join(dir, "t.svg")}, "draws one machine's buffer slots, which several trainers do not share"},
		{[]string{"--trainers", "2", "--etcd", "http://127.0.0.1:1", "--scale", "0.0005", "--p", "4", "--workdir", filepath.Join(dir, "w")}, "etcd not reachable"},
		{[]string{"trainer", "--etcd", "http://127.0.0.1:1", "--store", dir, "--run", "/x", "--id", "0"}, "etcd not reachable"},
		{[]string{"trainer", "--etcd", "http://127.0.0.1:1", "--store", filepath.Join(dir, "nope"), "--run", "/x", "--id", "0"}, "--store " + filepath.Join(dir, "nope") + ": not a directory"},
		{[]string{"trainer", "--store", dir, "--run", "/x", "--id", "0"}, "--etcd: required"},
		{[]string{"trainer", "--etcd", "http://127.0.0.1:1", "--store", dir, "--run", "/x"}, "--id -1: a trainer id ≥ 0"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := runCmd(tc.args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
		})
	}
	_, err := os.Stat(filepath.Join(dir, "w"))
	assert.ErrorIs(t, err, os.ErrNotExist, "an unreachable etcd is refused before the work directory is made")
}

// fixtureRun prepares a work directory and a run in an etcd of the
// test's own.
func fixtureRun(t *testing.T, epochs int) (st *store.Store, endpoint, prefix string, srv *dist.Server) {
	t.Helper()
	st, err := workdir.Prepare(workdir.DataSpec{Dataset: "fb15k", Scale: 0.5, Seed: 3, P: 4, Dim: 64, Model: "complex", Workdir: filepath.Join(t.TempDir(), "work")})
	require.NoError(t, err)
	srv, err = dist.StartServer(filepath.Join(t.TempDir(), "etcd"), "127.0.0.1", 0)
	require.NoError(t, err)
	t.Cleanup(srv.Close)
	cli, err := dist.Connect([]string{srv.Endpoint}, 5*time.Second)
	require.NoError(t, err)
	defer cli.Close()
	sums, err := dist.Prepare(st)
	require.NoError(t, err)
	// Buckets of ~15,000 edges scored against 100 negatives at d = 64 on
	// one worker: a few hundred milliseconds each, against the
	// milliseconds between seeing trainer 1 hold one and killing it.
	h := realrun.Hyper{Training: workload.Training{Model: workload.ComplEx, Dim: 64, Batch: 500, Negatives: 100}, LR: 0.1, Workers: 1}
	hb, err := json.Marshal(h)
	require.NoError(t, err)
	prefix = dist.NewPrefix(st)
	require.NoError(t, dist.Init(context.Background(), cli, prefix, dist.Config{Epochs: epochs, Seed: 3, Hyper: hb}, 4, sums))
	return st, srv.Endpoint, prefix, srv
}

func trainerProc(t *testing.T, endpoint, storeDir, prefix string, id int) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$", "--", "trainer", "--etcd", endpoint, "--store", storeDir, "--run", prefix, "--id", strconv.Itoa(id), "--lease", "2s")
	cmd.Env = append(os.Environ(), "TIERFLOW_AS_REALRUN=1")
	return cmd
}

// kill -9 of one trainer in the middle of a bucket while another runs:
// the epoch completes, no partition is lost or corrupted (every committed
// version verifies against its checksum), the lost work is that one
// bucket, and the trainer, started again with its id, rejoins.
func TestTrainerKilled(t *testing.T) {
	const epochs = 3
	st, ep, prefix, _ := fixtureRun(t, epochs)
	cli, err := dist.Connect([]string{ep}, 5*time.Second)
	require.NoError(t, err)
	defer cli.Close()
	co := dist.Observer(cli, prefix)
	a := trainerProc(t, ep, st.Dir, prefix, 0)
	victim := trainerProc(t, ep, st.Dir, prefix, 1)
	a.Stderr = os.Stderr
	require.NoError(t, a.Start())
	require.NoError(t, victim.Start())
	// Kill trainer 1 while it holds a bucket.
	deadline := time.Now().Add(60 * time.Second)
	for {
		s, _, err := co.State(context.Background())
		require.NoError(t, err)
		if sess, ok := co.Session(context.Background(), 1); ok && holds(s, sess) {
			break
		}
		require.False(t, s.Done(), "the run ended before trainer 1 held a bucket")
		require.True(t, time.Now().Before(deadline), "trainer 1 never held a bucket")
		time.Sleep(5 * time.Millisecond)
	}
	require.NoError(t, victim.Process.Kill())
	victim.Wait()
	// Start it again: refused while its old lease lives, then it rejoins.
	var again *exec.Cmd
	for {
		again = trainerProc(t, ep, st.Dir, prefix, 1)
		out, err := again.CombinedOutput()
		if err == nil {
			t.Logf("restarted trainer: %s", out)
			break
		}
		require.Contains(t, string(out), "already running", "a restart is refused only while the old lease lives")
		require.True(t, time.Now().Before(deadline), "the restarted trainer never rejoined")
		time.Sleep(300 * time.Millisecond)
	}
	require.NoError(t, a.Wait())
	s, _, err := co.State(context.Background())
	require.NoError(t, err)
	assert.True(t, s.Done())
	assert.Equal(t, 1, s.Lost, "the dead trainer's one bucket went back to the pool")
	for p := range s.Files {
		buf, err := st.NewBuffer()
		require.NoError(t, err)
		_, err = store.ReadPartitionChecked(dist.FilesDir(st, s.Files[p]), p, buf, s.Sums[p])
		assert.NoError(t, err, "partition %d", p)
		buf.Free()
	}
	reports, err := dist.Reports(context.Background(), cli, prefix)
	require.NoError(t, err)
	trained := 0
	for e := 1; e <= epochs; e++ {
		for _, tr := range reports[e] {
			trained += tr.Buckets
		}
	}
	// The killed trainer reported nothing for the epoch it died in; every
	// bucket was committed once per epoch.
	assert.LessOrEqual(t, trained, 16*epochs)
	assert.GreaterOrEqual(t, len(reports[epochs]), 1)
}

// holds reports whether the trainer whose lease is session holds a bucket.
func holds(s dist.RunState, session int) bool {
	for _, h := range s.Lock.Holder {
		if h == session {
			return true
		}
	}
	return false
}

// Two trainers on the project's own test hosts, behind links shaped to
// 200 Mbit/s, partitions and edges through the object store — the
// launcher's embedded one, and a real S3-compatible server (versitygw)
// on the gateway with the credentials in the trainers' environment: every
// save and every edge byte is what the simulator predicts for the run.
// Loads depend on which trainer the lock server gave which bucket, which
// the order of requests at etcd decides (make reproduce-distributed
// compares them); here they are bounded by the partitions the buckets use.
func TestTrainersOnTestHosts(t *testing.T) {
	for _, name := range []string{"embedded", "versitygw"} {
		t.Run(name, func(t *testing.T) {
			net := testhosts.ForTest(t, 2, "200mbit")
			objects := &dist.ObjectStore{Embedded: true}
			var srv *s3server.Server
			if name == "versitygw" {
				srv = s3server.ForTest(t, net.Gateway, "tierflow-hosts")
				srv.SetEnv(t)
				objects = &dist.ObjectStore{Bucket: srv.Bucket, Prefix: "runs", Endpoint: srv.Endpoint}
			}
			dir := t.TempDir()
			o := job.Defaults
			o.Dataset, o.Scale, o.P, o.C, o.Dim, o.Epochs, o.Workers, o.Workdir, o.Eval = "twitter", 0.0005, 4, 2, 16, 2, 1, filepath.Join(dir, "work"), "none"
			argv, err := selfArgv()
			require.NoError(t, err)
			out, err := dist.TrainDistributed(context.Background(), o, dist.DistOptions{Trainers: 2, Argv: argv, TrainerArgs: distargs.Trainer, Listen: net.Gateway, Objects: objects, Lease: 5 * time.Second,
				Wrap: func(id int, argv []string) []string {
					return append([]string{"ip", "netns", "exec", net.Hosts[id].Name}, argv...)
				}}, io.Discard)
			require.NoError(t, err)
			if srv != nil {
				assert.Equal(t, "s3://tierflow-hosts/runs", out.Objects)
				assert.Equal(t, srv.Endpoint, out.ObjectsEndpoint)
				keys, err := srv.Objects("runs/")
				require.NoError(t, err)
				assert.Empty(t, keys, "the run's objects removed at its end")
			}
			st, err := store.Open(out.Workdir)
			require.NoError(t, err)
			cps, err := st.Checkpoints()
			require.NoError(t, err)
			require.NoError(t, st.VerifyCheckpoint(cps[len(cps)-1]))
			pred, err := validate.PredictDistributed(validate.DistributedSetup{Manifest: st.M, Trainers: 2, LinkBytes: 25e6, EdgeSeconds: 1e-7, Epochs: 2})
			require.NoError(t, err)
			for i, e := range out.Epochs {
				var saves, loads int
				var edgeBytes int64
				for _, tr := range e.Trainers {
					saves += tr.Saves
					loads += tr.Loads
					edgeBytes += tr.EdgeBytes
				}
				var psaves, ploads int
				for _, tr := range pred.Epochs[i].Trainers {
					psaves += tr.Saves
					ploads += tr.Loads
				}
				assert.Equal(t, psaves, saves, "epoch %d saves", e.Epoch)
				assert.Equal(t, int64(pred.Epochs[i].EdgeBytes), edgeBytes, "epoch %d edge bytes", e.Epoch)
				assert.LessOrEqual(t, loads, saves, "epoch %d: a bucket loads at most its partitions", e.Epoch)
				assert.Positive(t, ploads)
			}
		})
	}
}

// Two trainers through a real S3-compatible server (versitygw) at a URL,
// the credentials from the environment or a shared credentials file's
// profile: the trainers get no work directory (every byte they need is in
// the store), the output names the store and never the credentials, the
// run ends in a checkpoint that verifies and leaves no object behind.
func TestTrainersObjectStore(t *testing.T) {
	srv := s3server.ForTest(t, "127.0.0.1", "tierflow-runs")
	creds := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("[tierflow]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = "+srv.SecretKey+"\n"), 0o600))
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
	}{
		{"environment, JSON", map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey}, []string{"--objects-endpoint", srv.Endpoint, "--json"}},
		{"credentials file, endpoint from AWS_ENDPOINT_URL, table", map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_PROFILE": "tierflow", "AWS_ENDPOINT_URL": srv.Endpoint}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.SetEnv(t)
			t.Setenv("AWS_ACCESS_KEY_ID", "")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			dir := t.TempDir()
			work := filepath.Join(dir, "work")
			out, errOut, code := runCmd(append([]string{"--trainers", "2", "--objects", "s3://tierflow-runs/team/runs", "--dataset", "twitter", "--scale", "0.0005", "--p", "4", "--dim", "16",
				"--epochs", "2", "--workdir", work, "--progress", "none"}, tc.args...)...)
			require.Equal(t, 0, code, errOut)
			for _, secret := range []string{srv.SecretKey, srv.AccessKey} {
				assert.NotContains(t, out, secret)
				assert.NotContains(t, errOut, secret)
			}
			// A trainer elsewhere needs no --store, and cannot read the
			// work directory's password file: the password goes in its
			// environment, the line says where to find it.
			assert.Regexp(t, `join another with: TIERFLOW_ETCD_PASSWORD=… realrun trainer --etcd \S+ --etcd-user root --run \S+ --id N --lease 5s; the password is the first line of \S+/dist/etcd-password on this machine\)`, errOut)
			assert.NotContains(t, errOut, "--store")
			assert.NotContains(t, errOut, "--etcd-password-file")
			if slices.Contains(tc.args, "--json") {
				var got dist.DistOutput
				require.NoError(t, json.Unmarshal([]byte(out), &got))
				assert.Equal(t, "s3://tierflow-runs/team/runs", got.Objects)
				assert.Equal(t, srv.Endpoint, got.ObjectsEndpoint)
				assert.False(t, got.ObjectsEmbedded)
				require.Len(t, got.Epochs, 2)
				for _, e := range got.Epochs {
					buckets := 0
					var read, edges int64
					for _, tr := range e.Trainers {
						buckets, read, edges = buckets+tr.Buckets, read+tr.ReadBytes, edges+tr.EdgeBytes
					}
					assert.Equal(t, 16, buckets)
					assert.Positive(t, read, "partitions read from the store")
					assert.Equal(t, 12*got.TrainEdges, edges, "every training edge read from the store")
				}
			} else {
				assert.Contains(t, out, "partitions through the object store s3://tierflow-runs/team/runs at "+srv.Endpoint+";")
			}
			st, err := store.Open(work)
			require.NoError(t, err)
			assert.Equal(t, 2, st.Current)
			cps, err := st.Checkpoints()
			require.NoError(t, err)
			require.NoError(t, st.VerifyCheckpoint(cps[len(cps)-1]))
			keys, err := srv.Objects("team/")
			require.NoError(t, err)
			assert.Empty(t, keys, "the run's objects removed at its end")
		})
	}
}

// An object store that cannot be used — wrong credentials, none, a server
// that does not answer, no such bucket — is one line and exit 2, before
// the work directory is made; and so for a trainer of a run through it.
func TestObjectStoreRefused(t *testing.T) {
	srv := s3server.ForTest(t, "127.0.0.1", "tierflow-runs")
	etcd, err := dist.StartServer(filepath.Join(t.TempDir(), "etcd"), "127.0.0.1", 0)
	require.NoError(t, err)
	t.Cleanup(etcd.Close)
	cli, err := dist.Connect([]string{etcd.Endpoint}, 5*time.Second)
	require.NoError(t, err)
	defer cli.Close()
	// Runs in etcd, one through the store and one through a shared
	// directory: a trainer reads which from the run's config.
	require.NoError(t, dist.Init(context.Background(), cli, "/s3", dist.Config{Epochs: 1, Objects: &dist.ObjectStore{Bucket: srv.Bucket, Prefix: "runs", Endpoint: srv.Endpoint}}, 2, make([]uint64, 2)))
	require.NoError(t, dist.Init(context.Background(), cli, "/dir", dist.Config{Epochs: 1}, 2, make([]uint64, 2)))
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	launch := func(endpoint string) []string {
		return []string{"--trainers", "2", "--objects", "s3://tierflow-runs/runs", "--objects-endpoint", endpoint, "--scale", "0.0005", "--p", "4", "--workdir", work}
	}
	good := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey}
	wrong := map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": "not-the-secret"}
	for _, tc := range []struct {
		name string
		env  map[string]string
		args []string
		want string
	}{
		{"wrong secret", wrong, launch(srv.Endpoint), "realrun: object store s3://tierflow-runs/runs (" + srv.Endpoint + "): credentials refused (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)"},
		{"no credentials", nil, launch(srv.Endpoint), "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"},
		{"unreachable", good, launch("http://127.0.0.1:1"), "object store s3://tierflow-runs/runs (http://127.0.0.1:1): not reachable"},
		{"no bucket", good, []string{"--trainers", "2", "--objects", "s3://no-such-bucket", "--objects-endpoint", srv.Endpoint, "--workdir", work}, `bucket "no-such-bucket" does not exist`},
		{"trainer, wrong secret", wrong, []string{"trainer", "--etcd", etcd.Endpoint, "--run", "/s3", "--id", "0"}, "credentials refused"},
		{"trainer, no store for a shared-directory run", good, []string{"trainer", "--etcd", etcd.Endpoint, "--run", "/dir", "--id", "0"}, "--store: required: the run moves its partitions through its shared work directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv.SetEnv(t)
			t.Setenv("AWS_ACCESS_KEY_ID", "")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			out, errOut, code := runCmd(tc.args...)
			assert.Equal(t, 2, code, errOut)
			assert.Empty(t, out)
			assert.Equal(t, 1, strings.Count(errOut, "\n"), errOut)
			assert.Contains(t, errOut, tc.want)
			assert.NotContains(t, errOut, srv.SecretKey)
			assert.NotContains(t, errOut, "not-the-secret")
			_, err := os.Stat(work)
			assert.ErrorIs(t, err, os.ErrNotExist, "refused before the work directory is made")
		})
	}
}
