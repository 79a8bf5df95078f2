//go:build !linux

package store

import "os"

// DirectIO says whether partition I/O bypasses the page cache here: only
// the Linux build uses O_DIRECT.
const DirectIO = false

func alignedBuffer(n int) (buf, mapping []byte, err error) {
	b := make([]byte, n+Align)
	off := 0
	if r := int(uintptrOf(b) % Align); r != 0 {
		off = Align - r
	}
	return b[off : off+n : off+n], nil, nil
}

func freeBuffer([]byte) error { return nil }

func openDirect(path string, flag int) (*os.File, error) {
	return os.OpenFile(path, flag, 0o644)
}

// soleName is false here: the link count is not known, so a partition
// file is always replaced, never overwritten.
func soleName(os.FileInfo) bool { return false }

// FreeBytes is unknown (-1) on this platform.
func FreeBytes(string) int64 { return -1 }

// SameFileSystem is unknown (false) on this platform, where FreeBytes is
// too.
func SameFileSystem(a, b string) bool { return false }
