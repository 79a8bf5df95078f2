// Package testhosts makes test hosts on this machine: Linux network
// namespaces, each joined by a veth link to a bridge in the root namespace
// and each link shaped with tc to a set bandwidth, so that traffic between
// a process in a host and a server listening on the bridge address crosses
// a link of known speed.
//
// A Net of n hosts is one /24, 10.213.X.0/24: the bridge tfbX in the root
// namespace holds the gateway address 10.213.X.1, and host i is the
// namespace tf-X-hI with the address 10.213.X.(i+2) on its eth0, whose peer
// tfbXhI is a port of the bridge. Hosts reach the gateway directly, so IP
// forwarding is not needed; hosts of one Net can also reach each other
// through the bridge (crossing both their links).
//
// Each link is shaped in both directions with a token bucket filter (tbf):
// egress on the root-side end shapes traffic to the host, egress on the
// host's eth0 shapes traffic from it. tbf counts whole frames (Ethernet, IP
// and TCP headers included), so a bulk TCP transfer over a 1500-byte MTU sees
// about 95% of the rate as payload. The bucket (burst) holds
// max(16 KiB, 4 ms at the rate): large enough for the kernel's timers and
// for a jumbo frame, small enough that the burst a fresh bucket lets through
// unshaped is negligible next to a transfer of a few megabytes. The queue
// holds 50 ms at the rate beyond the burst; TCP backs off when it overflows.
// A delay, where asked for, is a netem qdisc in front of the tbf on each end:
// it applies once per direction, so the round trip grows by twice the delay.
//
// Every Net holds an flock on /run/tierflow-testhosts/X.lock for its life.
// The kernel drops the lock when the process dies, so New and Sweep can tell
// the leftovers of a killed run (unlocked) from a live Net (locked) and
// remove them, whatever became of the process id.
package testhosts

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MaxHosts is the most hosts one Net can hold (addresses .2 to .254).
const MaxHosts = 253

// Prefix begins the name of every namespace this package makes; the bridge
// and the root-side veth ends begin with LinkPrefix.
const (
	Prefix     = "tf-"
	LinkPrefix = "tfb"
)

// nets is how many Nets can exist at once on the machine: one /24 each.
const nets = 256

// LockDir holds the lock file of every Net (see the package doc).
var LockDir = "/run/tierflow-testhosts"

// Host is one test host: a network namespace and its address.
type Host struct {
	Name string // the namespace, for `ip netns exec Name ...`
	Addr string // its IPv4 address, on its eth0
	Link string // the root-side end of its veth link (a bridge port)
}

// Net is a set of hosts on one bridge, each behind a link shaped to Rate
// bits per second (and Delay each way).
type Net struct {
	Hosts   []Host
	Gateway string        // the bridge's address: servers listen here
	Subnet  netip.Prefix  // the hosts' /24
	Bridge  string        // the bridge in the root namespace
	Rate    int64         // the shaped rate of each link, bits per second, each direction
	Delay   time.Duration // the added one-way delay of each link

	mu     sync.Mutex // guards closed
	closed bool
	lock   *os.File
}

// ParseRate reads a bandwidth as tc writes it: a decimal number and one of
// the units bit, kbit, mbit or gbit (10^3 steps; case does not matter), e.g.
// "100mbit" or "2.5gbit". Byte units and bare numbers are refused: tc reads
// "mbps" as megabytes and a bare number as bytes per second.
func ParseRate(s string) (int64, error) {
	low := strings.ToLower(strings.TrimSpace(s))
	units := []struct {
		suffix string
		scale  float64
	}{{"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}, {"bit", 1}}
	for _, u := range units {
		num, ok := strings.CutSuffix(low, u.suffix)
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(num, 64)
		if err != nil || v <= 0 || v*u.scale < 8 || v*u.scale > 1e12 {
			return 0, fmt.Errorf("testhosts: rate %q: want a positive number of bit, kbit, mbit or gbit (8bit to 1000gbit)", s)
		}
		return int64(v * u.scale), nil
	}
	return 0, fmt.Errorf("testhosts: rate %q: want a number and a unit, one of bit, kbit, mbit, gbit", s)
}

// burst is the tbf bucket size in bytes for a rate in bits per second.
func burst(rate int64) int64 {
	return max(16<<10, rate/8*4/1000)
}

var (
	probeOnce          sync.Once
	probeErr, delayErr error
)

// Supported reports whether this machine can make test hosts: nil when we
// are root, ip and tc are installed, and a namespace, a veth link into it, a
// bridge and a tbf qdisc can all be made; otherwise an error saying which
// step failed. Tests skip on it.
func Supported() error {
	probeOnce.Do(probe)
	return probeErr
}

// DelaySupported reports whether links can be given a delay (New with
// delay > 0): it needs the kernel's netem qdisc, which some kernels lack.
func DelaySupported() error {
	probeOnce.Do(probe)
	if probeErr != nil {
		return probeErr
	}
	return delayErr
}

func probe() {
	if os.Geteuid() != 0 {
		probeErr = errors.New("testhosts: needs root (network namespaces, veth, tc)")
		return
	}
	for _, tool := range []string{"ip", "tc"} {
		if _, err := exec.LookPath(tool); err != nil {
			probeErr = fmt.Errorf("testhosts: %s not found (Debian package iproute2): %w", tool, err)
			return
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	pid := os.Getpid()
	ns := fmt.Sprintf("%sprobe-%d", Prefix, pid)
	veth := fmt.Sprintf("tfp%d", pid%10000000)
	br := fmt.Sprintf("tfq%d", pid%10000000)
	defer func() {
		// Deleting the root end of a veth deletes both ends at once.
		_ = run(context.Background(), "ip", "link", "del", veth)
		_ = run(context.Background(), "ip", "link", "del", br)
		_ = run(context.Background(), "ip", "netns", "del", ns)
	}()
	for _, c := range [][]string{
		{"ip", "netns", "add", ns},
		{"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns},
		{"ip", "link", "add", br, "type", "bridge"},
		{"ip", "link", "set", veth, "master", br},
		{"tc", "qdisc", "add", "dev", veth, "root", "tbf", "rate", "1mbit", "burst", "16kb", "latency", "50ms"},
		{"ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up"},
	} {
		if err := run(ctx, c[0], c[1:]...); err != nil {
			probeErr = err
			return
		}
	}
	if err := run(ctx, "tc", "qdisc", "replace", "dev", veth, "root", "netem", "delay", "1ms"); err != nil {
		delayErr = fmt.Errorf("%w (the kernel lacks netem, CONFIG_NET_SCH_NETEM)", err)
	}
}

// run runs a command and turns a failure into one line naming the command
// and quoting what it printed.
func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("testhosts: %s %s: %s", name, strings.Join(args, " "), strings.ReplaceAll(msg, "\n", "; "))
	}
	return nil
}

// New makes a Net of n hosts (1 to MaxHosts) whose links carry rate (see
// ParseRate) in each direction, each with delay added one way (0: none; it
// needs DelaySupported). It first removes what killed earlier runs left on
// the /24 it takes. Close the Net to remove it; processes still running in
// a host keep that namespace alive until they exit.
func New(ctx context.Context, n int, rate string, delay time.Duration) (*Net, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxHosts {
		return nil, fmt.Errorf("testhosts: %d hosts: want 1 to %d", n, MaxHosts)
	}
	bps, err := ParseRate(rate)
	if err != nil {
		return nil, err
	}
	if delay < 0 {
		return nil, fmt.Errorf("testhosts: delay %v: want 0 or more", delay)
	}
	if delay > 0 {
		if err := DelaySupported(); err != nil {
			return nil, err
		}
	}
	idx, lock, err := claim(ctx)
	if err != nil {
		return nil, err
	}
	nt := &Net{
		Gateway: fmt.Sprintf("10.213.%d.1", idx),
		Subnet:  netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", idx)),
		Bridge:  fmt.Sprintf("%s%d", LinkPrefix, idx),
		Rate:    bps,
		Delay:   delay,
		lock:    lock,
	}
	for i := range n {
		nt.Hosts = append(nt.Hosts, Host{
			Name: fmt.Sprintf("%s%d-h%d", Prefix, idx, i),
			Addr: fmt.Sprintf("10.213.%d.%d", idx, i+2),
			Link: fmt.Sprintf("%s%dh%d", LinkPrefix, idx, i),
		})
	}
	if err := nt.build(ctx); err != nil {
		return nil, errors.Join(err, nt.Close())
	}
	return nt, nil
}

// claim locks a free /24 and removes whatever a killed run left on it.
func claim(ctx context.Context) (int, *os.File, error) {
	if err := os.MkdirAll(LockDir, 0o755); err != nil {
		return 0, nil, fmt.Errorf("testhosts: %w", err)
	}
	used, err := usedPrefixes()
	if err != nil {
		return 0, nil, err
	}
	start := os.Getpid() % nets // parallel test binaries start apart
	for k := range nets {
		idx := (start + k) % nets
		sub := netip.MustParsePrefix(fmt.Sprintf("10.213.%d.0/24", idx))
		if overlaps(sub, used, fmt.Sprintf("%s%d", LinkPrefix, idx)) {
			continue
		}
		f, ok, err := tryLock(idx)
		if err != nil {
			return 0, nil, err
		}
		if !ok {
			continue
		}
		if err := scrub(ctx, idx); err != nil {
			_ = f.Close()
			return 0, nil, err
		}
		return idx, f, nil
	}
	return 0, nil, errors.New("testhosts: no free subnet in 10.213.0.0/16 (all 256 /24s in use or taken by other interfaces)")
}

// usedPrefixes lists the IPv4 networks on this machine's interfaces, by
// interface name.
func usedPrefixes() (map[string][]netip.Prefix, error) {
	out, err := exec.Command("ip", "-o", "-4", "addr", "show").Output()
	if err != nil {
		return nil, fmt.Errorf("testhosts: ip -o -4 addr show: %w", err)
	}
	used := map[string][]netip.Prefix{}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		// "2: eth0    inet 10.0.0.5/24 brd ... scope global eth0"
		for i := 0; i+1 < len(f); i++ {
			if f[i] == "inet" {
				if p, err := netip.ParsePrefix(f[i+1]); err == nil {
					used[f[1]] = append(used[f[1]], p.Masked())
				}
			}
		}
	}
	return used, nil
}

// overlaps reports whether sub overlaps a network on an interface other
// than our own bridge for it (a leftover we may remove).
func overlaps(sub netip.Prefix, used map[string][]netip.Prefix, ours string) bool {
	for dev, ps := range used {
		if dev == ours {
			continue
		}
		for _, p := range ps {
			if p.Overlaps(sub) {
				return true
			}
		}
	}
	return false
}

func tryLock(idx int) (*os.File, bool, error) {
	f, err := os.OpenFile(filepath.Join(LockDir, fmt.Sprintf("%d.lock", idx)), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, false, fmt.Errorf("testhosts: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		_ = f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("testhosts: lock %s: %w", f.Name(), err)
	}
	// For people reading the lock directory; the lock itself is what counts.
	_ = f.Truncate(0)
	_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	return f, true, nil
}

// scrub removes every namespace and link named for /24 number idx. The
// caller holds its lock.
func scrub(ctx context.Context, idx int) error {
	var errs []error
	links, _ := filepath.Glob(filepath.Join("/sys/class/net", fmt.Sprintf("%s%dh*", LinkPrefix, idx)))
	for _, l := range links {
		if err := run(ctx, "ip", "link", "del", filepath.Base(l)); err != nil && exists("/sys/class/net/"+filepath.Base(l)) {
			errs = append(errs, err)
		}
	}
	nss, _ := filepath.Glob(filepath.Join("/run/netns", fmt.Sprintf("%s%d-h*", Prefix, idx)))
	for _, ns := range nss {
		if err := run(ctx, "ip", "netns", "del", filepath.Base(ns)); err != nil && exists(ns) {
			errs = append(errs, err)
		}
	}
	br := fmt.Sprintf("%s%d", LinkPrefix, idx)
	if exists("/sys/class/net/" + br) {
		if err := run(ctx, "ip", "link", "del", br); err != nil && exists("/sys/class/net/"+br) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// Sweep removes the namespaces and links that killed runs left behind (those
// whose lock no live process holds). New does this for the /24 it takes;
// Sweep does it for all of them.
func Sweep(ctx context.Context) error {
	if err := Supported(); err != nil {
		return err
	}
	var errs []error
	for idx := range nets {
		stale := exists(fmt.Sprintf("/sys/class/net/%s%d", LinkPrefix, idx))
		if !stale {
			m, _ := filepath.Glob(filepath.Join("/run/netns", fmt.Sprintf("%s%d-h*", Prefix, idx)))
			l, _ := filepath.Glob(filepath.Join("/sys/class/net", fmt.Sprintf("%s%dh*", LinkPrefix, idx)))
			stale = len(m)+len(l) > 0
		}
		if !stale {
			continue
		}
		f, ok, err := tryLock(idx)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue // a live Net
		}
		errs = append(errs, scrub(ctx, idx))
		_ = f.Close()
	}
	// Supported's probe, cut short: named for a process that is gone.
	probes, _ := filepath.Glob(filepath.Join("/run/netns", Prefix+"probe-*"))
	for _, p := range probes {
		pid, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(p), Prefix+"probe-"))
		if err != nil || exists(fmt.Sprintf("/proc/%d", pid)) {
			continue
		}
		for _, l := range []string{fmt.Sprintf("tfp%d", pid%10000000), fmt.Sprintf("tfq%d", pid%10000000)} {
			if exists("/sys/class/net/" + l) {
				errs = append(errs, run(ctx, "ip", "link", "del", l))
			}
		}
		errs = append(errs, run(ctx, "ip", "netns", "del", filepath.Base(p)))
	}
	return errors.Join(errs...)
}

// build makes the bridge, the namespaces, the links and their qdiscs.
func (nt *Net) build(ctx context.Context) error {
	cmds := [][]string{
		{"ip", "link", "add", nt.Bridge, "type", "bridge"},
		{"ip", "link", "set", "dev", nt.Bridge, "alias", fmt.Sprintf("tierflow testhosts pid %d", os.Getpid())},
		{"ip", "addr", "add", nt.Gateway + "/24", "dev", nt.Bridge},
		{"ip", "link", "set", nt.Bridge, "up"},
	}
	for _, h := range nt.Hosts {
		inNS := []string{"ip", "netns", "exec", h.Name}
		cmds = append(cmds,
			[]string{"ip", "netns", "add", h.Name},
			[]string{"ip", "link", "add", h.Link, "type", "veth", "peer", "name", "eth0", "netns", h.Name},
			[]string{"ip", "link", "set", h.Link, "master", nt.Bridge},
		)
		cmds = append(cmds, nt.shape("tc", "qdisc", "add", "dev", h.Link)...)
		cmds = append(cmds, []string{"ip", "link", "set", h.Link, "up"})
		cmds = append(cmds, nt.shape(append(inNS, "tc", "qdisc", "add", "dev", "eth0")...)...)
		cmds = append(cmds,
			append(inNS, "ip", "addr", "add", h.Addr+"/24", "dev", "eth0"),
			append(inNS, "ip", "link", "set", "eth0", "up"),
			append(inNS, "ip", "link", "set", "lo", "up"),
		)
	}
	for _, c := range cmds {
		if err := run(ctx, c[0], c[1:]...); err != nil {
			return err
		}
	}
	return nil
}

// shape returns the commands that shape a device: pre is the command up to
// and including "dev DEV".
func (nt *Net) shape(pre ...string) [][]string {
	c := func(rest ...string) []string { return append(append([]string(nil), pre...), rest...) }
	tbf := []string{"tbf", "rate", fmt.Sprintf("%dbit", nt.Rate), "burst", strconv.FormatInt(burst(nt.Rate), 10), "latency", "50ms"}
	if nt.Delay == 0 {
		return [][]string{c(append([]string{"root", "handle", "1:"}, tbf...)...)}
	}
	// netem's queue is in packets: room for twice the bytes in flight over
	// the delay, in full frames, and never under its default of 1000.
	limit := max(1000, 2*nt.Rate/8*nt.Delay.Microseconds()/1e6/1514)
	return [][]string{
		c("root", "handle", "1:", "netem", "delay", fmt.Sprintf("%dus", nt.Delay.Microseconds()), "limit", strconv.FormatInt(limit, 10)),
		c(append([]string{"parent", "1:1", "handle", "10:"}, tbf...)...),
	}
}

// Command returns a command that runs name with args inside host number
// host (`ip netns exec NS name args...`). It sees only the host's eth0 and
// lo; the environment and file system are this process's.
func (nt *Net) Command(ctx context.Context, host int, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "ip", append([]string{"netns", "exec", nt.Hosts[host].Name, name}, args...)...)
}

// Close removes the hosts' links and namespaces and the bridge, and releases
// the Net's /24. Calling it again does nothing.
func (nt *Net) Close() error {
	nt.mu.Lock()
	defer nt.mu.Unlock()
	if nt.closed {
		return nil
	}
	nt.closed = true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	idx, _ := strconv.Atoi(strings.TrimPrefix(nt.Bridge, LinkPrefix))
	err := scrub(ctx, idx)
	if cerr := nt.lock.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return err
}

// ForTest returns a Net of n hosts whose links carry rate (no delay), closed
// when the test ends; it skips the test where Supported says no.
func ForTest(t testing.TB, n int, rate string) *Net {
	t.Helper()
	if err := Supported(); err != nil {
		t.Skip(err)
	}
	nt, err := New(context.Background(), n, rate, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nt.Close(); err != nil {
			t.Error(err)
		}
	})
	return nt
}
