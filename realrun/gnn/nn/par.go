package nn

import (
	"runtime"
	"sync"
)

// Workers is how many goroutines the layers split their rows over; set it
// before training (the default: every CPU).
var Workers = runtime.NumCPU()

// minRows is the fewest rows worth a goroutine of their own.
const minRows = 64

// parallelRows calls fn over [0, m) split into at most Workers contiguous
// ranges, and waits; fn gets its range and the range's index w (for
// per-worker scratch). Small m runs on the caller's goroutine.
func parallelRows(m int, fn func(w, lo, hi int)) int {
	parts := rowParts(m)
	if parts == 1 {
		fn(0, 0, m)
		return 1
	}
	var wg sync.WaitGroup
	for w := 0; w < parts; w++ {
		lo, hi := m*w/parts, m*(w+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(w, lo, hi)
		}()
	}
	wg.Wait()
	return parts
}

// rowParts returns how many ranges parallelRows splits m rows into.
func rowParts(m int) int { return RowParts(Workers, m) }

// RowParts returns how many ranges the layers split m rows into with
// workers goroutines (each range of at least minRows rows): the count of
// per-range partial buffers a pass allocates, which the memory estimator
// needs.
func RowParts(workers, m int) int {
	return max(1, min(workers, m/minRows))
}

// grow returns buf resized to n, zeroed, reusing its array when it can.
func grow(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	buf = buf[:n]
	clear(buf)
	return buf
}
