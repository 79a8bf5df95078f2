// Package runinfo says where a reproduction ran: the checkout's commit
// and the machine (CPU, cores, memory), for the records results/ files carry.
package runinfo

import (
	"fmt"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
)

// Commit returns the checkout's commit (12 hex digits), with
// " (with uncommitted changes)" when the work tree differs from it, or
// "unknown" outside a git checkout.
func Commit() string {
	out, err := exec.Command("git", "rev-parse", "--short=12", "HEAD").Output()
	if err != nil {
		return "unknown"
	}
	s := strings.TrimSpace(string(out))
	if exec.Command("git", "diff", "--quiet", "HEAD").Run() != nil {
		s += " (with uncommitted changes)"
	}
	return s
}

// CPU returns the processor's model name from /proc/cpuinfo ("unknown"
// where it cannot be read).
func CPU() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown"
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(ln, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Machine describes the machine from /proc: the CPU's model name, its
// logical cores and the memory, as "AMD EPYC, 2 cores, 23.5 GiB memory"
// ("unknown" for what cannot be read).
func Machine() string {
	cores := "unknown cores"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		n := 0
		for _, ln := range strings.Split(string(b), "\n") {
			if k, _, ok := strings.Cut(ln, ":"); ok && strings.TrimSpace(k) == "processor" {
				n++
			}
		}
		if n > 0 {
			cores = fmt.Sprintf("%d cores", n)
		}
	}
	mem := "unknown memory"
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		for _, ln := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(ln, ":"); ok && k == "MemTotal" {
				var kb float64
				if _, err := fmt.Sscanf(strings.TrimSpace(v), "%f kB", &kb); err == nil {
					mem = fmt.Sprintf("%.1f GiB memory", kb/(1<<20))
				}
			}
		}
	}
	return CPU() + ", " + cores + ", " + mem
}

// BuildCommit returns the commit the running binary was built from (its
// build info's vcs.revision, 12 hex digits, with " (with uncommitted
// changes)" when vcs.modified), else Commit's answer.
func BuildCommit() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, modified := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev != "" {
			if len(rev) > 12 {
				rev = rev[:12]
			}
			if modified {
				rev += " (with uncommitted changes)"
			}
			return rev
		}
	}
	return Commit()
}
