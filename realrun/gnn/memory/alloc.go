package memory

// The Go allocator's accounting, which runtime.MemStats.TotalAlloc sums:
// an object of up to 32 KiB takes its size class's bytes, a larger one
// whole 8 KiB pages; a slice grown by append allocates each larger array
// on the way. The estimate charges each buffer what the allocator does,
// so that it can be compared with Measure byte for byte.

// sizeClasses are the Go runtime's small-object size classes
// (internal/runtime/gc.SizeClassToSize, without class 0); TestSizeClasses
// checks them against runtime.MemStats.BySize.
var sizeClasses = [...]int64{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408, 1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192, 9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264, 28672, 32768}

const (
	maxSmall    = 32768 // the largest small object
	pageSize    = 8192  // the heap's page
	mallocHdr   = 8     // the header of a small object with pointers over minHdrSize bytes
	minHdrSize  = 512
	tinySize    = 16 // pointer-free objects under this share 16-byte blocks
	ptrSize     = 8
	sliceHdr    = 24 // a slice header: an element of [][]T
	gcThreshold = 256
)

// roundup returns the bytes the allocator charges for an object of n
// bytes (0 for none: make of length 0 allocates nothing); scan is true
// for an object holding pointers.
func roundup(n int64, scan bool) int64 {
	if n <= 0 {
		return 0
	}
	if !scan && n < tinySize {
		return n // packed with other tiny objects into 16-byte blocks
	}
	return classSize(n, scan)
}

// classSize is the bytes an object of n > 0 bytes takes: its size
// class's, with the header of a scanned object, or whole pages.
func classSize(n int64, scan bool) int64 {
	req := n
	if scan && req > minHdrSize {
		req += mallocHdr
	}
	if req <= maxSmall-mallocHdr {
		lo, hi := 0, len(sizeClasses)-1
		for lo < hi { // the smallest class ≥ req
			mid := (lo + hi) / 2
			if sizeClasses[mid] >= req {
				hi = mid
			} else {
				lo = mid + 1
			}
		}
		return sizeClasses[lo]
	}
	return (n + pageSize - 1) / pageSize * pageSize
}

// nextCap is the runtime's nextslicecap: the capacity append grows a
// slice of capacity oldCap to when it needs newLen.
func nextCap(newLen, oldCap int64) int64 {
	newcap := oldCap
	if newLen > 2*oldCap {
		return newLen
	}
	if oldCap < gcThreshold {
		return 2 * oldCap
	}
	for newcap < newLen {
		newcap += (newcap + 3*gcThreshold) >> 2
	}
	return newcap
}

// appended returns the bytes append allocates growing a nil slice of
// elem-byte elements one element at a time to n: every array on the way.
func appended(n, elem int64, scan bool) int64 {
	var c int64
	return growAppend(&c, n, elem, scan)
}

// growAppend charges appending to a slice of capacity *c, from length 0,
// until it holds n elements, and updates *c: each time it is full,
// append allocates nextCap elements rounded up to their size class.
func growAppend(c *int64, n, elem int64, scan bool) int64 {
	var total int64
	for n > *c {
		want := nextCap(*c+1, *c) * elem
		mem := classSize(want, scan)
		if want < tinySize && !scan {
			total += want
		} else {
			total += mem
		}
		if scan && want > minHdrSize && want <= maxSmall-mallocHdr {
			mem -= mallocHdr // the header is not capacity
		}
		*c = mem / elem
	}
	return total
}
