package workdir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// ErrLocked is wrapped when another process holds a work directory.
var ErrLocked = errors.New("work directory in use")

// LockPath is the lock file of a work directory: beside it, because
// preparing a work directory replaces the directory itself.
func LockPath(workdir string) string { return filepath.Clean(workdir) + ".lock" }

// LockWorkdir takes the advisory lock (flock) of a work directory, with
// this process's id written in the lock file, and returns the function
// that releases it. A lock held by a live process is an error wrapping
// ErrLocked that names its process id; the lock of a process that died
// (even by SIGKILL) is released by the kernel and does not block.
func LockWorkdir(workdir string) (unlock func(), err error) {
	path := LockPath(workdir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
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
			continue
		}
		if err := f.Truncate(0); err == nil {
			_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
		return func() {
			os.Remove(path)
			f.Close()
		}, nil
	}
}
