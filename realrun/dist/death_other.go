//go:build !linux

package dist

import "os/exec"

// setDeathSignal does nothing where the kernel cannot kill a child with
// its parent; Cluster.Close stops the members.
func setDeathSignal(*exec.Cmd) {}
