package cli

import (
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"
)

// Help is a command's --help text: what it does, its subcommands, its
// flags in groups (what to train, hardware, output, run control) and a few
// worked examples. Flags not named in any group are listed under "other".
type Help struct {
	Usage       string // the synopsis line, e.g. "simulate [flags]"
	Summary     string // one or two sentences
	Subcommands [][2]string
	// Lists are further titled lists of names and what they are (the
	// experiments reproduce runs), printed after the subcommands.
	Lists    []List
	Groups   []FlagGroup
	Examples []string
}

// FlagGroup is a titled list of flag names.
type FlagGroup struct {
	Title string
	Flags []string
}

// List is a titled list of names, each with a line on what it is.
type List struct {
	Title string
	Items [][2]string
}

var (
	helps = map[*flag.FlagSet]Help{}
	// extra are the flag groups registered by flag helpers (WideFlag,
	// ConfigFlags): merged into a group of the same title, or added.
	extra = map[*flag.FlagSet][]FlagGroup{}
)

// Group adds flags to the help group title of fs (made if the command's
// Help has none), so that a helper registering flags also places them.
func Group(fs *flag.FlagSet, title string, flags ...string) {
	extra[fs] = append(extra[fs], FlagGroup{Title: title, Flags: flags})
}

// groups are h's flag groups with the ones added by Group.
func (h Help) groups(fs *flag.FlagSet) []FlagGroup {
	out := make([]FlagGroup, len(h.Groups))
	for i, g := range h.Groups {
		out[i] = FlagGroup{Title: g.Title, Flags: slices.Clone(g.Flags)}
	}
	for _, e := range extra[fs] {
		i := slices.IndexFunc(out, func(g FlagGroup) bool { return g.Title == e.Title })
		if i < 0 {
			out = append(out, FlagGroup{Title: e.Title})
			i = len(out) - 1
		}
		for _, f := range e.Flags {
			if !slices.Contains(out[i].Flags, f) {
				out[i].Flags = append(out[i].Flags, f)
			}
		}
	}
	return out
}

// SetHelp makes --help on fs print h instead of the flag package's list.
func SetHelp(fs *flag.FlagSet, h Help) { helps[fs] = h }

// Print writes the help for fs.
func (h Help) Print(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", h.Usage, wrap(h.Summary, helpWidth, 0))
	if len(h.Subcommands) > 0 {
		fmt.Fprintln(w, "\nSubcommands:")
		for _, s := range h.Subcommands {
			fmt.Fprintf(w, "  %-22s %s\n", s[0], wrap(s[1], helpWidth-25, 25))
		}
	}
	for _, l := range h.Lists {
		fmt.Fprintf(w, "\n%s:\n", l.Title)
		for _, it := range l.Items {
			fmt.Fprintf(w, "  %-22s %s\n", it[0], wrap(it[1], helpWidth-25, 25))
		}
	}
	listed := map[string]bool{}
	groups := h.groups(fs)
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
			if _, ok := f.Value.(*enumValue); ok && arg == "value" {
				arg = "string"
			}
			line := "  --" + name
			if arg != "" {
				line += " " + arg
			}
			if what, ok := machineDefault(fs, name); ok && !strings.Contains(usage, "(default") {
				usage += fmt.Sprintf(" (default: %s)", what)
			} else if def := f.DefValue; def != "" && def != "false" && def != "0" && !strings.Contains(usage, "(default") {
				usage += fmt.Sprintf(" (default %s)", def)
			}
			var text []string
			for _, para := range strings.Split(usage, "\n") {
				text = append(text, wrap(para, helpWidth-29, 29))
			}
			fmt.Fprintf(w, "%-28s %s\n", line, strings.Join(text, "\n"+strings.Repeat(" ", 29)))
		}
	}
	if len(h.Examples) > 0 {
		fmt.Fprintln(w, "\nExamples:")
		for _, e := range h.Examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// helpWidth is the width help text is wrapped to.
const helpWidth = 100

// wrap breaks s into lines of at most width characters at spaces, each
// after the first indented by indent spaces.
func wrap(s string, width, indent int) string {
	var b strings.Builder
	n := 0
	for i, word := range strings.Fields(s) {
		switch {
		case i == 0:
		case n+1+utf8.RuneCountInString(word) > width:
			b.WriteString("\n" + strings.Repeat(" ", indent))
			n = 0
		default:
			b.WriteByte(' ')
			n++
		}
		b.WriteString(word)
		n += utf8.RuneCountInString(word)
	}
	return b.String()
}
