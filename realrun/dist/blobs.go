package dist

import (
	"os"

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
