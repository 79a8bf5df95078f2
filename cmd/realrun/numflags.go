package main

import (
	"flag"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// numberRules is the rule of every numeric flag of realrun and its
// subcommands, by name (cli.Rules): a value given on the command line or
// in a --config file that breaks it is refused in one line (exit status
// 2). Where 0 has a meaning the flag's help says which.
var numberRules = map[string]cli.Rule{
	// realrun, and the training shape of realrun calibrate
	"scale": cli.Positive, "dim": cli.Positive, "epochs": cli.Positive, "p": cli.Positive, "c": cli.Positive,
	"batch": cli.Positive, "negatives": cli.Positive, "workers": cli.Positive,
	"keep-checkpoints": cli.Positive, "eval-every": cli.Positive, "eval-edges": cli.Positive, "repeats": cli.Positive,
	"micro-batch-memory": cli.Positive, "eval-memory": cli.Positive, "checkpoint-every": cli.Positive,
	"trainers": cli.Positive, "etcd-members": cli.Positive, "lease": cli.Positive, "disk-read": cli.Positive, "disk-write": cli.Positive,
	"chunk":           cli.NonNegative, // 0: as many as --negatives
	"lr":              cli.NonNegative, // 0: the default for the kind of graph
	"early-stop":      cli.NonNegative, // 0: never stop early
	"micro-batches":   cli.NonNegative, // 0: only with --micro-batch-memory
	"trace-max-spans": cli.NonNegative, // 0: no cap
	"degree-frac":     cli.Any,         // -1: auto; otherwise a share in [0, 1] (job.Configure)
	"seed":            cli.Any,
	"ordering-seed":   cli.Any,
	// the objective (0: the softmax loss takes no margin; no
	// self-adversarial weights; no regularisation)
	"margin": cli.NonNegative, "adversarial": cli.NonNegative, "reg-coef": cli.NonNegative,
	// realrun calibrate
	"size": cli.Positive, "history-since": cli.Positive,
	"probe": cli.NonNegative, // 0: no probes; at most 1 (calibrateMain)
	// realrun neighbors and predict (workers and seed above)
	"k": cli.Positive, "ef": cli.Positive, "memory": cli.Positive,
	// realrun trainer (lease above)
	"id": cli.NonNegative,
	// realrun gnn (epochs, batch, workers, eval-every, seed, micro-batches
	// and micro-batch-memory above; its lr is Positive: gnnRules)
	"layers": cli.Positive, "hidden": cli.Positive, "heads": cli.Positive,
	"dropout": cli.NonNegative, // 0: no dropout
	"fanouts": cli.NonNegative, // 0: no neighbours in that layer
}

// newFlagSet is a flag set of realrun or one of its subcommands, with the
// rules of its numeric flags.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	cli.Rules(fs, numberRules)
	return fs
}
