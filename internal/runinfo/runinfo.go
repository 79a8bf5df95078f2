// Package runinfo says where a reproduction ran: the checkout's commit
// and the machine's CPU, for the records results/ files carry.
package runinfo

import (
	"os"
	"os/exec"
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
