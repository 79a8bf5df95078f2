package dist

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/s3server"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/internal/fixture"
	"github.com/tierflow/tierflow/workload"
)

func TestParseObjectURL(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want ObjectStore
		err  string
	}{
		{"s3://tfx", ObjectStore{Bucket: "tfx"}, ""},
		{"s3://tfx/runs/a/", ObjectStore{Bucket: "tfx", Prefix: "runs/a"}, ""},
		{"s3://tf", ObjectStore{}, `bucket "tf"`},
		{"http://tf/runs", ObjectStore{}, "want s3://BUCKET"},
		{"s3://", ObjectStore{}, "want s3://BUCKET"},
		{"s3://key:secret@tf/runs", ObjectStore{}, "want s3://BUCKET"},
		{"s3://Bad_Bucket", ObjectStore{}, `bucket "Bad_Bucket"`},
		{"tf/runs", ObjectStore{}, "want s3://BUCKET"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseObjectURL(tc.in)
			if tc.err != "" {
				assert.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, strings.TrimSuffix(tc.in, "/"), got.URL())
		})
	}
}

// Two trainers with no work directory — manifest, degrees, edges and
// partitions all from a real S3-compatible server (versitygw), their
// credentials from the environment — train every bucket; the launcher's
// copy of the last versions commits as a checkpoint that verifies.
func TestTrainersThroughObjectStore(t *testing.T) {
	srv := s3server.ForTest(t, "127.0.0.1", "tierflow-test")
	srv.SetEnv(t)
	st := fixture.Prepare(t, "fb15k", 0.0005, 4, 16, workload.ComplEx)
	_, cli := server(t)
	sums, err := Prepare(st)
	require.NoError(t, err)
	ctx := context.Background()
	ob, err := ConnectObjects(ctx, ObjectStore{Bucket: srv.Bucket, Prefix: "runs", Endpoint: srv.Endpoint}, 10*time.Second)
	require.NoError(t, err)
	prefix := NewPrefix(st)
	blobs := ob.Blobs(prefix, st)
	require.NoError(t, Upload(blobs, st))
	h := fixture.Hyper(workload.ComplEx, 16)
	hb, err := json.Marshal(h)
	require.NoError(t, err)
	store := ob.Store
	require.NoError(t, Init(ctx, cli, prefix, Config{Epochs: 2, Seed: 3, Hyper: hb, Objects: &store}, 4, sums))
	// The trainers, in a directory of their own with no work directory.
	t.Chdir(t.TempDir())
	var wg sync.WaitGroup
	eps := make([][]TrainerEpoch, 2)
	errs := make([]error, 2)
	for id := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			eps[id], errs[id] = RunTrainer(ctx, TrainerOptions{Etcd: EtcdClient{Endpoints: []string{srvEndpoint(t, cli)}}, ID: id, Prefix: prefix, Lease: 3 * time.Second})
		}()
	}
	wg.Wait()
	require.NoError(t, errs[0])
	require.NoError(t, errs[1])
	buckets := map[int]int{}
	var read, edges int64
	for _, tr := range eps {
		for _, e := range tr {
			buckets[e.Epoch] += e.Buckets
			read += e.ReadBytes
			edges += e.EdgeBytes
		}
	}
	assert.Equal(t, map[int]int{1: 16, 2: 16}, buckets)
	assert.Positive(t, read, "partitions read from the store")
	assert.Equal(t, 2*12*st.M.Train, edges, "every training edge read from the store once an epoch")
	// The run's objects are the server's files.
	keys, err := srv.Objects("runs/")
	require.NoError(t, err)
	assert.Contains(t, keys, ob.key(prefix, "manifest.json"))
	_, err = os.Stat(filepath.Join(srv.Dir, srv.Bucket, ob.key(prefix, "degrees.bin")))
	assert.NoError(t, err, "versitygw keeps an object as a file")

	s, _, err := Observer(cli, prefix).State(ctx)
	require.NoError(t, err)
	require.NoError(t, Download(blobs, st, s.Files))
	degrees, err := st.Degrees()
	require.NoError(t, err)
	eng, err := realrun.NewEngine(realrun.EngineOptions{Hyper: h, Store: st, Degrees: degrees, Seed: 3, C: 2})
	require.NoError(t, err)
	require.NoError(t, Finish(ctx, cli, prefix, st, eng, 2))
	cps, err := st.Checkpoints()
	require.NoError(t, err)
	require.NoError(t, st.VerifyCheckpoint(cps[len(cps)-1]))

	require.NoError(t, ob.RemoveRun(ctx, prefix))
	keys, err = srv.Objects("runs/")
	require.NoError(t, err)
	assert.Empty(t, keys, "the run's objects removed")
}

// srvEndpoint is the endpoint cli talks to.
func srvEndpoint(t *testing.T, cli interface{ Endpoints() []string }) string {
	t.Helper()
	return cli.Endpoints()[0]
}

// A store that refuses, or is not there, is one error naming it and the
// cause, never the credentials.
func TestConnectObjectsRefused(t *testing.T) {
	srv := s3server.ForTest(t, "127.0.0.1", "tierflow-test")
	good := ObjectStore{Bucket: srv.Bucket, Prefix: "runs", Endpoint: srv.Endpoint}
	creds := filepath.Join(t.TempDir(), "credentials")
	require.NoError(t, os.WriteFile(creds, []byte("[default]\naws_access_key_id = nobody\naws_secret_access_key = wrong\n\n[ci]\naws_access_key_id = "+srv.AccessKey+"\naws_secret_access_key = "+srv.SecretKey+"\n"), 0o600))
	for _, tc := range []struct {
		name   string
		store  ObjectStore
		env    map[string]string
		want   string
		wantOK bool
	}{
		{"env", good, map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey}, "", true},
		{"file profile", good, map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds, "AWS_PROFILE": "ci"}, "", true},
		{"wrong secret", good, map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": "wrong-secret"}, "credentials refused (credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)", false},
		{"unknown key in file", good, map[string]string{"AWS_SHARED_CREDENTIALS_FILE": creds}, "credentials refused (credentials from " + creds + ", profile default)", false},
		{"no credentials", good, map[string]string{}, "no credentials", false},
		{"no bucket", ObjectStore{Bucket: "nope", Endpoint: srv.Endpoint}, map[string]string{"AWS_ACCESS_KEY_ID": srv.AccessKey, "AWS_SECRET_ACCESS_KEY": srv.SecretKey}, `bucket "nope" does not exist`, false},
		{"unreachable", ObjectStore{Bucket: "tfx", Endpoint: "http://127.0.0.1:1"}, map[string]string{"AWS_ACCESS_KEY_ID": "a", "AWS_SECRET_ACCESS_KEY": "b"}, "s3://tfx (http://127.0.0.1:1): not reachable", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, k := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE"} {
				t.Setenv(k, "")
			}
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			t0 := time.Now()
			_, err := ConnectObjects(context.Background(), tc.store, 5*time.Second)
			if tc.wantOK {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrObjectStore)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), srv.SecretKey)
			assert.NotContains(t, err.Error(), "wrong-secret")
			assert.NotContains(t, err.Error(), "\n")
			assert.Less(t, time.Since(t0), 5*time.Second, "refused at once")
		})
	}
}
