package dist

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/tierflow/tierflow/realrun/store"
)

// Blobs is where partitions and edges move between trainers: the shared
// work directory (a filesystem every trainer sees, PBG's mode without
// partition servers), or an S3-compatible object store.
type Blobs interface {
	// ReadPartition reads partition p of version directory name into buf.
	ReadPartition(name string, p int, buf *store.Buffer) (int64, error)
	// WritePartition writes buf as partition p of version directory name.
	WritePartition(name string, p int, buf *store.Buffer) (int64, error)
	// RemovePartition drops a version nobody reads any more.
	RemovePartition(name string, p int)
	// ReadBucket returns bucket (i, j)'s edges and the bytes read.
	ReadBucket(i, j int) ([]store.Edge, int64, error)
}

// dirBlobs is the shared work directory.
type dirBlobs struct{ st *store.Store }

// DirBlobs is the shared work directory of st.
func DirBlobs(st *store.Store) Blobs { return dirBlobs{st} }

func (d dirBlobs) ReadPartition(name string, p int, buf *store.Buffer) (int64, error) {
	return store.ReadPartitionIn(FilesDir(d.st, name), p, buf)
}

func (d dirBlobs) WritePartition(name string, p int, buf *store.Buffer) (int64, error) {
	dir := FilesDir(d.st, name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, err
	}
	return store.WritePartitionIn(dir, p, buf)
}

func (d dirBlobs) RemovePartition(name string, p int) {
	os.Remove(store.PartitionIn(FilesDir(d.st, name), p))
	os.Remove(FilesDir(d.st, name)) // if empty
}

func (d dirBlobs) ReadBucket(i, j int) ([]store.Edge, int64, error) {
	e, err := d.st.ReadBucket(i, j)
	return e, int64(len(e)) * 12, err
}

// ObjectBucket is the object store's bucket a run keeps its data in.
const ObjectBucket = "tierflow"

// s3Blobs is an S3-compatible object store.
type s3Blobs struct {
	st  *store.Store
	cli *minio.Client
	pre string
}

// S3Blobs opens the object store at endpoint (http://host:port) for the
// run with prefix (objects under it), the work directory st giving the
// manifest.
func S3Blobs(endpoint, prefix string, st *store.Store) (Blobs, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("--blobs %q: want http://host:port", endpoint)
	}
	cli, err := minio.New(u.Host, &minio.Options{Creds: credentials.NewStaticV4("tierflow", "tierflow", ""), Secure: u.Scheme == "https"})
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", endpoint, err)
	}
	return &s3Blobs{st: st, cli: cli, pre: prefix}, nil
}

func (s *s3Blobs) object(parts ...string) string {
	return filepath.ToSlash(filepath.Join(append([]string{s.pre}, parts...)...))
}

func (s *s3Blobs) partObject(name string, p int) string {
	return s.object("dist", name, filepath.Base(store.PartitionIn("", p)))
}

func (s *s3Blobs) get(key string, into []byte) (int64, []byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	o, err := s.cli.GetObject(ctx, ObjectBucket, key, minio.GetObjectOptions{})
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

func (s *s3Blobs) put(key string, b []byte) (int64, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := s.cli.PutObject(ctx, ObjectBucket, key, bytes.NewReader(b), int64(len(b)), minio.PutObjectOptions{DisableMultipart: true}); err != nil {
		return 0, fmt.Errorf("object store: put %s: %w", key, err)
	}
	return int64(len(b)), nil
}

func (s *s3Blobs) ReadPartition(name string, p int, buf *store.Buffer) (int64, error) {
	n, _, err := s.get(s.partObject(name, p), buf.Bytes())
	return n, err
}

func (s *s3Blobs) WritePartition(name string, p int, buf *store.Buffer) (int64, error) {
	return s.put(s.partObject(name, p), buf.Bytes())
}

func (s *s3Blobs) RemovePartition(name string, p int) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s.cli.RemoveObject(ctx, ObjectBucket, s.partObject(name, p), minio.RemoveObjectOptions{})
}

func (s *s3Blobs) ReadBucket(i, j int) ([]store.Edge, int64, error) {
	if s.st.M.Buckets[i][j] == 0 {
		return nil, 0, nil
	}
	n, b, err := s.get(s.object(store.BucketName(i, j)), nil)
	if err != nil {
		return nil, n, err
	}
	e, err := s.st.DecodeBucket(i, j, b)
	return e, n, err
}

// ObjectServer is an S3-compatible object store served from this process
// (gofakes3, in memory): the store the trainers on the test hosts reach
// over their links.
type ObjectServer struct {
	srv *http.Server
	// Endpoint is its URL.
	Endpoint string
}

// StartObjectServer serves an empty in-memory object store on host:port
// (port 0: a free one) with the run's bucket made.
func StartObjectServer(host string, port int) (*ObjectServer, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(host, fmt.Sprint(port)))
	if err != nil {
		return nil, fmt.Errorf("object store: %w", err)
	}
	be := s3mem.New()
	if err := be.CreateBucket(ObjectBucket); err != nil {
		l.Close()
		return nil, fmt.Errorf("object store: %w", err)
	}
	srv := &http.Server{Handler: gofakes3.New(be).Server(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(l)
	return &ObjectServer{srv: srv, Endpoint: "http://" + l.Addr().String()}, nil
}

// Close stops the server.
func (o *ObjectServer) Close() { o.srv.Close() }

// Upload puts the run's first partition versions and every bucket's edges
// into the object store under prefix.
func Upload(b Blobs, st *store.Store) error {
	s, ok := b.(*s3Blobs)
	if !ok {
		return nil // the work directory already holds them
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
			if _, err := s.put(s.object(store.BucketName(i, j)), data); err != nil {
				return err
			}
		}
	}
	return nil
}

// Download copies the run's last partition versions from the object store
// into the work directory's shared store, so that Finish can commit them.
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
		if _, err := s.ReadPartition(name, p, buf); err != nil {
			return err
		}
		if _, err := DirBlobs(st).WritePartition(name, p, buf); err != nil {
			return err
		}
	}
	return nil
}
