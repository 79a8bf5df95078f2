package cli

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// A configuration file holds a command's flags as a YAML map from flag
// name (without dashes) to value:
//
//	dataset: freebase86m
//	p: 32
//	orderings: [beta, hilbert]   # a list is the comma-separated value
//
// Any flag may be named; a flag given on the command line wins over the
// file. An unknown name or a bad value is one line naming the key and the
// file (exit status 2).

// ConfigOptions are the configuration flags of a command: the file to
// read (--config) and whether to print the effective configuration and
// stop (--print-config).
type ConfigOptions struct {
	File  string
	Print bool
}

var configs = map[*flag.FlagSet]*ConfigOptions{}

// ConfigFlags registers --config and --print-config on fs (under the help
// group "Configuration file"). Parse then applies the file: every flag it
// names that the command line does not give is set from it, as if it had
// been given (fs.Visit sees it).
func ConfigFlags(fs *flag.FlagSet) *ConfigOptions {
	c := &ConfigOptions{}
	fs.StringVar(&c.File, "config", "", "read flags from a YAML `FILE`: a map from flag name (no dashes) to value; flags on the command line win")
	fs.BoolVar(&c.Print, "print-config", false, "check the flags, print them as a --config file (the ones that differ from their defaults) and stop")
	configs[fs] = c
	Group(fs, "Configuration file", "config", "print-config")
	return c
}

// applyConfig sets the flags of fs that the configuration file names and
// the command line does not (Parse calls it).
func applyConfig(fs *flag.FlagSet) error {
	c, ok := configs[fs]
	if !ok || c.File == "" {
		return nil
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	return ApplyConfig(fs, c.File, given)
}

// ApplyConfig reads the configuration file path and sets every flag of fs
// it names, except those in skip (the ones given on the command line).
// Errors are UsageErrors naming the file and the key.
func ApplyConfig(fs *flag.FlagSet, path string, skip map[string]bool) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return Usagef("--config: %w", err)
	}
	values, err := ParseConfig(data)
	if err != nil {
		return Usagef("--config %s: %w", path, err)
	}
	for _, kv := range values {
		key, value := kv[0], kv[1]
		switch {
		case key == "config":
			return Usagef("--config %s: key config: a configuration file cannot name another one", path)
		case fs.Lookup(key) == nil:
			return Usagef("--config %s: unknown key %q: %s has no flag --%s%s", path, key, fs.Name(), key, didYouMean(fs, key, fmt.Sprintf(" (%s --help lists them)", fs.Name())))
		case skip[key]:
			continue
		}
		if err := fs.Set(key, value); err != nil {
			msg := err.Error()
			if msg == "parse error" || msg == "value out of range" {
				kind, _ := flag.UnquoteUsage(fs.Lookup(key))
				msg = "want a(n) " + kind
				if kind == "" {
					msg = "want true or false"
				}
			}
			return Usagef("--config %s: key %s: bad value %q: %s", path, key, value, msg)
		}
		if msg := breaks(fs, fs.Lookup(key)); msg != "" {
			return Usagef("--config %s: key %s: bad value %q: %s", path, key, value, msg)
		}
	}
	return nil
}

// ParseConfig reads a configuration file's text into (flag name, value)
// pairs in the file's order: scalars as written, a list of scalars as
// their comma-separated values, null as "". An empty file holds none.
func ParseConfig(data []byte) ([][2]string, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("not YAML: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	m := doc.Content[0]
	if m.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("line %d: want a map from flag name to value (p: 16)", m.Line)
	}
	var out [][2]string
	line := map[string]int{}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Value == "" {
			return nil, fmt.Errorf("line %d: a key must be a flag name", k.Line)
		}
		key := strings.TrimLeft(k.Value, "-")
		if l, dup := line[key]; dup {
			return nil, fmt.Errorf("key %s given twice (lines %d and %d)", key, l, k.Line)
		}
		line[key] = k.Line
		value, err := configValue(v)
		if err != nil {
			return nil, fmt.Errorf("key %s (line %d): %w", key, v.Line, err)
		}
		out = append(out, [2]string{key, value})
	}
	return out, nil
}

// configValue is a value node as a flag's text.
func configValue(v *yaml.Node) (string, error) {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag == "!!null" {
			return "", nil
		}
		return v.Value, nil
	case yaml.SequenceNode:
		items := make([]string, len(v.Content))
		for i, it := range v.Content {
			if it.Kind != yaml.ScalarNode {
				return "", fmt.Errorf("a list may hold only plain values")
			}
			items[i] = it.Value
		}
		return strings.Join(items, ","), nil
	case yaml.AliasNode:
		return configValue(v.Alias)
	}
	return "", fmt.Errorf("want a value or a list of values, not a map")
}

// ConfigYAML is fs's effective configuration as a configuration file:
// every flag whose value differs from its default, in name order (never
// --config and --print-config). edit, if not nil, may rewrite a flag's
// value (an absolute path) or leave the flag out (false: one-shot actions
// such as --resume). Read back with ApplyConfig on a fresh flag set it
// gives the same values. head, if not empty, is written first as comment
// lines.
func ConfigYAML(fs *flag.FlagSet, head string, edit func(name, value string) (string, bool)) ([]byte, error) {
	return configYAML(fs, head, edit, nil)
}

// ConfigYAMLOver is ConfigYAML for an invocation that continues the one
// an earlier configuration file describes (old, as ConfigYAML wrote it):
// every flag this invocation leaves unset — neither on its command line
// nor in its --config file — keeps old's value, so that nothing the
// earlier invocation was configured with is dropped; a flag set, even to
// its default, has the value it has now. An old file that does not parse
// is ignored.
func ConfigYAMLOver(fs *flag.FlagSet, old []byte, head string, edit func(name, value string) (string, bool)) ([]byte, error) {
	pairs, err := ParseConfig(old)
	if err != nil {
		pairs = nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	keep := map[string]string{}
	for _, kv := range pairs {
		if !set[kv[0]] && fs.Lookup(kv[0]) != nil {
			keep[kv[0]] = kv[1]
		}
	}
	return configYAML(fs, head, edit, keep)
}

func configYAML(fs *flag.FlagSet, head string, edit func(name, value string) (string, bool), keep map[string]string) ([]byte, error) {
	m := &yaml.Node{Kind: yaml.MappingNode}
	fs.VisitAll(func(f *flag.Flag) {
		v := f.Value.String()
		if old, ok := keep[f.Name]; ok && v == f.DefValue {
			v = old
		}
		if v == f.DefValue || f.Name == "config" || f.Name == "print-config" {
			return
		}
		if edit != nil {
			var keep bool
			if v, keep = edit(f.Name, v); !keep {
				return
			}
		}
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: f.Name}, &yaml.Node{Kind: yaml.ScalarNode, Tag: scalarTag(f, v), Value: v})
	})
	var b bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(head), "\n") {
		if line != "" {
			fmt.Fprintf(&b, "# %s\n", line)
		}
	}
	if len(m.Content) == 0 {
		b.WriteString("{}\n")
		return b.Bytes(), nil
	}
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(m); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// scalarTag types a flag's value for YAML, so that a number or a bool is
// written plain and a string that looks like one is quoted.
func scalarTag(f *flag.Flag, v string) string {
	if bf, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && bf.IsBoolFlag() {
		if _, err := strconv.ParseBool(v); err == nil && (v == "true" || v == "false") {
			return "!!bool"
		}
	}
	if _, err := strconv.ParseInt(v, 10, 64); err == nil {
		return "!!int"
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil && !strings.ContainsAny(v, "xXpP_") && !strings.EqualFold(strings.TrimLeft(v, "+-"), "inf") && !strings.EqualFold(v, "nan") {
		return "!!float"
	}
	return "!!str"
}

// PrintConfig writes fs's effective configuration (ConfigYAML) to w.
func PrintConfig(w io.Writer, fs *flag.FlagSet, head string, edit func(name, value string) (string, bool)) error {
	data, err := ConfigYAML(fs, head, edit)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}
