//go:build nodist

package main

import (
	"flag"
	"io"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// A build with -tags nodist (the GPU bundle's, whose size is capped)
// leaves the distributed run and its etcd out.

func dflagSet(fs *flag.FlagSet) bool {
	set := false
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "trainers" || f.Name == "etcd" || f.Name == "lease" || f.Name == "objects" || f.Name == "listen" {
			set = true
		}
	})
	return set
}

func distMain(cmdOptions, cli.Format, io.Writer, io.Writer) error {
	return cli.Usagef("--trainers: this realrun was built without the distributed run (-tags nodist); use the default build")
}

func trainerMain([]string, io.Writer, io.Writer) error {
	return cli.Usagef("trainer: this realrun was built without the distributed run (-tags nodist); use the default build")
}
