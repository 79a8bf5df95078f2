package diskcap

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierflow/tierflow/realrun/store"
)

// E2EEnv, set to 1 (as root, on a machine with cgroup v1 blkio throttling
// or cgroup v2 io), runs TestThrottledReadE2E: it holds the real disk to
// 100 MB/s of reads and reads 200 MB with O_DIRECT. TIERFLOW_THROTTLE_DIR
// picks the directory (default: the test's temp dir; it must be on a disk).
const E2EEnv = "TIERFLOW_THROTTLE_E2E"

func TestThrottledReadE2E(t *testing.T) {
	if os.Getenv(E2EEnv) != "1" {
		t.Skip("set " + E2EEnv + "=1 (as root, with cgroup access) to run")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	h := realHost()
	if err := h.usable(); err != nil {
		t.Skip(err)
	}
	dir := os.Getenv("TIERFLOW_THROTTLE_DIR")
	if dir == "" {
		dir = t.TempDir()
	} else {
		var err error
		if dir, err = os.MkdirTemp(dir, "throttle-e2e-"); err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
	}
	const size, chunk, limit = 200 << 20, 4 << 20, 100e6
	buf, err := unix.Mmap(-1, 0, chunk, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_ANON|unix.MAP_PRIVATE) // page aligned, as O_DIRECT needs
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(buf)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	path := filepath.Join(dir, "scratch")
	f, err := store.OpenDirect(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC)
	if err != nil {
		t.Fatal(err)
	}
	for n := 0; n < size; n += chunk {
		if _, err := f.Write(buf); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	g, err := Apply(dir, Limits{Read: limit})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	f, err = store.OpenDirect(path, os.O_RDONLY)
	if err != nil {
		t.Fatal(err)
	}
	start, n := time.Now(), 0
	for {
		k, err := io.ReadFull(f, buf)
		n += k
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	secs := time.Since(start).Seconds()
	f.Close()
	rate := float64(n) / secs
	t.Logf("read %d MB with O_DIRECT in %.2f s under a %.0f MB/s limit on %s: %.1f MB/s", n>>20, secs, limit/1e6, g.Device, rate/1e6)
	if n != size || rate < 0.9*limit || rate > 1.1*limit {
		t.Errorf("read %d bytes at %.1f MB/s, want %d within 10%% of %.0f MB/s", n, rate/1e6, size, limit/1e6)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(g.Path); !os.IsNotExist(err) {
		t.Errorf("group %s left behind (%v)", g.Path, err)
	}
}
