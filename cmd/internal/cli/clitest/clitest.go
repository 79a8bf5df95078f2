// Package clitest holds test helpers for tierflow's commands: walking
// every command and subcommand's --help, checking the rules of their
// numeric flags.
package clitest

import (
	"flag"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/cmd/internal/cli"
)

// Run runs a command on args and returns its stdout and exit status.
type Run func(args []string) (stdout string, code int)

// WalkHelp runs `prefix --help` and then, recursively, `prefix SUB
// --help` for every subcommand its help lists, and checks that each help
// is grouped help (cli.Help): a usage line, every flag under a group
// title of its own (no "Other" group), and never the flag package's raw
// "Usage of" list. It returns the commands walked.
func WalkHelp(t *testing.T, run Run, prefix ...string) [][]string {
	t.Helper()
	out, code := run(append(slices.Clone(prefix), "--help"))
	name := strings.Join(prefix, " ")
	if !assert.Equal(t, 0, code, "%s --help", name) {
		return nil
	}
	for _, p := range Problems(out) {
		t.Errorf("%s --help: %s\n%s", name, p, out)
	}
	walked := [][]string{prefix}
	for _, sub := range Subcommands(out) {
		walked = append(walked, WalkHelp(t, run, append(slices.Clone(prefix), sub)...)...)
	}
	return walked
}

// Problems lists what keeps help, a --help output, from being grouped
// help.
func Problems(help string) []string {
	var p []string
	if strings.Contains(help, "Usage of ") {
		p = append(p, `Go's raw flag list ("Usage of")`)
	}
	if !strings.HasPrefix(help, "Usage: ") {
		p = append(p, `no "Usage: " line first`)
	}
	if strings.Contains(help, "\nOther:\n") {
		p = append(p, "flags outside every group (listed under Other)")
	}
	if !strings.Contains(help, "\n  --") {
		p = append(p, "no flag listed")
	}
	// Every flag line sits under a group title.
	title := ""
	for _, line := range strings.Split(help, "\n") {
		switch {
		case strings.HasSuffix(line, ":") && !strings.HasPrefix(line, " "):
			title = line
		case line == "":
		case strings.HasPrefix(line, "  --") && (title == "" || title == "Subcommands:" || title == "Examples:"):
			p = append(p, "flag "+strings.Fields(line)[0]+" outside a group")
		}
	}
	return p
}

// Subcommands are the names a grouped help lists under "Subcommands:".
func Subcommands(help string) []string {
	_, rest, ok := strings.Cut(help, "\nSubcommands:\n")
	if !ok {
		return nil
	}
	var subs []string
	for _, line := range strings.Split(rest, "\n") {
		if !strings.HasPrefix(line, "  ") {
			break
		}
		if !strings.HasPrefix(line, "   ") { // not a wrapped description
			subs = append(subs, strings.Fields(line)[0])
		}
	}
	return subs
}

// CheckNumberRules checks the rules of a command's numeric flags
// (cli.Rules), over every flag set given table in this test binary — run
// WalkHelp first, so that every command and subcommand has built its own:
// each of commands has a flag set with rules; every integer, float and
// duration flag has a rule (cli.Any for a seed); a flag that takes 0 or
// more (cli.NonNegative) says in its help what 0 means, and one that
// refuses it (cli.Positive) does not offer it ("0: …"); and every name of
// table is a flag of some flag set.
func CheckNumberRules(t *testing.T, table map[string]cli.Rule, commands ...string) {
	t.Helper()
	used := map[string]bool{}
	seen := map[string]bool{}
	for _, fs := range cli.RuledFlagSets() {
		seen[fs.Name()] = true
		fs.VisitAll(func(f *flag.Flag) {
			rule := cli.RuleOf(fs, f.Name)
			if rule != 0 {
				used[f.Name] = true
			}
			g, ok := f.Value.(flag.Getter)
			if !ok {
				return
			}
			switch g.Get().(type) {
			case int, int64, uint, uint64, float64, time.Duration:
				assert.NotZero(t, rule, "%s --%s: a numeric flag without a rule (add it to the command's numberRules)", fs.Name(), f.Name)
			}
			switch rule {
			case cli.NonNegative:
				assert.Regexp(t, `\b0\b`, f.Usage, "%s --%s takes 0: its help must say what 0 means", fs.Name(), f.Name)
			case cli.Positive:
				assert.NotRegexp(t, `\b0:`, f.Usage, "%s --%s refuses 0: its help must not offer it (say \"default: …\")", fs.Name(), f.Name)
			}
		})
	}
	for _, c := range commands {
		assert.True(t, seen[c], "%s: no flag set with rules (make it with the command's newFlagSet)", c)
	}
	for name := range table {
		assert.True(t, used[name], "numberRules names --%s, which no flag set has", name)
	}
}
