package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/realrun/job"
)

// RunYAML is the file in a work directory that holds the configuration
// of the run trained there: `realrun --config WORKDIR/run.yaml` repeats
// it (with --overwrite, or --resume to continue it).
const RunYAML = "run.yaml"

// outFlags are realrun's --wide and its configuration file flags
// (--config, --print-config).
type outFlags struct {
	wide *bool
	cfg  *cli.ConfigOptions
}

func (x *outFlags) register(fs *flag.FlagSet) {
	x.wide = cli.WideFlag(fs)
	x.cfg = cli.ConfigFlags(fs)
}

// isWide says whether the human tables show every column.
func (x outFlags) isWide() bool { return x.wide != nil && *x.wide }

// configure, after the flags are checked, either prints the effective
// configuration (--print-config: done) once job.Configure accepts it, or
// arranges for the run to write it into its work directory as run.yaml
// (unless it holds that already; a resumed run keeps every setting of
// the run.yaml there that its command line leaves out). run.yaml is a convenience: a failure to
// write it is one warning line on stderr, and the run goes on.
func (x outFlags) configure(fs *flag.FlagSet, o *cmdOptions, stdout, stderr io.Writer) (done bool, err error) {
	if x.cfg != nil && x.cfg.Print {
		cfg, err := job.Configure(o.Options)
		if err != nil {
			return true, asUsage(err)
		}
		return true, cli.PrintConfig(stdout, fs, fmt.Sprintf("realrun configuration (work directory %s); use with: realrun --config FILE", cfg.Spec.Workdir), runConfigValue)
	}
	o.Prepared = func(dir string) error {
		path := filepath.Join(dir, RunYAML)
		head := fmt.Sprintf("realrun configuration of the run in this work directory: the flags that differ from their defaults.\nRepeat it: realrun --config %s --overwrite (or --resume to continue it; flags given override).", path)
		old, oldErr := os.ReadFile(path)
		data, err := cli.ConfigYAML(fs, head, runConfigValue)
		if o.Resume && oldErr == nil {
			// The run continues the one run.yaml describes: what this
			// command line leaves out stays as it was.
			data, err = cli.ConfigYAMLOver(fs, old, head, runConfigValue)
		}
		if err != nil {
			return err
		}
		if oldErr == nil && bytes.Equal(old, data) {
			return nil
		}
		if err := atomicfile.WriteBytes(path, data); err != nil {
			fmt.Fprintf(stderr, "warning: %s not written (the run goes on): %s\n", path, strings.ReplaceAll(err.Error(), "\n", " "))
		}
		return nil
	}
	return false, nil
}

// pathFlags are the flags that name a file or directory: a written
// configuration holds them as absolute paths, so it works from any
// directory.
var pathFlags = []string{"edges", "valid", "test", "schema", "init", "plan", "device", "workdir", "export", "timeline", "trace", "plot", "cpuprofile", "etcd-cacert", "etcd-cert", "etcd-key", "etcd-password-file"}

// notRun are the flags a written configuration leaves out: one-shot
// actions on the work directory and how the results are shown, not what
// the run does.
var notRun = []string{"resume", "overwrite", "json", "csv", "wide", "progress"}

// runConfigValue is how a flag's value goes into a written configuration:
// the notRun flags stay out; paths become absolute (--emulate-disk only
// when it names a file); --etcd-user USER:PASSWORD keeps the user only
// (a password is never written).
func runConfigValue(name, v string) (string, bool) {
	switch {
	case slices.Contains(notRun, name):
		return v, false
	case name == "etcd-user":
		user, _, _ := strings.Cut(v, ":")
		return user, true
	case v == "":
	case slices.Contains(pathFlags, name) || name == "emulate-disk" && isFile(v):
		if abs, err := filepath.Abs(v); err == nil {
			return abs, true
		}
	}
	return v, true
}

func isFile(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() || strings.ContainsRune(path, filepath.Separator)
}
