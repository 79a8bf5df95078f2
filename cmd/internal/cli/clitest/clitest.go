// Package clitest holds test helpers for tierflow's commands: walking
// every command and subcommand's --help.
package clitest

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
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
