package main

import (
	"flag"
	"os"
	"time"
)

// distFlags are --trainers, --etcd, --lease, --objects and --listen: a distributed
// run (realrun/dist; not in a build with -tags nodist).
type distFlags struct {
	Trainers int
	Etcd     string
	Lease    time.Duration
	Objects  bool
	Listen   string
}

// selfArgv is the command line that runs this program (the tests run
// their own binary as realrun instead).
var selfArgv = func() ([]string, error) {
	exe, err := os.Executable()
	return []string{exe}, err
}

// dflagSet reports whether a flag of the distributed run was given.
func dflagSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "trainers", "etcd", "lease", "objects", "listen":
			set = true
		}
	})
	return set
}
