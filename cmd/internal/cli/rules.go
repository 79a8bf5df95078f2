package cli

import (
	"flag"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Rule is what a numeric flag's value may be. Parse refuses a value that
// breaks its flag's rule, whether the command line or the --config file
// gave it, with one line (a UsageError, exit status 2), before any work.
// A flag left at its default is never checked: a default of 0 may stand
// for "the default" (simulate's --c left out is the system's own), but a
// 0 given by the user is refused where the rule says so.
type Rule int

// The rules.
const (
	// Positive: 0 and negative values are meaningless (at least 1 for an
	// integer).
	Positive Rule = iota + 1
	// NonNegative: 0 has a meaning (the flag's help says which), negative
	// values have none.
	NonNegative
	// Any: every value has a meaning (a seed); recorded so that Unruled
	// does not list the flag.
	Any
)

var rules = map[*flag.FlagSet]map[string]Rule{}

// Rules gives fs's flags their rules: table maps a flag's name to its
// rule, and a flag it does not name has none (a command keeps one table
// for all its flag sets; the flags may be registered after the call). A
// flag may be an integer, a float or a duration, or a string that holds
// numbers: a size or a rate (2GB, 300MB/s), a comma-separated list of
// numbers and ranges a-b (8,16,2-4) — every item counts — or a duration or
// bucket count (30s, 64b). A string item that does not begin with a number
// is left to the flag's own parser.
func Rules(fs *flag.FlagSet, table map[string]Rule) { rules[fs] = table }

// RuleOf is the rule Require recorded for fs's flag name (0: none).
func RuleOf(fs *flag.FlagSet, name string) Rule { return rules[fs][name] }

// RuledFlagSets are the flag sets given rules so far (Rules), for a
// command's test to check that every numeric flag has one
// (clitest.CheckNumberRules).
func RuledFlagSets() []*flag.FlagSet {
	var out []*flag.FlagSet
	for fs := range rules {
		out = append(out, fs)
	}
	return out
}

// checkRules checks the flags of fs that are set (on the command line, or
// from a configuration file) against their rules, in name order; skip
// names flags not to check.
func checkRules(fs *flag.FlagSet, skip map[string]bool) error {
	var err error
	fs.Visit(func(f *flag.Flag) {
		if err == nil && !skip[f.Name] {
			if msg := breaks(fs, f); msg != "" {
				err = Usagef("--%s %s: %s", f.Name, f.Value.String(), msg)
			}
		}
	})
	return err
}

// breaks is why f's value breaks its rule in fs ("" if it does not).
func breaks(fs *flag.FlagSet, f *flag.Flag) string {
	rule := rules[fs][f.Name]
	if rule == 0 {
		return ""
	}
	var v any = f.Value.String()
	if g, ok := f.Value.(flag.Getter); ok {
		v = g.Get()
	}
	switch x := v.(type) {
	case int:
		return rule.breaksInt(int64(x))
	case int64:
		return rule.breaksInt(x)
	case float64:
		return rule.breaksFloat(x)
	case time.Duration:
		return rule.breaksFloat(x.Seconds())
	case string:
		items := strings.Split(x, ",")
		for _, item := range items {
			num, ok := leadingNumber(item)
			if !ok {
				continue
			}
			if msg := rule.breaksFloat(num); msg != "" {
				if len(items) > 1 {
					return fmt.Sprintf("each value %s (%s is not)", msg, strings.TrimSpace(item))
				}
				return msg
			}
		}
	}
	return ""
}

func (r Rule) breaksInt(v int64) string {
	switch {
	case r == Positive && v < 1:
		return "must be at least 1"
	case r == NonNegative && v < 0:
		return "must not be negative"
	}
	return ""
}

func (r Rule) breaksFloat(v float64) string {
	switch {
	case r == Positive && !(v > 0):
		return "must be positive"
	case r == NonNegative && !(v >= 0):
		return "must not be negative"
	}
	return ""
}

// number is the number a size, a rate, a duration, a bucket count or a
// list's item or range begins with.
var number = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)

// leadingNumber is the number s begins with, if it begins with one.
func leadingNumber(s string) (float64, bool) {
	m := number.FindString(strings.TrimSpace(s))
	if m == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(m, 64)
	return v, err == nil
}
