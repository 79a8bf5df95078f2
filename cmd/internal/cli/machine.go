package cli

import (
	"flag"
	"sync"
)

// Machine-dependent defaults. A flag whose default is this machine's (the
// number of CPUs, the system temp dir) shows the value in --help, but the
// generated command reference (docs/reference/, clitest.Reference) shows
// what the value is instead, so that it reads the same on every machine.

var (
	machineMu sync.Mutex
	// machine maps a flag set's machine-dependent flags to what their
	// defaults are.
	machine = map[*flag.FlagSet]map[string]string{}
	// describeMachine, while set (DescribeMachine), makes Help.Print show
	// those defaults by what they are.
	describeMachine bool
)

// MachineDefault records that fs's flag name defaults to a value of this
// machine, what ("the number of CPUs", "the system temp dir"): the
// generated reference shows "(default: what)" instead of the value.
func MachineDefault(fs *flag.FlagSet, name, what string) {
	machineMu.Lock()
	defer machineMu.Unlock()
	if machine[fs] == nil {
		machine[fs] = map[string]string{}
	}
	machine[fs][name] = what
}

// DescribeMachine runs f with help showing machine-dependent defaults
// (MachineDefault) by what they are instead of this machine's values; the
// generated reference renders every --help inside it.
func DescribeMachine(f func()) {
	machineMu.Lock()
	describeMachine = true
	machineMu.Unlock()
	defer func() {
		machineMu.Lock()
		describeMachine = false
		machineMu.Unlock()
	}()
	f()
}

// machineDefault is what fs's flag name defaults to when help describes
// machine-dependent defaults and the flag has one.
func machineDefault(fs *flag.FlagSet, name string) (string, bool) {
	machineMu.Lock()
	defer machineMu.Unlock()
	if !describeMachine {
		return "", false
	}
	what, ok := machine[fs][name]
	return what, ok
}
