package store

// The names of a work directory's files and directories, and telling a work directory by them.

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// partName is partition i's file name; ResidentPart names the resident
// table's, resident.bin.
func partName(i int) string {
	if i == ResidentPart {
		return ResidentFile
	}
	return fmt.Sprintf("part-%04d.bin", i)
}
func bucketName(i, j int) string { return fmt.Sprintf("bucket-%04d-%04d.bin", i, j) }

// PartitionPath is the file of partition i in the current checkpoint.
func (s *Store) PartitionPath(i int) string { return PartitionIn(s.CurrentDir(), i) }

// PartitionIn is the file of partition i in a checkpoint directory.
func PartitionIn(dir string, i int) string { return filepath.Join(dir, partName(i)) }

// CurrentDir is the current checkpoint's directory.
func (s *Store) CurrentDir() string {
	if s.view != "" {
		return s.view
	}
	return s.CheckpointDir(s.Current, s.Bucket)
}

// CheckpointDir is the directory of the checkpoint after epoch e and k
// buckets of epoch e+1: partitions/ for (0, 0), ckpt-EEEE after a whole
// epoch, ckpt-EEEE+KKKKKK inside one.
func (s *Store) CheckpointDir(e, k int) string {
	switch {
	case e == 0 && k == 0:
		return filepath.Join(s.Dir, "partitions")
	case k == 0:
		return filepath.Join(s.Dir, fmt.Sprintf("ckpt-%04d", e))
	}
	return filepath.Join(s.Dir, fmt.Sprintf("ckpt-%04d+%06d", e, k))
}

// BucketName is the name of bucket (i, j)'s edge file, relative to the
// work directory (as an object store holds it too).
func BucketName(i, j int) string { return filepath.Join("buckets", bucketName(i, j)) }

// HistogramPath is the bucket histogram in the simulator's format.
func (s *Store) HistogramPath() string { return filepath.Join(s.Dir, "histogram.json") }

// manifestFile is a work directory's manifest: its presence makes the
// directory a work directory.
const manifestFile = "manifest.json"

// LockFile is the lock file of a work directory, inside it
// (workdir.LockWorkdir): a build keeps it.
const LockFile = ".lock"

// buildPrefix starts the name of the directory a build fills inside the
// work directory.
const buildPrefix = ".building-"

// IsWorkdir reports whether dir is a tierflow work directory (it holds a
// manifest).
func IsWorkdir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, manifestFile))
	return err == nil
}

// Unbuilt reports whether dir, a directory without a manifest, may be
// built into: it holds nothing but its lock file, or it is what a build
// that did not finish left (it holds a build directory).
func Unbuilt(dir string) bool { return unbuilt(dir, "") }

// unbuilt is Unbuilt, not counting the build directory own.
func unbuilt(dir, own string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), buildPrefix) && e.Name() != own {
			return true
		}
	}
	for _, e := range entries {
		if e.Name() != LockFile && e.Name() != own {
			return false
		}
	}
	return true
}
