// Package cli holds what tierflow's commands share: flag parsing that turns
// bad input into one line and exit status 2, output-format selection and
// help texts.
package cli

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// ExitUsage is the exit status for bad input (flags, files, names).
const ExitUsage = 2

// UsageError is bad input from the user: it is printed as one line and the
// command exits with status 2.
type UsageError struct {
	Msg string
	Err error // the wrapped cause, if the message wraps one (%w)
}

func (e *UsageError) Error() string { return e.Msg }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef returns a UsageError with a formatted message; %w wraps an error
// as fmt.Errorf does.
func Usagef(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &UsageError{Msg: err.Error(), Err: errors.Unwrap(err)}
}

// AsUsage turns a library's bad-input error (an *inputerr.Error, wrapped
// or not) into a UsageError (exit status 2); any other error is returned
// as it is.
func AsUsage(err error) error {
	if ie := (*inputerr.Error)(nil); errors.As(err, &ie) {
		return Usagef("%w", err)
	}
	return err
}

// Exit prints err as one line prefixed with the program name (the fields
// a library's message names by their flags: Render) and returns
// the exit status: 0 for nil or flag.ErrHelp (the usage was printed), 2 for
// a UsageError, 1 otherwise.
func Exit(stderr io.Writer, prog string, err error) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := strings.ReplaceAll(Render(err.Error()), "\n", " ")
	fmt.Fprintf(stderr, "%s: %s\n", prog, msg)
	var ue *UsageError
	if errors.As(err, &ue) {
		return ExitUsage
	}
	return 1
}

// Parse parses args into fs. Flag errors become UsageErrors naming the
// flag; -h/--help prints the usage to stdout and returns flag.ErrHelp.
// Positional arguments are rejected. With ConfigFlags registered, the
// --config file's flags are applied under the command line's. A value that
// breaks its flag's Rule (Rules) is refused, from either.
func Parse(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			if h, ok := helps[fs]; ok {
				h.Print(stdout, fs)
				return err
			}
			fs.SetOutput(stdout)
			fmt.Fprintf(stdout, "Usage of %s:\n", fs.Name())
			fs.PrintDefaults()
			return err
		}
		return unknownFlag(fs, err)
	}
	if err := checkRules(fs, nil); err != nil {
		return err
	}
	if err := applyConfig(fs); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q (all options are flags; see --help)", fs.Arg(0))
	}
	return nil
}

// ParseFormat registers --json and --csv on fs, parses args like Parse and
// returns the output format they select (a configuration file may select
// it too).
func ParseFormat(fs *flag.FlagSet, args []string, stdout io.Writer) (Format, error) {
	asJSON := fs.Bool("json", false, "print JSON")
	asCSV := fs.Bool("csv", false, "print CSV")
	if err := Parse(fs, args, stdout); err != nil {
		return Table, err
	}
	return PickFormat(*asJSON, *asCSV)
}

// WideFlag registers --wide on fs (help group "Output"): human tables show
// every column instead of the ones that fit a 100-column terminal
// (plots.Column.Wide; CSV and JSON always carry every column).
func WideFlag(fs *flag.FlagSet) *bool {
	Group(fs, "Output", "wide")
	return fs.Bool("wide", false, "tables with every column (default: the ones that fit 100 columns; --csv and --json carry all)")
}

// ChildMain lets a command's tests run the test binary as the command
// itself: when the environment variable env is "1" it runs run on the
// arguments after "--" and exits with its status; otherwise it returns.
func ChildMain(env string, run func(args []string, stdout, stderr io.Writer) int) {
	if os.Getenv(env) != "1" {
		return
	}
	args := os.Args[1:]
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// Format is an output format.
type Format int

// The output formats: a human table, JSON, CSV.
const (
	Table Format = iota
	JSON
	CSV
)

// PickFormat returns the format selected by the --json and --csv flags.
func PickFormat(asJSON, asCSV bool) (Format, error) {
	switch {
	case asJSON && asCSV:
		return Table, Usagef("--json and --csv are mutually exclusive")
	case asJSON:
		return JSON, nil
	case asCSV:
		return CSV, nil
	}
	return Table, nil
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// SplitList splits a comma-separated flag value, dropping empty items.
func SplitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// MaxListItems caps the values an IntList may expand to.
const MaxListItems = 1024

// IntList parses a comma-separated list of positive integers and inclusive
// ranges ("8,16,32", "2-16", "2-4,8"). Repeated values are dropped; the
// order of first appearance is kept.
func IntList(s string) ([]int, error) {
	var out []int
	seen := map[int]bool{}
	add := func(v int) error {
		if !seen[v] {
			if len(out) == MaxListItems {
				return fmt.Errorf("more than %d values", MaxListItems)
			}
			seen[v] = true
			out = append(out, v)
		}
		return nil
	}
	for _, item := range SplitList(s) {
		lo, hi, isRange := strings.Cut(item, "-")
		a, err := strconv.Atoi(strings.TrimSpace(lo))
		if err != nil || a < 1 {
			return nil, fmt.Errorf("%q is not a positive integer or a range a-b", item)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(strings.TrimSpace(hi)); err != nil || b < a {
				return nil, fmt.Errorf("%q is not a range a-b with 1 ≤ a ≤ b", item)
			}
		}
		if b-a >= MaxListItems {
			return nil, fmt.Errorf("%q: more than %d values", item, MaxListItems)
		}
		for k := 0; k <= b-a; k++ {
			if err := add(a + k); err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("empty list")
	}
	return out, nil
}
