//go:build linux

package store

import (
	"errors"
	"os"
	"syscall"
	"unsafe"
)

// directFlag opens partition files with O_DIRECT: reads and writes go to
// the device, not the page cache.
const directFlag = syscall.O_DIRECT

// DirectIO says whether partition I/O bypasses the page cache here.
const DirectIO = true

// hugePage is the size of a transparent huge page on the platforms the
// engine runs on (x86-64 and arm64 with 4 KiB base pages).
const hugePage = 2 << 20

// madvHugepage is MADV_HUGEPAGE: back the range with transparent huge
// pages where the kernel has them ("madvise" or "always" mode).
const madvHugepage = 14

// madvPopulateWrite is MADV_POPULATE_WRITE (Linux 5.14): fault every page
// of the range in, writable, now.
const madvPopulateWrite = 23

// alignedBuffer returns n bytes (a multiple of Align) aligned to the page
// size, as O_DIRECT requires, and the mapping that holds them (for
// freeBuffer). A buffer of a huge page or more starts on a huge-page
// boundary and asks for transparent huge pages: each 2 MiB of it is then
// contiguous in physical memory, so an O_DIRECT transfer reaches the
// device in a few large requests instead of one segment per 4 KiB page
// (the queue's max_segments caps a request at about 1 MB of scattered
// pages), and its rate no longer depends on how scattered the pages a
// buffer happened to get are (1.5–2.3 GB/s against 3.1–3.4 GB/s on this
// project's VM, experiments/notes/validate.md "Where a read lands"). The
// engine's gathers over a partition miss the TLB less too. Where the
// kernel has no huge pages the advice fails and the buffer is as before.
//
// Every page is faulted in before the buffer is returned (prefault): the
// first O_DIRECT read into pages never touched faults them in one by one
// as it goes, and on this project's VM moved 0.6–0.9 GB/s against about
// 3 GB/s into the same buffer once touched (experiments/notes/scale.md,
// "A buffer's first read"). Allocating costs that time instead, once.
func alignedBuffer(n int) (buf, mapping []byte, err error) {
	if n < hugePage {
		m, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
		if err == nil {
			prefault(m)
		}
		return m, m, err
	}
	m, err := syscall.Mmap(-1, 0, n+hugePage, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	off := 0
	if r := int(uintptr(unsafe.Pointer(unsafe.SliceData(m))) % hugePage); r != 0 {
		off = hugePage - r
	}
	buf = m[off : off+n : off+n]
	// Advice only: a kernel without transparent huge pages refuses it,
	// and the buffer works as plain pages.
	_ = syscall.Madvise(buf, madvHugepage)
	prefault(buf)
	return buf, m, nil
}

// prefault faults every page of b in, writable: with MADV_POPULATE_WRITE
// where the kernel has it, else by writing one byte of each page (b is
// fresh anonymous memory: zero before and after).
func prefault(b []byte) {
	if len(b) == 0 || syscall.Madvise(b, madvPopulateWrite) == nil {
		return
	}
	page := os.Getpagesize()
	for i := 0; i < len(b); i += page {
		b[i] = 0
	}
}

func freeBuffer(mapping []byte) error { return syscall.Munmap(mapping) }

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
