//go:build nodist

package main

import (
	"io"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// A build with -tags nodist (the GPU bundle's, whose size is capped)
// leaves the distributed run and its etcd out.

func distMain(cmdOptions, cli.Format, io.Writer, io.Writer) error {
	return cli.Usagef("--trainers: this realrun was built without the distributed run (-tags nodist); use the default build")
}

func trainerMain([]string, io.Writer, io.Writer) error {
	return cli.Usagef("trainer: this realrun was built without the distributed run (-tags nodist); use the default build")
}

func memberMain([]string, io.Writer, io.Writer) error {
	return cli.Usagef("etcd-member: this realrun was built without the distributed run (-tags nodist); use the default build")
}
