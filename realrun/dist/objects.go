package dist

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
	"github.com/minio/minio-go/v7/pkg/s3utils"

	"github.com/tierflow/tierflow/realrun/dist/internal/memobjects"
	"github.com/tierflow/tierflow/realrun/store"
)

// ObjectStore is an S3-compatible object store a run moves its data
// through — partitions, edges, the manifest and the degrees — and where in
// it: the bucket and a key prefix (s3://Bucket/Prefix). Every trainer
// reaches it with its own credentials, taken from the standard
// environment variables (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN) or the shared credentials file
// (AWS_SHARED_CREDENTIALS_FILE, else ~/.aws/credentials; profile
// AWS_PROFILE, else default); none of them is ever part of an
// ObjectStore, so it travels through etcd as it is.
type ObjectStore struct {
	Bucket string `json:"bucket"`
	Prefix string `json:"prefix,omitempty"`
	// Endpoint is an S3-compatible server's URL (http://host:9000),
	// addressed path-style; "" is AWS S3 (virtual-hosted style).
	Endpoint string `json:"endpoint,omitempty"`
	// Region is the bucket's region ("": asked of the server).
	Region string `json:"region,omitempty"`
	// Embedded is the in-memory store the launcher serves itself
	// (internal/memobjects), which checks no signature: requests go
	// unsigned.
	Embedded bool `json:"embedded,omitempty"`
}

// ErrObjectStore marks an object store that cannot be used: a URL that is
// not one, no credentials, credentials the server refuses, a server that
// does not answer, a bucket that does not exist.
var ErrObjectStore = errors.New("object store")

// ParseObjectURL reads s3://BUCKET[/PREFIX].
func ParseObjectURL(s string) (ObjectStore, error) {
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "s3" || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return ObjectStore{}, fmt.Errorf("%q: want s3://BUCKET or s3://BUCKET/PREFIX", s)
	}
	if err := s3utils.CheckValidBucketNameStrict(u.Host); err != nil {
		return ObjectStore{}, fmt.Errorf("%q: bucket %q: %w", s, u.Host, err)
	}
	return ObjectStore{Bucket: u.Host, Prefix: strings.Trim(u.Path, "/")}, nil
}

// CheckEndpoint checks an S3-compatible server's URL: http(s)://HOST[:PORT].
func CheckEndpoint(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Trim(u.Path, "/") != "" || u.RawQuery != "" || u.User != nil {
		return fmt.Errorf("%q: want http://HOST:PORT or https://HOST[:PORT]", s)
	}
	return nil
}

// URL is s3://Bucket/Prefix.
func (o ObjectStore) URL() string {
	if o.Prefix == "" {
		return "s3://" + o.Bucket
	}
	return "s3://" + o.Bucket + "/" + o.Prefix
}

// String names the store as a run's output does: its URL and, for an
// S3-compatible server, the server — never the credentials.
func (o ObjectStore) String() string {
	switch {
	case o.Embedded:
		return "the embedded object store " + o.Endpoint + " (in this process's memory)"
	case o.Endpoint != "":
		return o.URL() + " at " + o.Endpoint
	}
	return o.URL()
}

// where is the store in an error message.
func (o ObjectStore) where() string {
	if o.Endpoint != "" {
		return o.URL() + " (" + o.Endpoint + ")"
	}
	return o.URL()
}

// Objects is a connection to an object store, checked: the credentials
// are accepted and the bucket exists.
type Objects struct {
	Store ObjectStore
	cli   *minio.Client
}

// credentialSource says where the credentials come from, for an error
// message (the variable or file, never a value).
func credentialSource() string {
	if os.Getenv("AWS_ACCESS_KEY_ID") != "" || os.Getenv("AWS_ACCESS_KEY") != "" {
		return "credentials from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	}
	file := os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if file == "" {
		file = "~/.aws/credentials"
	}
	profile := os.Getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	return fmt.Sprintf("credentials from %s, profile %s", file, profile)
}

// ConnectObjects opens the object store o and checks, within timeout,
// that it answers, takes this process's credentials and holds the bucket.
func ConnectObjects(ctx context.Context, o ObjectStore, timeout time.Duration) (*Objects, error) {
	host, secure := "s3.amazonaws.com", true
	lookup := minio.BucketLookupAuto
	if o.Endpoint != "" {
		if err := CheckEndpoint(o.Endpoint); err != nil {
			return nil, fmt.Errorf("%w %s: endpoint %w", ErrObjectStore, o.URL(), err)
		}
		u, _ := url.Parse(o.Endpoint)
		host, secure, lookup = u.Host, u.Scheme == "https", minio.BucketLookupPath
	}
	var creds *credentials.Credentials
	if o.Embedded {
		creds = credentials.New(&credentials.Static{Value: credentials.Value{SignerType: credentials.SignatureAnonymous}})
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{&credentials.EnvAWS{}, &credentials.FileAWSCredentials{}})
		v, err := creds.Get()
		if err != nil || v.AccessKeyID == "" || v.SecretAccessKey == "" {
			return nil, fmt.Errorf("%w %s: no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or give them in AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials (profile AWS_PROFILE)", ErrObjectStore, o.where())
		}
	}
	opts := &minio.Options{Creds: creds, Secure: secure, Region: o.Region, BucketLookup: lookup}
	cli, err := minio.New(host, opts)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrObjectStore, o.where(), err)
	}
	// The check fails fast: one try, not the client's ten.
	popts := *opts
	popts.MaxRetries = 1
	probe, err := minio.New(host, &popts)
	if err != nil {
		return nil, fmt.Errorf("%w %s: %w", ErrObjectStore, o.where(), err)
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	prefix := o.Prefix
	if prefix != "" {
		prefix += "/"
	}
	for obj := range probe.ListObjects(ctx, o.Bucket, minio.ListObjectsOptions{Prefix: prefix, MaxKeys: 1}) {
		if obj.Err != nil {
			return nil, describe(o, obj.Err)
		}
		break
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w %s: not reachable: no answer within %s", ErrObjectStore, o.where(), timeout)
	}
	return &Objects{Store: o, cli: cli}, nil
}

// describe is the one line for an object store that refused the check.
func describe(o ObjectStore, err error) error {
	resp := minio.ToErrorResponse(err)
	code := resp.Code
	if resp.StatusCode == http.StatusForbidden || strings.HasSuffix(code, "UserNotFound") {
		code = "AccessDenied" // however the server names it (versitygw: XAdminUserNotFound)
	}
	switch code {
	case "":
		var ne net.Error
		var ue *url.Error
		if errors.As(err, &ne) || errors.As(err, &ue) {
			return fmt.Errorf("%w %s: not reachable: %w", ErrObjectStore, o.where(), err)
		}
		return fmt.Errorf("%w %s: %w", ErrObjectStore, o.where(), err)
	case "NoSuchBucket":
		return fmt.Errorf("%w %s: bucket %q does not exist (make it first)", ErrObjectStore, o.where(), o.Bucket)
	case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "InvalidToken", "ExpiredToken", "InvalidSecurity":
		msg := resp.Message
		if msg == "" {
			msg = resp.Code
		}
		msg = strings.TrimSuffix(msg, ".")
		if resp.Code == "AccessDenied" {
			msg += "; a run lists, gets, puts and deletes objects under " + o.URL()
		}
		return fmt.Errorf("%w %s: credentials refused (%s): %s", ErrObjectStore, o.where(), credentialSource(), msg)
	}
	return fmt.Errorf("%w %s: %s: %s", ErrObjectStore, o.where(), resp.Code, resp.Message)
}

// key is the object named by parts under the store's prefix.
func (ob *Objects) key(parts ...string) string {
	var keep []string
	for _, p := range append([]string{ob.Store.Prefix}, parts...) {
		if p = strings.Trim(filepath.ToSlash(p), "/"); p != "" {
			keep = append(keep, p)
		}
	}
	return path.Join(keep...)
}

func (ob *Objects) get(key string, into []byte) (int64, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o, err := ob.cli.GetObject(ctx, ob.Store.Bucket, key, minio.GetObjectOptions{})
	if err != nil {
		return 0, nil, fmt.Errorf("object store: get %s: %w", key, err)
	}
	defer o.Close()
	if into != nil {
		n, err := io.ReadFull(o, into)
		if err != nil {
			return int64(n), nil, fmt.Errorf("object store: get %s: %w", key, err)
		}
		return int64(n), into, nil
	}
	b, err := io.ReadAll(o)
	if err != nil {
		return int64(len(b)), nil, fmt.Errorf("object store: get %s: %w", key, err)
	}
	return int64(len(b)), b, nil
}

// multipartFrom is the size from which an object is put in parts (a
// single PUT takes at most 5 GiB).
const multipartFrom = 1 << 30

func (ob *Objects) put(key string, b []byte) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	opts := minio.PutObjectOptions{DisableMultipart: len(b) < multipartFrom, ContentType: "application/octet-stream"}
	if !opts.DisableMultipart {
		opts.PartSize = 256 << 20
	}
	if _, err := ob.cli.PutObject(ctx, ob.Store.Bucket, key, bytes.NewReader(b), int64(len(b)), opts); err != nil {
		return 0, fmt.Errorf("object store: put %s: %w", key, err)
	}
	return int64(len(b)), nil
}

// RemoveRun removes every object of run (the launcher, once the work
// directory holds its result).
func (ob *Objects) RemoveRun(ctx context.Context, run string) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	keys := ob.cli.ListObjects(ctx, ob.Store.Bucket, minio.ListObjectsOptions{Prefix: ob.key(run) + "/", Recursive: true})
	for e := range ob.cli.RemoveObjectsWithResult(ctx, ob.Store.Bucket, keys, minio.RemoveObjectsOptions{}) {
		if e.Err != nil {
			return fmt.Errorf("object store: remove %s: %w", e.ObjectName, e.Err)
		}
	}
	return ctx.Err()
}

// The files of a work directory a trainer needs besides partitions and
// edges: the manifest and the degrees.
var runFiles = []string{"manifest.json", "degrees.bin"}

// FetchStore copies run's manifest and degrees from the object store into
// dir and opens it as the run's store: a trainer needs no work directory.
func (ob *Objects) FetchStore(run, dir string) (*store.Store, error) {
	for _, name := range runFiles {
		_, b, err := ob.get(ob.key(run, name), nil)
		if err != nil {
			return nil, fmt.Errorf("%w: run %s: %w", ErrNotShared, run, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return nil, err
		}
	}
	return store.Open(dir)
}

// s3Blobs is a run's data in an object store: objects under the store's
// prefix and the run's etcd prefix.
type s3Blobs struct {
	ob  *Objects
	st  *store.Store
	run string
}

// Blobs is run's data in the object store, st giving the manifest.
func (ob *Objects) Blobs(run string, st *store.Store) Blobs {
	return &s3Blobs{ob: ob, st: st, run: run}
}

func (s *s3Blobs) partObject(name string, p int) string {
	return s.ob.key(s.run, "dist", name, filepath.Base(store.PartitionIn("", p)))
}

func (s *s3Blobs) ReadPartition(name string, p int, buf *store.Buffer) (int64, error) {
	n, _, err := s.ob.get(s.partObject(name, p), buf.Bytes())
	return n, err
}

func (s *s3Blobs) WritePartition(name string, p int, buf *store.Buffer) (int64, error) {
	return s.ob.put(s.partObject(name, p), buf.Bytes())
}

func (s *s3Blobs) RemovePartition(name string, p int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.ob.cli.RemoveObject(ctx, s.ob.Store.Bucket, s.partObject(name, p), minio.RemoveObjectOptions{})
}

func (s *s3Blobs) ReadBucket(i, j int) ([]store.Edge, int64, error) {
	if s.st.M.Buckets[i][j] == 0 {
		return nil, 0, nil
	}
	n, b, err := s.ob.get(s.ob.key(s.run, store.BucketName(i, j)), nil)
	if err != nil {
		return nil, n, err
	}
	e, err := s.st.DecodeBucket(i, j, b)
	return e, n, err
}

// ObjectBucket is the embedded object store's bucket.
const ObjectBucket = "tierflow"

// ObjectServer is an S3-compatible object store served from this process
// (in memory: internal/memobjects): a run's store when the user names
// none, the one trainers on other machines, or on the test hosts, reach
// over the network.
type ObjectServer struct {
	srv *memobjects.Server
	// Endpoint is its URL.
	Endpoint string
}

// StartObjectServer serves an empty in-memory object store on host:port
// (port 0: a free one) with ObjectBucket made.
func StartObjectServer(host string, port int) (*ObjectServer, error) {
	srv, err := memobjects.Start(host, port, ObjectBucket)
	if err != nil {
		return nil, err
	}
	return &ObjectServer{srv: srv, Endpoint: srv.Endpoint}, nil
}

// Store is the server as a run's object store.
func (o *ObjectServer) Store() ObjectStore {
	return ObjectStore{Bucket: ObjectBucket, Endpoint: o.Endpoint, Embedded: true}
}

// Close stops the server.
func (o *ObjectServer) Close() { o.srv.Close() }

// Upload puts what a trainer needs of the work directory st — its
// manifest and degrees, every bucket's edges and the first version of
// every partition — into the object store b (nothing for the shared
// directory, which holds them already).
func Upload(b Blobs, st *store.Store) error {
	s, ok := b.(*s3Blobs)
	if !ok {
		return nil
	}
	for _, name := range runFiles {
		data, err := os.ReadFile(filepath.Join(st.Dir, name))
		if err != nil {
			return err
		}
		if _, err := s.ob.put(s.ob.key(s.run, name), data); err != nil {
			return err
		}
	}
	buf, err := st.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	for p := range st.M.P {
		if _, err := store.ReadPartitionIn(st.CurrentDir(), p, buf); err != nil {
			return err
		}
		if _, err := s.WritePartition(InitialFiles, p, buf); err != nil {
			return err
		}
	}
	for i := range st.M.P {
		for j := range st.M.P {
			if st.M.Buckets[i][j] == 0 {
				continue
			}
			data, err := os.ReadFile(filepath.Join(st.Dir, store.BucketName(i, j)))
			if err != nil {
				return err
			}
			if _, err := s.ob.put(s.ob.key(s.run, store.BucketName(i, j)), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// Download copies the run's partition versions files from the object
// store into the work directory's shared store, so that the launcher can
// commit them.
func Download(b Blobs, st *store.Store, files []string) error {
	s, ok := b.(*s3Blobs)
	if !ok {
		return nil
	}
	buf, err := st.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	for p, name := range files {
		if name == InitialFiles {
			continue // Prepare linked it from the checkpoint
		}
		if _, err := s.ReadPartition(name, p, buf); err != nil {
			return err
		}
		if _, err := DirBlobs(st).WritePartition(name, p, buf); err != nil {
			return err
		}
	}
	return nil
}
