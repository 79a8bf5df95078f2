package main

import (
	"flag"
	"io"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// outFlags are --wide and the configuration file flags (--config,
// --print-config) of simulate and simulate sweep.
type outFlags struct {
	wide *bool
	cfg  *cli.ConfigOptions
}

func registerOut(fs *flag.FlagSet) outFlags {
	return outFlags{wide: cli.WideFlag(fs), cfg: cli.ConfigFlags(fs)}
}

// printed, with --print-config, prints the effective configuration and
// reports that the command is done.
func (x outFlags) printed(fs *flag.FlagSet, stdout io.Writer) (bool, error) {
	if !x.cfg.Print {
		return false, nil
	}
	return true, cli.PrintConfig(stdout, fs, fs.Name()+" configuration; use with: "+fs.Name()+" --config FILE", nil)
}
