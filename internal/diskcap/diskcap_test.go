package diskcap

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
)

// fakeHost is a cgroup v1 blkio hierarchy in a temp dir, with the process
// in its root group, and a /sys/dev/block holding the disk 8:0 and its
// partition 8:1 (the device every path is on).
func fakeHost(t *testing.T) (host, string) {
	t.Helper()
	tmp := t.TempDir()
	root := filepath.Join(tmp, "blkio")
	write(t, filepath.Join(root, "blkio.throttle.read_bps_device"), "")
	write(t, filepath.Join(root, "cgroup.procs"), "4242\n")
	write(t, filepath.Join(tmp, "proc-cgroup"), "9:name=systemd:/\n7:blkio:/\n0::/\n")
	disk := filepath.Join(tmp, "devices", "sda")
	write(t, filepath.Join(disk, "dev"), "8:0\n")
	write(t, filepath.Join(disk, "sda1", "partition"), "1\n")
	sysBlock := filepath.Join(tmp, "dev-block")
	if err := os.MkdirAll(sysBlock, 0o755); err != nil {
		t.Fatal(err)
	}
	for num, target := range map[string]string{"8:0": disk, "8:1": filepath.Join(disk, "sda1")} {
		if err := os.Symlink(target, filepath.Join(sysBlock, num)); err != nil {
			t.Fatal(err)
		}
	}
	h := host{root: root, sysBlock: sysBlock, procCgroup: filepath.Join(tmp, "proc-cgroup"), pid: 4242,
		euid:    func() int { return 0 },
		alive:   func(pid int) bool { return pid == 4242 },
		statDev: func(string) (uint64, error) { return unix.Mkdev(8, 1), nil },
		// The kernel's move: the pid joins dir's group and leaves every
		// other group of the hierarchy.
		writeProcs: func(dir string, pid int) error {
			if _, err := os.Stat(dir); err != nil {
				return err
			}
			filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
				if err == nil && d.Name() == "cgroup.procs" {
					b, _ := os.ReadFile(p)
					var keep []string
					for _, f := range strings.Fields(string(b)) {
						if f != strconv.Itoa(pid) {
							keep = append(keep, f+"\n")
						}
					}
					os.WriteFile(p, []byte(strings.Join(keep, "")), 0o644)
				}
				return nil
			})
			f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(strconv.Itoa(pid) + "\n")
			return err
		}}
	return h, tmp
}

func write(t *testing.T, path, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestApplyAndRelease(t *testing.T) {
	h, tmp := fakeHost(t)
	g, err := h.apply(filepath.Join(tmp, "work", "not-made-yet"), Limits{Read: 300e6, Write: 150e6})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(h.root, "tierflow-4242")
	if g.Path != dir || g.Device != "8:0" {
		t.Fatalf("group %s on %s, want %s on the disk 8:0 (the partition's parent)", g.Path, g.Device, dir)
	}
	for file, want := range map[string]string{
		"blkio.throttle.read_bps_device":  "8:0 300000000",
		"blkio.throttle.write_bps_device": "8:0 150000000",
		"cgroup.procs":                    "4242",
	} {
		if got := read(t, filepath.Join(dir, file)); got != want {
			t.Errorf("%s = %q, want %q", file, got, want)
		}
	}
	if got := read(t, filepath.Join(h.root, "cgroup.procs")); got != "" {
		t.Errorf("root cgroup.procs = %q, want the pid moved out", got)
	}
	if err := g.Release(); err != nil {
		t.Fatal(err)
	}
	if err := g.Release(); err != nil { // a second call (signal and defer) is harmless
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("group %s left behind (%v)", dir, err)
	}
	if got := read(t, filepath.Join(h.root, "cgroup.procs")); got != "4242" {
		t.Errorf("root cgroup.procs = %q, want the pid back", got)
	}
}

func TestReadOnlyLimit(t *testing.T) {
	h, tmp := fakeHost(t)
	g, err := h.apply(tmp, Limits{Read: 100e6})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if _, err := os.Stat(filepath.Join(g.Path, "blkio.throttle.write_bps_device")); !os.IsNotExist(err) {
		t.Errorf("a write limit was set without --disk-write (%v)", err)
	}
}

func TestStaleGroupsRemoved(t *testing.T) {
	h, tmp := fakeHost(t)
	dead, busy, other := filepath.Join(h.root, "tierflow-999"), filepath.Join(h.root, "tierflow-998"), filepath.Join(h.root, "someone-else")
	write(t, filepath.Join(dead, "cgroup.procs"), "")
	write(t, filepath.Join(busy, "cgroup.procs"), "1234\n") // pid reused, still running
	write(t, filepath.Join(other, "cgroup.procs"), "")
	g, err := h.apply(tmp, Limits{Write: 100e6})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("stale group of a dead run left behind (%v)", err)
	}
	for _, d := range []string{busy, other} {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("%s removed: %v", d, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, want string
		edit       func(h *host)
	}{
		{"not root", "needs root", func(h *host) { h.euid = func() int { return 1000 } }},
		{"virtual file system", "no block device holds", func(h *host) { h.statDev = func(string) (uint64, error) { return unix.Mkdev(0, 52), nil } }},
		{"unknown device", "no block device holds", func(h *host) { h.statDev = func(string) (uint64, error) { return unix.Mkdev(253, 7), nil } }},
		{"no blkio throttling", "no cgroup v1 blkio throttling", func(h *host) { h.root = filepath.Join(filepath.Dir(h.root), "none", "blkio") }},
		{"cgroup v2 without io", "no io controller", func(h *host) { h.v2 = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, tmp := fakeHost(t)
			tc.edit(&h)
			g, err := h.apply(tmp, Limits{Read: 100e6})
			if err == nil {
				g.Release()
				t.Fatal("applied")
			}
			var ie *inputerr.Error
			if !strings.Contains(err.Error(), tc.want) || !asInput(err, &ie) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q (input error: %v), want one line containing %q", err, ie != nil, tc.want)
			}
			entries, _ := os.ReadDir(h.root)
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), Prefix) {
					t.Errorf("group %s made before the refusal", e.Name())
				}
			}
		})
	}
}

func TestReadOnlyHierarchyRefused(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root writes into a read-only directory; the unwritable hierarchy is covered by the real check only as non-root")
	}
	h, tmp := fakeHost(t)
	os.Chmod(h.root, 0o555)
	defer os.Chmod(h.root, 0o755)
	if _, err := h.apply(tmp, Limits{Read: 1e8}); err == nil || !strings.Contains(err.Error(), "is not writable") {
		t.Fatalf("error %v, want the hierarchy not writable", err)
	}
}

func TestRealTmpfsRefused(t *testing.T) {
	if _, err := os.Stat("/dev/shm"); err != nil {
		t.Skip("no /dev/shm")
	}
	h := realHost()
	h.euid = func() int { return 0 }
	_, err := h.device("/dev/shm")
	if err == nil || !strings.Contains(err.Error(), "no block device holds /dev/shm") {
		t.Fatalf("error %v, want no block device holds /dev/shm", err)
	}
}

func asInput(err error, ie **inputerr.Error) bool {
	for e := err; e != nil; {
		if x, ok := e.(*inputerr.Error); ok {
			*ie = x
			return true
		}
		u, ok := e.(interface{ Unwrap() error })
		if !ok {
			return false
		}
		e = u.Unwrap()
	}
	return false
}

func TestSpecLimits(t *testing.T) {
	for _, tc := range []struct {
		read, write, emulate string
		want                 Limits
		bad                  string
	}{
		{read: "300MB/s", write: "1.2 GB/s", want: Limits{Read: 300e6, Write: 1.2e9}},
		{write: "100MB/s", want: Limits{Write: 100e6}},
		{emulate: "p3.2xlarge", want: Limits{Read: 400e6, Write: 400e6}},
		{read: "0", bad: "{DiskRead} 0: must be positive"},
		{read: "-5MB/s", bad: "{DiskRead}: negative bandwidth"},
		{write: "fast", bad: `{DiskWrite}: "fast" does not start with a number`},
		{read: "300MB", bad: "is a size"},
		{emulate: "p3.2xlarge", read: "1GB/s", bad: "drop {DiskRead} and {DiskWrite}, or {EmulateDisk}"},
		{emulate: "tpu-v9", bad: `{EmulateDisk}: unknown preset "tpu-v9"`},
		{emulate: "missing.yaml", bad: "{EmulateDisk}: missing.yaml"},
	} {
		l, err := Spec{DiskRead: tc.read, DiskWrite: tc.write, EmulateDisk: tc.emulate}.Limits()
		if tc.bad != "" {
			var ie *inputerr.Error
			if err == nil || !strings.Contains(err.Error(), tc.bad) || !asInput(err, &ie) {
				t.Errorf("%+v: error %v, want an input error containing %q", tc, err, tc.bad)
			}
			continue
		}
		if err != nil || l != tc.want {
			t.Errorf("%+v: %v, %v; want %v", tc, l, err, tc.want)
		}
	}
}

func TestHold(t *testing.T) {
	d := devices.Disk{Read: 1.2e9, Write: 1e9, Combined: 1.5e9}
	for _, tc := range []struct {
		name  string
		have  devices.Throttle
		limit Limits
		want  devices.Throttle
	}{
		{"read only", devices.Throttle{}, Limits{Read: 300e6, Window: 100 * time.Millisecond}, devices.Throttle{Read: 300e6, Window: devices.Duration(100 * time.Millisecond)}},
		{"both", devices.Throttle{}, Limits{Read: 300e6, Write: 150e6}, devices.Throttle{Read: 300e6, Write: 150e6}},
		{"above the disk kept: the bucket decides", devices.Throttle{}, Limits{Read: 2e9}, devices.Throttle{Read: 2e9}},
		{"the lower of two", devices.Throttle{Read: 200e6, Write: 500e6, Window: 5}, Limits{Read: 300e6, Write: 100e6, Window: 7}, devices.Throttle{Read: 200e6, Write: 100e6, Window: 7}},
		{"no limit changes nothing", devices.Throttle{Read: 200e6, Window: 5}, Limits{}, devices.Throttle{Read: 200e6, Window: 5}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := d
			in.Throttle = tc.have
			got := tc.limit.Hold(in)
			assert.Equal(t, tc.want, got.Throttle)
			got.Throttle = devices.Throttle{}
			assert.Equal(t, d, got, "the disk's own rates stay")
		})
	}
}

func TestWindowFromTheDevice(t *testing.T) {
	for _, tc := range []struct {
		rotational string // "" : the file is missing
		want       time.Duration
	}{{"1\n", 100 * time.Millisecond}, {"0\n", 20 * time.Millisecond}, {"", 100 * time.Millisecond}} {
		h, tmp := fakeHost(t)
		if tc.rotational != "" {
			write(t, filepath.Join(tmp, "devices", "sda", "queue", "rotational"), tc.rotational)
		}
		g, err := h.apply(tmp, Limits{Read: 300e6})
		require.NoError(t, err)
		assert.Equal(t, tc.want, g.Limits.Window, "rotational %q", tc.rotational)
		assert.Equal(t, g.Limits, InForce())
		require.NoError(t, g.Release())
		assert.Zero(t, InForce(), "released")
	}
}

func TestUnlimitedStepsOutAndBack(t *testing.T) {
	h, tmp := fakeHost(t)
	dir := filepath.Join(h.root, "tierflow-4242")
	ran := false
	require.NoError(t, Unlimited(func() error { ran = true; return nil }), "no group: f just runs")
	assert.True(t, ran)
	g, err := h.apply(tmp, Limits{Read: 300e6})
	require.NoError(t, err)
	var inside, outside string
	err = Unlimited(func() error {
		inside, outside = read(t, filepath.Join(dir, "cgroup.procs")), read(t, filepath.Join(h.root, "cgroup.procs"))
		return errors.New("measurement failed")
	})
	assert.EqualError(t, err, "measurement failed", "f's error comes back")
	assert.Equal(t, "", inside, "out of the group while f runs")
	assert.Equal(t, "4242", outside)
	assert.Equal(t, "4242", read(t, filepath.Join(dir, "cgroup.procs")), "back in the group after")
	require.NoError(t, g.Release())
	assert.Equal(t, "4242", read(t, filepath.Join(h.root, "cgroup.procs")))
}
