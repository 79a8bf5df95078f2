// Package atomicfile writes output files so that a failure never leaves a
// half-written file behind: through a temporary file in the same directory,
// renamed into place only when complete.
package atomicfile

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/devices"
)

// Write writes a file through write into a temporary file in the same
// directory and renames it to path on success. Every output file of
// tierflow is written this way.
func Write(path string, write func(io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	if err = write(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(0o644); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// WriteBytes writes data to path as Write does.
func WriteBytes(path string, data []byte) error {
	return Write(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// CheckWritable reports, before any work, whether Write could create
// path: its directory exists and takes a new file, and path is not a
// directory. Nothing is left behind.
func CheckWritable(path string) error {
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("%s is a directory", path)
	}
	dir := filepath.Dir(path)
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("%s: directory %s: %w", path, dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s: %s is not a directory", path, dir)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", path, dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

// Announce writes one line to w saying that path was written and how big
// it is ("wrote emb.npy (41.2 MB)"), as every command does for every file
// it writes.
func Announce(w io.Writer, path string) {
	size := "?"
	if fi, err := os.Stat(path); err == nil {
		size = devices.Bytes(fi.Size()).Approx()
	}
	fmt.Fprintf(w, "wrote %s (%s)\n", path, size)
}
