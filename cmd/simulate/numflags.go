package main

import (
	"flag"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// numberRules is the rule of every numeric flag of simulate and simulate
// sweep, by name (cli.Rules; a list such as sweep's --p counts item by
// item): a value given on the command line or in a --config file that
// breaks it is refused in one line (exit status 2). A flag left out keeps
// its default, even where that is 0 ("the system's own"); where a 0 given
// has a meaning the flag's help says which. simulate gnn's are its own
// (gnncmd).
var numberRules = map[string]cli.Rule{
	"p": cli.Positive, "c": cli.Positive, "dim": cli.Positive, "batch": cli.Positive, "negatives": cli.Positive,
	"staleness": cli.Positive, "write-buffers": cli.Positive, "machines": cli.Positive, "epochs": cli.Positive,
	"top": cli.Positive, "memory-share": cli.Positive, "gpu-memory": cli.Positive, "bandwidth": cli.Positive,
	"checkpoint-every": cli.Positive,
	"chunk":            cli.NonNegative, // 0: as many as --negatives
	"resident-nodes":   cli.NonNegative, // 0: no resident entity types
	"skew":             cli.NonNegative, // 0: every partition alike
	"trace-max-spans":  cli.NonNegative, // 0: no cap
	"seed":             cli.Any,
	"ordering-seed":    cli.Any,
}

// newFlagSet is the flag set of simulate or simulate sweep, with the
// rules of its numeric flags.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cli.Rules(fs, numberRules)
	return fs
}
