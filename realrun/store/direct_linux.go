//go:build linux

package store

import (
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

func openDirect(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag|directFlag, 0o644)
}
