//go:build linux

package store

import (
	"errors"
	"os"
	"syscall"
)

// directFlag opens partition files with O_DIRECT: reads and writes go to
// the device, not the page cache.
const directFlag = syscall.O_DIRECT

// DirectIO says whether partition I/O bypasses the page cache here.
const DirectIO = true

// alignedBuffer returns n bytes (a multiple of Align) aligned to the page
// size, as O_DIRECT requires: anonymous mmap memory is page aligned.
func alignedBuffer(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func freeBuffer(b []byte) error { return syscall.Munmap(b) }

// openDirect opens with O_DIRECT; a file system that refuses it (tmpfs
// before Linux 6.6) gets buffered I/O instead.
func openDirect(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|directFlag, 0o644)
	if errors.Is(err, syscall.EINVAL) {
		return os.OpenFile(path, flag, 0o644)
	}
	return f, err
}

// soleName reports whether fi is a regular file that no other name links
// (no checkpoint holds it).
func soleName(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && st.Nlink == 1
}

// FreeBytes is the space left to unprivileged writers on dir's file
// system (-1: unknown).
func FreeBytes(dir string) int64 {
	var fs syscall.Statfs_t
	if err := syscall.Statfs(dir, &fs); err != nil {
		return -1
	}
	return int64(fs.Bavail) * int64(fs.Bsize)
}

// SameFileSystem reports whether the existing paths a and b are on one
// file system (false when either cannot be read).
func SameFileSystem(a, b string) bool {
	var sa, sb syscall.Stat_t
	return syscall.Stat(a, &sa) == nil && syscall.Stat(b, &sb) == nil && sa.Dev == sb.Dev
}
