package cli

import (
	"flag"
	"strings"
)

// Enumerated flags take their values in any case: the canonical name —
// lower case, as every name of the project is — is what is stored,
// printed and written to a configuration. EnumVar and PresetOrFileVar
// are the one place that does it, for the command line and a --config
// file alike (the file's values go through flag.Value.Set too); checking
// the value stays with the command.

// enumValue is a string flag canonicalised on Set by canon.
type enumValue struct {
	p     *string
	canon func(string) string
}

func (v *enumValue) String() string {
	if v == nil || v.p == nil {
		return ""
	}
	return *v.p
}

func (v *enumValue) Set(s string) error {
	*v.p = v.canon(s)
	return nil
}

func (v *enumValue) Get() any { return *v.p }

// EnumVar registers a string flag whose values are names from a fixed
// set (a comma-separated list of them too): the value is stored in lower
// case, without surrounding space. A value that is none of the names is
// left to the command to refuse.
func EnumVar(fs *flag.FlagSet, p *string, name, value, usage string) {
	*p = value
	fs.Var(&enumValue{p: p, canon: func(s string) string { return strings.ToLower(strings.TrimSpace(s)) }}, name, usage)
}

// PresetOrFileVar registers a string flag that names one of presets or a
// file (a comma-separated list of them too): an item that is one of the
// presets but for case is stored as the preset; any other item — a file
// name — is kept as given.
func PresetOrFileVar(fs *flag.FlagSet, p *string, name, value, usage string, presets []string) {
	*p = value
	canon := func(s string) string {
		items := strings.Split(s, ",")
		for i, it := range items {
			for _, pr := range presets {
				if strings.EqualFold(strings.TrimSpace(it), pr) {
					items[i] = pr
				}
			}
		}
		return strings.Join(items, ",")
	}
	fs.Var(&enumValue{p: p, canon: canon}, name, usage)
}
