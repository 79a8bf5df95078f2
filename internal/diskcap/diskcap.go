// Package diskcap runs this process's disk I/O under kernel bandwidth
// limits (a cgroup: v1 blkio throttling or v2 io.max) on the block device
// that holds a directory, so that a real run sees a disk of known speed.
package diskcap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
)

// Limits are the read and write bandwidths the disk is held to (0: no
// limit in that direction) and, once Apply has found the device, the
// kernel's throttle slice on it (devices.Throttle.Window).
type Limits struct {
	Read, Write devices.Bandwidth
	Window      time.Duration
}

// Zero reports whether no limit is set.
func (l Limits) Zero() bool { return l.Read == 0 && l.Write == 0 }

func (l Limits) String() string {
	s := func(b devices.Bandwidth) string {
		if b == 0 {
			return "unlimited"
		}
		return fmt.Sprintf("%.0f MB/s", float64(b)/1e6)
	}
	return "read " + s(l.Read) + ", write " + s(l.Write)
}

// Hold is d held to the limits as well as to any throttle it already has
// (the lower rate in each direction): the disk a prediction of a limited
// run must use. d's own rates stay: the kernel lets I/O through at the
// disk's speed while the group has allowance (devices.Throttle).
func (l Limits) Hold(d devices.Disk) devices.Disk {
	lower := func(a, b devices.Bandwidth) devices.Bandwidth {
		if a == 0 || b > 0 && b < a {
			return b
		}
		return a
	}
	t := &d.Throttle
	t.Read, t.Write = lower(t.Read, l.Read), lower(t.Write, l.Write)
	if !l.Zero() && l.Window > 0 {
		t.Window = devices.Duration(l.Window)
	}
	return d
}

// Spec is the limits as a user states them: DiskRead and DiskWrite as
// rates ("300MB/s"; "": no limit in that direction), or EmulateDisk, a
// device preset's name or a profile FILE.yaml whose disk read and write
// become both limits.
type Spec struct {
	DiskRead, DiskWrite, EmulateDisk string
}

// Limits reads the spec. Every bad value is an inputerr.Error naming
// its field ({DiskRead}).
func (s Spec) Limits() (Limits, error) {
	var l Limits
	if emulate := s.EmulateDisk; emulate != "" {
		if s.DiskRead != "" || s.DiskWrite != "" {
			return l, inputerr.Errorf("{EmulateDisk} %s: takes both limits from the profile; drop {DiskRead} and {DiskWrite}, or {EmulateDisk}", emulate)
		}
		var p devices.Profile
		var err error
		if strings.HasSuffix(emulate, ".yaml") || strings.HasSuffix(emulate, ".yml") || strings.ContainsRune(emulate, os.PathSeparator) {
			p, err = devices.Load(emulate)
		} else {
			p, err = devices.Preset(emulate)
		}
		if err != nil {
			return l, inputerr.Errorf("{EmulateDisk}: %w", err)
		}
		if !(p.Disk.Read > 0) || !(p.Disk.Write > 0) {
			return l, inputerr.Errorf("{EmulateDisk} %s: the profile has no disk read and write bandwidth", emulate)
		}
		return Limits{Read: p.Disk.Read, Write: p.Disk.Write}, nil
	}
	for _, f := range []struct {
		field, v string // field: its marker
		to       *devices.Bandwidth
	}{{"{DiskRead}", s.DiskRead, &l.Read}, {"{DiskWrite}", s.DiskWrite, &l.Write}} {
		if f.v == "" {
			continue
		}
		b, err := devices.ParseBandwidth(f.v)
		if err != nil {
			return l, inputerr.Errorf("%s: %w", f.field, err)
		}
		if !(b >= 1) {
			return l, inputerr.Errorf("%s %s: must be positive (leave the flag out for no limit)", f.field, f.v)
		}
		*f.to = b
	}
	return l, nil
}

// Prefix begins the name of every group Apply makes: tierflow-<pid>.
const Prefix = "tierflow-"

// Group is this process inside a cgroup holding its disk to Limits.
type Group struct {
	// Path is the group's directory; Device the block device limited
	// (major:minor), Limits the limits set.
	Path   string
	Device string
	Limits Limits
	h      host
	orig   string // the cgroup the process was in, relative to h.root
	once   sync.Once
	err    error
}

// host is where Apply works: the cgroup hierarchy and the kernel's views
// of this process and its block devices (the real ones, or a fake tree in
// tests).
type host struct {
	v2   bool
	root string // v1: the blkio hierarchy; v2: the unified mount
	// sysBlock is /sys/dev/block; procCgroup is /proc/self/cgroup.
	sysBlock, procCgroup string
	pid                  int
	euid                 func() int
	statDev              func(path string) (uint64, error) // st_dev
	alive                func(pid int) bool
	// writeProcs moves pid into the group at dir (cgroup.procs moves
	// every thread): the kernel takes it out of the group it was in.
	writeProcs func(dir string, pid int) error
}

func realHost() host {
	h := host{sysBlock: "/sys/dev/block", procCgroup: "/proc/self/cgroup", pid: os.Getpid(), euid: os.Geteuid,
		alive:   func(pid int) bool { return syscall.Kill(pid, 0) != syscall.ESRCH },
		statDev: statDev, writeProcs: writeProcs}
	// A unified (v2) hierarchy has cgroup.controllers at its root; a v1
	// or hybrid machine has the blkio hierarchy.
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		h.v2, h.root = true, "/sys/fs/cgroup"
	} else {
		h.root = "/sys/fs/cgroup/blkio"
	}
	return h
}

func statDev(path string) (uint64, error) {
	var st unix.Stat_t
	err := unix.Stat(path, &st)
	return uint64(st.Dev), err
}

func writeProcs(dir string, pid int) error {
	return os.WriteFile(filepath.Join(dir, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0)
}

// Apply moves this process into a new cgroup, tierflow-<pid>, that holds
// the block device under dir (the disk, for a partition) to l, after
// removing groups a killed run left behind. Where the kernel cannot do it
// (not root, no writable cgroup hierarchy with the I/O controller, dir on
// no block device) it returns an inputerr.Error saying why and what to
// do. Release undoes it.
func Apply(dir string, l Limits) (*Group, error) { return realHost().apply(dir, l) }

func (h host) apply(dir string, l Limits) (*Group, error) {
	if l.Zero() {
		return nil, errors.New("diskcap: no limit to apply")
	}
	dev, err := h.device(dir)
	if err != nil {
		return nil, err
	}
	if err := h.usable(); err != nil {
		return nil, err
	}
	orig, err := h.current()
	if err != nil {
		return nil, fmt.Errorf("disk limit: %w", err)
	}
	h.removeStale()
	name := Prefix + strconv.Itoa(h.pid)
	l.Window = h.window(dev)
	g := &Group{Path: filepath.Join(h.root, name), Device: fmt.Sprintf("%d:%d", dev[0], dev[1]), Limits: l, h: h, orig: orig}
	if err := h.create(name, dev, l); err != nil {
		os.Remove(g.Path)
		return nil, fmt.Errorf("disk limit: create cgroup %s: %w", g.Path, err)
	}
	if err := h.writeProcs(g.Path, h.pid); err != nil {
		err = fmt.Errorf("disk limit: move process %d into %s: %w", h.pid, g.Path, err)
		return nil, errors.Join(err, h.remove(name))
	}
	activeMu.Lock()
	active = g
	activeMu.Unlock()
	return g, nil
}

// The kernel's throttle slices (block/blk-throttle.c: DFL_THROTL_SLICE_HD
// and _SSD): the allowance a limited group is granted at a time.
const (
	sliceRotational = 100 * time.Millisecond
	sliceSolid      = 20 * time.Millisecond
)

// window is the kernel's throttle slice on dev: 20 ms where the device
// says it is not rotational, else (and where it says nothing) 100 ms, the
// kernel's default.
func (h host) window(dev [2]uint32) time.Duration {
	b, err := os.ReadFile(filepath.Join(h.sysBlock, fmt.Sprintf("%d:%d", dev[0], dev[1]), "queue", "rotational"))
	if err == nil && strings.TrimSpace(string(b)) == "0" {
		return sliceSolid
	}
	return sliceRotational
}

// active is the group Apply put this process in (nil outside one): a
// process is in one group at a time. activeMu guards it and keeps Release
// from running while Unlimited has stepped out of the group.
var (
	activeMu sync.Mutex
	active   *Group
)

// Unlimited runs f with this process out of the group Apply put it in,
// and back in after: the disk as it is, as a calibration measures it
// under a limit (the limit itself is known: InForce). Without a group it
// just runs f.
func Unlimited(f func() error) error {
	activeMu.Lock()
	defer activeMu.Unlock()
	g := active
	if g == nil {
		return f()
	}
	if err := g.h.writeProcs(filepath.Join(g.h.root, g.orig), g.h.pid); err != nil {
		return fmt.Errorf("disk limit: step out of %s: %w", g.Path, err)
	}
	ferr := f()
	if err := g.h.writeProcs(g.Path, g.h.pid); err != nil {
		return errors.Join(ferr, fmt.Errorf("disk limit: move process %d back into %s: %w", g.h.pid, g.Path, err))
	}
	return ferr
}

// InForce is the limit this process runs under (zero outside a group).
func InForce() Limits {
	activeMu.Lock()
	defer activeMu.Unlock()
	if active == nil {
		return Limits{}
	}
	return active.Limits
}

// Release moves the process back to the cgroup it was in and removes the
// group. It is safe to call more than once and from several goroutines
// (a signal handler and a deferred call): the first does the work, the
// others wait for it and return its error.
func (g *Group) Release() error {
	if g == nil {
		return nil
	}
	g.once.Do(func() {
		activeMu.Lock()
		defer activeMu.Unlock()
		if active == g {
			active = nil
		}
		if err := g.h.writeProcs(filepath.Join(g.h.root, g.orig), g.h.pid); err != nil {
			g.err = fmt.Errorf("disk limit: move process %d back to %s: %w", g.h.pid, g.orig, err)
			return
		}
		if err := g.h.remove(filepath.Base(g.Path)); err != nil {
			g.err = fmt.Errorf("disk limit: remove %s: %w", g.Path, err)
		}
	})
	return g.err
}

// device is the major:minor of the block device holding dir (its nearest
// existing ancestor, for a directory not made yet): the whole disk when
// that is a partition, as the I/O controllers limit disks.
func (h host) device(dir string) ([2]uint32, error) {
	var dev [2]uint32
	d, err := filepath.Abs(dir)
	if err != nil {
		return dev, inputerr.Errorf("disk limit: %s: %w", dir, err)
	}
	var num uint64
	for {
		if num, err = h.statDev(d); err == nil || !errors.Is(err, unix.ENOENT) || d == filepath.Dir(d) {
			break
		}
		d = filepath.Dir(d)
	}
	if err != nil {
		return dev, inputerr.Errorf("disk limit: %s: %w", dir, err)
	}
	dev = [2]uint32{unix.Major(num), unix.Minor(num)}
	name := fmt.Sprintf("%d:%d", dev[0], dev[1])
	sys, err := filepath.EvalSymlinks(filepath.Join(h.sysBlock, name))
	if dev[0] == 0 || err != nil {
		return dev, inputerr.Errorf("disk limit: no block device holds %s (device %s: tmpfs, overlayfs or another virtual file system); put {Workdir} (calibrate: {Dir}) on a disk, or drop the disk limit", d, name)
	}
	if _, err := os.Stat(filepath.Join(sys, "partition")); err == nil {
		// /sys/dev/block/MAJ:MIN links to …/disk/partition.
		parent, err := os.ReadFile(filepath.Join(filepath.Dir(sys), "dev"))
		if err != nil {
			return dev, fmt.Errorf("disk limit: the disk holding partition %s: %w", name, err)
		}
		var maj, min uint32
		if _, err := fmt.Sscanf(strings.TrimSpace(string(parent)), "%d:%d", &maj, &min); err != nil {
			return dev, fmt.Errorf("disk limit: the disk holding partition %s: %q: %w", name, parent, err)
		}
		dev = [2]uint32{maj, min}
	}
	return dev, nil
}

// usable refuses, in one line, when this process cannot make groups
// with the I/O controller.
func (h host) usable() error {
	const fix = "run as root on a machine with cgroup access, or drop {DiskRead}, {DiskWrite} and {EmulateDisk}"
	if h.euid() != 0 {
		return inputerr.Errorf("disk limit: needs root to set kernel I/O limits (cgroups); %s", fix)
	}
	ctl := filepath.Join(h.root, "blkio.throttle.read_bps_device")
	if h.v2 {
		b, err := os.ReadFile(filepath.Join(h.root, "cgroup.controllers"))
		if err != nil || !slices.Contains(strings.Fields(string(b)), "io") {
			return inputerr.Errorf("disk limit: the cgroup v2 hierarchy at %s has no io controller; %s", h.root, fix)
		}
	} else if _, err := os.Stat(ctl); err != nil {
		return inputerr.Errorf("disk limit: no cgroup v1 blkio throttling at %s; %s", h.root, fix)
	}
	if err := unix.Access(h.root, unix.W_OK); err != nil {
		return inputerr.Errorf("disk limit: the cgroup hierarchy %s is not writable (%v); %s", h.root, err, fix)
	}
	return nil
}

// current is the group this process is in, relative to the hierarchy's
// root (/proc/self/cgroup: the blkio line on v1, 0:: on v2).
func (h host) current() (string, error) {
	b, err := os.ReadFile(h.procCgroup)
	if err != nil {
		return "", err
	}
	for _, line := range strings.Split(string(b), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if h.v2 && parts[0] == "0" && parts[1] == "" || !h.v2 && slices.Contains(strings.Split(parts[1], ","), "blkio") {
			return parts[2], nil
		}
	}
	return "", fmt.Errorf("%s names no %s group", h.procCgroup, map[bool]string{false: "blkio", true: "cgroup v2"}[h.v2])
}

// create makes the group name with the limits l on dev: on v1 the
// blkio.throttle files ("MAJ:MIN BYTES"), on v2 io.max ("MAJ:MIN
// rbps=BYTES wbps=BYTES", the io controller enabled for the root's
// children first). These are the kernel's documented files
// (Documentation/admin-guide/cgroup-v1/blkio-controller.rst, cgroup-v2.rst);
// writing them by hand keeps realrun free of a cgroup library's weight
// (containerd/cgroups v3.0.5 added 10.3 MB, +58%, to the realrun binary
// for these few writes: protobuf, cilium/ebpf, dbus come with it).
func (h host) create(name string, dev [2]uint32, l Limits) error {
	dir := filepath.Join(h.root, name)
	if h.v2 {
		if err := writeFile(filepath.Join(h.root, "cgroup.subtree_control"), "+io"); err != nil {
			return fmt.Errorf("enable the io controller: %w", err)
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if h.v2 {
		line := fmt.Sprintf("%d:%d", dev[0], dev[1])
		if l.Read > 0 {
			line += fmt.Sprintf(" rbps=%d", uint64(l.Read))
		}
		if l.Write > 0 {
			line += fmt.Sprintf(" wbps=%d", uint64(l.Write))
		}
		return writeFile(filepath.Join(dir, "io.max"), line)
	}
	for _, x := range []struct {
		file string
		rate devices.Bandwidth
	}{{"blkio.throttle.read_bps_device", l.Read}, {"blkio.throttle.write_bps_device", l.Write}} {
		if x.rate > 0 {
			if err := writeFile(filepath.Join(dir, x.file), fmt.Sprintf("%d:%d %d", dev[0], dev[1], uint64(x.rate))); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFile writes one line to a cgroup control file (which exists; a
// fake tree's is created).
func writeFile(path, line string) error {
	return os.WriteFile(path, []byte(line+"\n"), 0o644)
}

// remove deletes the group name, refusing while it holds a process (the
// kernel would too). On cgroupfs rmdir removes a group with its control
// files; a fake tree's files are removed first.
func (h host) remove(name string) error {
	dir := filepath.Join(h.root, name)
	procs, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat(dir); errors.Is(serr, os.ErrNotExist) {
			return nil // gone already
		}
	} else if err != nil {
		return err
	}
	if strings.TrimSpace(string(procs)) != "" {
		return fmt.Errorf("%s still holds processes %s", dir, strings.Join(strings.Fields(string(procs)), " "))
	}
	if err := os.Remove(dir); err == nil || errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return os.RemoveAll(dir)
}

// removeStale removes the groups tierflow-<pid> whose process is gone (a
// run killed with SIGKILL cannot release its group); a group that still
// holds a process is left alone.
func (h host) removeStale() {
	entries, _ := os.ReadDir(h.root)
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), Prefix)
		pid, err := strconv.Atoi(n)
		if !ok || err != nil || !e.IsDir() || pid == h.pid || h.alive(pid) {
			continue
		}
		h.remove(e.Name()) // refused while it holds a process
	}
}
