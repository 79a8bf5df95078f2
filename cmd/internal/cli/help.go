package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Help is a command's --help text: what it does, its subcommands, its
// flags in groups (what to train, hardware, output, run control) and a few
// worked examples. Flags not named in any group are listed under "other".
type Help struct {
	Usage       string // the synopsis line, e.g. "simulate [flags]"
	Summary     string // one or two sentences
	Subcommands [][2]string
	Groups      []FlagGroup
	Examples    []string
}

// FlagGroup is a titled list of flag names.
type FlagGroup struct {
	Title string
	Flags []string
}

var helps = map[*flag.FlagSet]Help{}

// SetHelp makes --help on fs print h instead of the flag package's list.
func SetHelp(fs *flag.FlagSet, h Help) { helps[fs] = h }

// Print writes the help for fs.
func (h Help) Print(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", h.Usage, h.Summary)
	if len(h.Subcommands) > 0 {
		fmt.Fprintln(w, "\nSubcommands:")
		for _, s := range h.Subcommands {
			fmt.Fprintf(w, "  %-22s %s\n", s[0], s[1])
		}
	}
	listed := map[string]bool{}
	groups := h.Groups
	var other []string
	fs.VisitAll(func(f *flag.Flag) {
		for _, g := range groups {
			if slices.Contains(g.Flags, f.Name) {
				return
			}
		}
		other = append(other, f.Name)
	})
	if len(other) > 0 {
		groups = append(slices.Clone(groups), FlagGroup{Title: "Other", Flags: other})
	}
	for _, g := range groups {
		fmt.Fprintf(w, "\n%s:\n", g.Title)
		for _, name := range g.Flags {
			f := fs.Lookup(name)
			if f == nil || listed[name] {
				continue
			}
			listed[name] = true
			arg, usage := flag.UnquoteUsage(f)
			line := "  --" + name
			if arg != "" {
				line += " " + arg
			}
			if def := f.DefValue; def != "" && def != "false" && def != "0" && !strings.Contains(usage, "(default") {
				usage += fmt.Sprintf(" (default %s)", def)
			}
			fmt.Fprintf(w, "%-28s %s\n", line, strings.ReplaceAll(usage, "\n", "\n"+strings.Repeat(" ", 29)))
		}
	}
	if len(h.Examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}
