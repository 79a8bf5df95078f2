package cli

import (
	"errors"
	"flag"
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ruledFlags is a flag set with a flag of each kind under each rule.
func ruledFlags() *flag.FlagSet {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.Int("p", 16, "")
	fs.Int("c", 0, "0 stands for the default when left out")
	fs.Int("chunk", 0, "")
	fs.Float64("scale", 0, "")
	fs.Float64("lr", 0, "")
	fs.Duration("lease", 5*time.Second, "")
	fs.String("memory", "", "a size")
	fs.String("ps", "8,16", "a list")
	fs.Int64("seed", 1, "")
	fs.Int("free", 0, "a flag without a rule")
	ConfigFlags(fs)
	Rules(fs, map[string]Rule{
		"p": Positive, "c": Positive, "scale": Positive, "lease": Positive, "memory": Positive, "ps": Positive,
		"chunk": NonNegative, "lr": NonNegative, "seed": Any,
	})
	return fs
}

func TestRules(t *testing.T) {
	tests := []struct {
		args []string
		file string // a --config file's text, if any
		err  string // "" = accepted
	}{
		{args: nil},
		{args: []string{"--p", "1", "--c", "2", "--chunk", "0", "--lr", "0", "--seed", "-7", "--free", "-3"}},
		{args: []string{"--scale", "0.5", "--lease", "1s", "--memory", "2GB", "--ps", "2-4,8"}},
		{args: []string{"--memory", "lots"}}, // left to the flag's own parser
		{args: []string{"--p", "0"}, err: "--p 0: must be at least 1"},
		{args: []string{"--p", "-4"}, err: "--p -4: must be at least 1"},
		{args: []string{"--c", "0"}, err: "--c 0: must be at least 1"},
		{args: []string{"--chunk", "-1"}, err: "--chunk -1: must not be negative"},
		{args: []string{"--lr", "-0.1"}, err: "--lr -0.1: must not be negative"},
		{args: []string{"--scale", "0"}, err: "--scale 0: must be positive"},
		{args: []string{"--scale", "NaN"}, err: "--scale NaN: must be positive"},
		{args: []string{"--lease", "0s"}, err: "--lease 0s: must be positive"},
		{args: []string{"--lease", "-1m"}, err: "--lease -1m0s: must be positive"},
		{args: []string{"--memory", "0"}, err: "--memory 0: must be positive"},
		{args: []string{"--memory", "-16GB"}, err: "--memory -16GB: must be positive"},
		{args: []string{"--memory", "0.0MB"}, err: "--memory 0.0MB: must be positive"},
		{args: []string{"--ps", "8,16,0"}, err: "--ps 8,16,0: each value must be positive (0 is not)"},
		{args: []string{"--ps", "0-4"}, err: "--ps 0-4: must be positive"},
		{args: []string{"--ps", "8, -2"}, err: "(-2 is not)"},
		{file: "p: 0\n", err: `key p: bad value "0": must be at least 1`},
		{file: "c: -1\n", err: `key c: bad value "-1": must be at least 1`},
		{file: "ps: [8, 16, 0]\n", err: `key ps: bad value "8,16,0": each value must be positive (0 is not)`},
		{file: "chunk: 0\nlr: 0\nseed: -1\n"},
		{args: []string{"--p", "4"}, file: "p: 0\n"}, // the command line wins: the file's value is not used
	}
	for _, tt := range tests {
		t.Run(tt.file+" "+join(tt.args), func(t *testing.T) {
			fs := ruledFlags()
			args := tt.args
			if tt.file != "" {
				args = append([]string{"--config", writeFile(t, tt.file)}, args...)
			}
			err := Parse(fs, args, io.Discard)
			if tt.err == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			var ue *UsageError
			assert.True(t, errors.As(err, &ue), "a usage error (exit status 2)")
			assert.Contains(t, err.Error(), tt.err)
		})
	}
}

func join(args []string) string {
	s := ""
	for _, a := range args {
		s += a + " "
	}
	return s
}

// TestRuleOf: the rule of a flag the table names, and none for one it
// does not.
func TestRuleOf(t *testing.T) {
	fs := ruledFlags()
	assert.Equal(t, Positive, RuleOf(fs, "p"))
	assert.Equal(t, NonNegative, RuleOf(fs, "chunk"))
	assert.Equal(t, Any, RuleOf(fs, "seed"))
	assert.Equal(t, Rule(0), RuleOf(fs, "free"))
	assert.Contains(t, RuledFlagSets(), fs)
}
