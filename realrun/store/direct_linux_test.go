//go:build linux

package store

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// anonHugeKB is the AnonHugePages of the mapping that contains addr in
// this process's smaps (-1: not found).
func anonHugeKB(t *testing.T, addr uintptr) int {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 && strings.Contains(strings.Fields(line)[0], "-") {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "AnonHugePages:") {
			kb, err := strconv.Atoi(strings.Fields(line)[1])
			require.NoError(t, err)
			return kb
		}
	}
	return -1
}

func TestAlignedBufferHugePages(t *testing.T) {
	for _, n := range []int{Align, 3 * Align, hugePage, 3*hugePage + 5*Align} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			b, m, err := alignedBuffer(n)
			require.NoError(t, err)
			defer func() { require.NoError(t, freeBuffer(m)) }()
			require.Len(t, b, n)
			addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
			assert.Zero(t, addr%Align, "O_DIRECT needs page alignment")
			if n < hugePage {
				assert.Len(t, m, n, "a small buffer maps only itself")
				return
			}
			assert.Zero(t, addr%hugePage, "a large buffer starts on a huge page")
			for i := 0; i < n; i += Align {
				b[i] = 1
			}
			mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
			if err != nil || strings.Contains(string(mode), "[never]") {
				t.Skip("this kernel gives no transparent huge pages")
			}
			// Huge pages are advice: a kernel out of contiguous memory
			// may still give 4 KiB pages, but not for every huge page of
			// a fresh buffer on a test machine.
			assert.Positive(t, anonHugeKB(t, addr), "the buffer's mapping has huge pages")
		})
	}
}

// A buffer comes with every page faulted in (the first read into it then
// runs at the rate later ones do) and zeroed.
func TestAlignedBufferPrefaulted(t *testing.T) {
	for _, n := range []int{Align, 3 * Align, hugePage, 3*hugePage + 5*Align} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			b, m, err := alignedBuffer(n)
			require.NoError(t, err)
			defer func() { require.NoError(t, freeBuffer(m)) }()
			page := os.Getpagesize()
			vec := make([]byte, (n+page-1)/page)
			_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(n), uintptr(unsafe.Pointer(unsafe.SliceData(vec))))
			require.Zero(t, errno, "mincore")
			resident := 0
			for _, v := range vec {
				resident += int(v & 1)
			}
			assert.Equal(t, len(vec), resident, "every page resident before the first use")
			for i := 0; i < n; i += page / 2 {
				require.Zero(t, b[i], "byte %d", i)
			}
		})
	}
}
