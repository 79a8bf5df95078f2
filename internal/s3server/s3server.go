// Package s3server starts a real S3-compatible server for tests:
// versitygw (github.com/versity/versitygw) serving a temporary directory
// through its posix backend, with access keys made up for the test and
// one bucket. make s3-server (scripts/install-versitygw.sh) installs the
// pinned binary into bin/tools/; without it the tests that need it skip,
// unless TIERFLOW_S3_REQUIRED is set (make test sets it), when they fail.
package s3server

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// Version is the versitygw release the tests run (scripts/install-versitygw.sh).
const Version = "v1.8.0"

// Server is a running versitygw.
type Server struct {
	// Endpoint is its URL (http://host:port); AccessKey and SecretKey
	// its root user's keys, random; Bucket the bucket made; Dir the
	// directory it serves (a bucket is a directory of it, an object a
	// file).
	Endpoint, AccessKey, SecretKey, Bucket, Dir string

	cmd  *exec.Cmd
	once sync.Once
	out  bytes.Buffer
}

// Binary is the installed versitygw: $TIERFLOW_VERSITYGW, else the
// repository's bin/tools/versitygw-Version.
func Binary() (string, error) {
	if p := os.Getenv("TIERFLOW_VERSITYGW"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("versitygw at TIERFLOW_VERSITYGW: %w", err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			bin := filepath.Join(dir, "bin", "tools", "versitygw-"+Version)
			if _, err := os.Stat(bin); err != nil {
				return "", fmt.Errorf("versitygw %s not installed (make s3-server installs it into bin/tools/): %w", Version, err)
			}
			return bin, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("versitygw: no go.mod above the working directory")
		}
		dir = up
	}
}

// ForTest starts versitygw on host (a free port) serving a temporary
// directory with bucket made, and stops it when the test ends. It skips
// the test when versitygw is not installed (fails with
// TIERFLOW_S3_REQUIRED set).
func ForTest(t testing.TB, host, bucket string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		if os.Getenv("TIERFLOW_S3_REQUIRED") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	s, err := Start(bin, host, t.TempDir(), bucket)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func randomKey(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// Start runs bin serving dir on host and makes bucket, within 30 s.
func Start(bin, host, dir, bucket string) (*Server, error) {
	s := &Server{AccessKey: "test" + randomKey(8), SecretKey: randomKey(20), Bucket: bucket, Dir: dir}
	var err error
	for range 5 { // a free port, which another process may take first
		var port int
		if port, err = freePort(host); err != nil {
			return nil, err
		}
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		s.Endpoint = "http://" + addr
		s.out.Reset()
		s.cmd = exec.Command(bin, "--port", addr, "--quiet", "posix", dir)
		s.cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+s.AccessKey, "ROOT_SECRET_ACCESS_KEY="+s.SecretKey)
		s.cmd.Stdout, s.cmd.Stderr = &s.out, &s.out
		if err = s.cmd.Start(); err != nil {
			return nil, fmt.Errorf("versitygw: %w", err)
		}
		exited := make(chan struct{})
		go func() { s.cmd.Wait(); close(exited) }()
		if err = s.ready(bucket, exited); err == nil {
			return s, nil
		}
		s.cmd.Process.Kill()
		<-exited
	}
	return nil, fmt.Errorf("versitygw on %s: %w (output: %s)", s.Endpoint, err, bytes.TrimSpace(s.out.Bytes()))
}

// ready waits until the server answers and makes bucket.
func (s *Server) ready(bucket string, exited <-chan struct{}) error {
	cli, err := s.Client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		_, err = cli.ListBuckets(ctx)
		cancel()
		if err == nil {
			break
		}
		select {
		case <-exited:
			return fmt.Errorf("exited: %w", err)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer in 30 s: %w", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cli.MakeBucket(ctx, bucket, minio.MakeBucketOptions{})
}

// SetEnv gives this test's processes, and those it starts, the server's
// keys as AWS's standard environment variables, with no other source
// of credentials.
func (s *Server) SetEnv(t testing.TB) {
	t.Setenv("AWS_ACCESS_KEY_ID", s.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_ENDPOINT_URL", "")
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
}

// Client is a client of the server with its root keys.
func (s *Server) Client() (*minio.Client, error) {
	host := s.Endpoint[len("http://"):]
	return minio.New(host, &minio.Options{Creds: credentials.NewStaticV4(s.AccessKey, s.SecretKey, ""), BucketLookup: minio.BucketLookupPath, Region: "us-east-1"})
}

// Objects lists the keys in the bucket under prefix.
func (s *Server) Objects(prefix string) ([]string, error) {
	cli, err := s.Client()
	if err != nil {
		return nil, err
	}
	var out []string
	for o := range cli.ListObjects(context.Background(), s.Bucket, minio.ListObjectsOptions{Prefix: prefix, Recursive: true}) {
		if o.Err != nil {
			return nil, o.Err
		}
		out = append(out, o.Key)
	}
	return out, nil
}

// Close stops the server.
func (s *Server) Close() {
	s.once.Do(func() {
		s.cmd.Process.Kill()
	})
}

func freePort(host string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
