package workdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/tierflow/tierflow/realrun/store"
)

// ErrLocked is wrapped when another process holds a work directory.
var ErrLocked = errors.New("work directory in use")

// ErrNotWorkdir is wrapped when a path to lock exists and is not a
// tierflow work directory: nothing is written into it.
var ErrNotWorkdir = errors.New("not a tierflow work directory")

// LockPath is the lock file of a work directory: inside it
// (store.LockFile), so that a writable work directory in a read-only
// parent can be used. Building the directory keeps it: the build fills
// the directory in place (store.Builder), never replaces it.
func LockPath(workdir string) string { return filepath.Join(workdir, store.LockFile) }

// lockTries bounds the retries when the lock file or the directory is
// removed under us by the process that held it.
const lockTries = 100

// LockWorkdir takes the advisory lock (flock) of a work directory, with
// this process's id written in the lock file, and returns the function
// that releases it. A work directory that does not exist yet is made
// (and removed again on release if it is still empty then). A lock held
// by a live process is an error wrapping ErrLocked that names its process
// id; the lock of a process that died (even by SIGKILL) is released by
// the kernel and does not block. A path that is not a work directory — a
// file, or a folder with anything but a lock or an unfinished build in
// it — is an error wrapping ErrNotWorkdir, and nothing is written there.
func LockWorkdir(workdir string) (unlock func(), err error) {
	return LockDir(workdir, func(dir string) bool { return store.IsWorkdir(dir) || store.Unbuilt(dir) })
}

// LockDir is LockWorkdir for a kind of work directory that ours
// recognises (the GNN trainer's, realrun/gnn): an existing directory
// for which ours is false is an error wrapping ErrNotWorkdir, and
// nothing is written there.
func LockDir(workdir string, ours func(dir string) bool) (unlock func(), err error) {
	dir := filepath.Clean(workdir)
	path := LockPath(dir)
	if fi, err := os.Stat(dir); err == nil && (!fi.IsDir() || !ours(dir)) {
		return nil, fmt.Errorf("%s exists and is %w", workdir, ErrNotWorkdir)
	}
	created := false
	for try := 0; ; try++ {
		if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
			if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
				return nil, err
			}
			if err := os.Mkdir(dir, 0o755); err == nil {
				created = true
			} else if !errors.Is(err, os.ErrExist) {
				return nil, err
			}
		}
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if errors.Is(err, os.ErrNotExist) && try < lockTries {
			continue // the directory went, given up by the process that made it
		}
		if err != nil {
			return nil, err
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			holder, _ := os.ReadFile(path)
			f.Close()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				return nil, fmt.Errorf("%s is used by process %s (lock %s): %w", workdir, strings.TrimSpace(string(holder)), path, ErrLocked)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		// The holder before us may have removed the file after we opened
		// it: then our lock is on a file nobody else sees; retry.
		fi, err1 := f.Stat()
		pi, err2 := os.Stat(path)
		if err1 != nil || err2 != nil || !os.SameFile(fi, pi) {
			f.Close()
			if try < lockTries {
				continue
			}
			return nil, fmt.Errorf("lock %s: removed as it was taken, %d times", path, lockTries)
		}
		if err := f.Truncate(0); err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() {
			os.Remove(path)
			f.Close()
			if created {
				os.Remove(dir) // only when empty: a failed first run leaves nothing
			}
		}, nil
	}
}
