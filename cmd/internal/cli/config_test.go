package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// testFlags is a command's flag set with one flag of each kind.
type testFlags struct {
	p       int
	lr      float64
	name    string
	list    string
	on      bool
	lease   time.Duration
	seed    int64
	cfg     *ConfigOptions
	fs      *flag.FlagSet
	wide    *bool
	asJSON  bool
	comment string
}

func newTestFlags() *testFlags {
	f := &testFlags{fs: flag.NewFlagSet("cmd", flag.ContinueOnError)}
	f.fs.IntVar(&f.p, "p", 16, "")
	f.fs.Float64Var(&f.lr, "lr", 0.1, "")
	f.fs.StringVar(&f.name, "ordering", "beta", "")
	f.fs.StringVar(&f.list, "orderings", "", "")
	f.fs.BoolVar(&f.on, "no-prefetch", false, "")
	f.fs.DurationVar(&f.lease, "lease", 5*time.Second, "")
	f.fs.Int64Var(&f.seed, "seed", 1, "")
	f.fs.StringVar(&f.comment, "note", "", "")
	f.cfg = ConfigFlags(f.fs)
	f.wide = WideFlag(f.fs)
	return f
}

func writeFile(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "run.yaml")
	require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
	return path
}

func TestConfigFile(t *testing.T) {
	tests := []struct {
		name, file string
		args       []string
		check      func(t *testing.T, f *testFlags)
		err        string // a substring of the one-line error
	}{
		{name: "every kind", file: "p: 32\nlr: 0.3\nordering: hilbert\norderings: [beta, hilbert]\nno-prefetch: true\nlease: 10s\nseed: -3\nnote: ~\nwide: true\n",
			check: func(t *testing.T, f *testFlags) {
				assert.Equal(t, 32, f.p)
				assert.Equal(t, 0.3, f.lr)
				assert.Equal(t, "hilbert", f.ordering())
				assert.Equal(t, "beta,hilbert", f.list)
				assert.True(t, f.on)
				assert.Equal(t, 10*time.Second, f.lease)
				assert.Equal(t, int64(-3), f.seed)
				assert.True(t, *f.wide)
			}},
		{name: "the command line wins", file: "p: 32\nlr: 0.3\n", args: []string{"--p", "8"},
			check: func(t *testing.T, f *testFlags) { assert.Equal(t, 8, f.p); assert.Equal(t, 0.3, f.lr) }},
		{name: "a default on the command line wins too", file: "p: 32\n", args: []string{"--p", "16"},
			check: func(t *testing.T, f *testFlags) { assert.Equal(t, 16, f.p) }},
		{name: "dashes and comments", file: "# a comment\n--p: 4 # four\n",
			check: func(t *testing.T, f *testFlags) { assert.Equal(t, 4, f.p) }},
		{name: "empty file", file: "",
			check: func(t *testing.T, f *testFlags) { assert.Equal(t, 16, f.p) }},
		{name: "unknown key", file: "p: 4\npartitions: 8\n", err: `run.yaml: unknown key "partitions": cmd has no flag --partitions`},
		{name: "bad value", file: "p: sixteen\n", err: `run.yaml: key p: bad value "sixteen": want a(n) int`},
		{name: "bad bool", file: "no-prefetch: maybe\n", err: `key no-prefetch: bad value "maybe": want true or false`},
		{name: "a map value", file: "p: {a: 1}\n", err: "key p (line 1): want a value or a list of values, not a map"},
		{name: "not a map", file: "- p\n- c\n", err: "want a map from flag name to value"},
		{name: "not YAML", file: "p: [\n", err: "not YAML"},
		{name: "duplicate key", file: "p: 1\np: 2\n", err: "key p given twice (lines 1 and 2)"},
		{name: "nested config", file: "config: other.yaml\n", err: "key config: a configuration file cannot name another one"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestFlags()
			path := writeFile(t, tc.file)
			err := Parse(f.fs, append([]string{"--config", path}, tc.args...), io.Discard)
			if tc.err != "" {
				var ue *UsageError
				require.ErrorAs(t, err, &ue)
				assert.Contains(t, err.Error(), tc.err)
				assert.Contains(t, err.Error(), path, "the error names the file")
				assert.NotContains(t, err.Error(), "\n")
				return
			}
			require.NoError(t, err)
			tc.check(t, f)
		})
	}
	err := Parse(newTestFlags().fs, []string{"--config", filepath.Join(t.TempDir(), "none.yaml")}, io.Discard)
	assert.ErrorContains(t, err, "--config: open ")
}

func (f *testFlags) ordering() string { return f.name }

// TestConfigRoundTrip: the flags that differ from their defaults, written
// by ConfigYAML and read back with --config, give the same values.
func TestConfigRoundTrip(t *testing.T) {
	f := newTestFlags()
	args := []string{"--p", "8", "--lr", "1e-3", "--ordering", "true", "--orderings", "beta,hilbert", "--no-prefetch", "--lease", "1m30s", "--seed", "0", "--note", "a: b # c", "--wide"}
	require.NoError(t, Parse(f.fs, args, io.Discard))
	data, err := ConfigYAML(f.fs, "written by a test\nsecond line", func(name, v string) (string, bool) { return v, name != "wide" })
	require.NoError(t, err)
	assert.Equal(t, `# written by a test
# second line
lease: 1m30s
lr: 0.001
no-prefetch: true
note: 'a: b # c'
ordering: "true"
orderings: beta,hilbert
p: 8
seed: 0
`, string(data), "defaults and left-out flags are not written; strings that read as other types are quoted")
	g := newTestFlags()
	require.NoError(t, Parse(g.fs, []string{"--config", writeFile(t, string(data))}, io.Discard))
	f.cfg, g.cfg, f.fs, g.fs, f.wide, g.wide = nil, nil, nil, nil, nil, nil
	assert.Equal(t, *f, *g)

	var buf bytes.Buffer
	require.NoError(t, PrintConfig(&buf, newTestFlags().fs, "", nil))
	assert.Equal(t, "{}\n", buf.String(), "nothing differs from its default")
}

// TestGroupsAddedByHelpers: --wide and --config land in their groups.
func TestGroupsAddedByHelpers(t *testing.T) {
	f := newTestFlags()
	SetHelp(f.fs, Help{Usage: "cmd", Summary: "s", Groups: []FlagGroup{{Title: "Output", Flags: []string{"p"}}},
		Lists: []List{{Title: "Things", Items: [][2]string{{"a", "the a"}}}}})
	var buf bytes.Buffer
	require.ErrorIs(t, Parse(f.fs, []string{"--help"}, &buf), flag.ErrHelp)
	out := buf.String()
	assert.Contains(t, out, "\nThings:\n  a                      the a\n")
	assert.Regexp(t, `(?s)Output:\n  --p int.*\n  --wide`, out)
	assert.Regexp(t, `(?s)Configuration file:\n  --config FILE .*\n  --print-config`, out)
}

// TestConfigYAMLOver: a configuration written over an earlier one keeps
// every earlier value of a flag this invocation leaves unset, and takes
// the value of every flag set now, even to its default.
func TestConfigYAMLOver(t *testing.T) {
	newFS := func() *flag.FlagSet {
		fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
		fs.Int("epochs", 1, "")
		fs.Int("eval-every", 1, "")
		fs.String("export", "", "")
		fs.Int("workers", 4, "")
		return fs
	}
	first := newFS()
	require.NoError(t, Parse(first, []string{"--epochs", "5", "--eval-every", "2", "--export", "/x/e.npy", "--workers", "1"}, io.Discard))
	old, err := ConfigYAML(first, "", nil)
	require.NoError(t, err)
	again := newFS()
	require.NoError(t, Parse(again, []string{"--epochs", "6", "--eval-every", "1"}, io.Discard))
	got, err := ConfigYAMLOver(again, old, "", nil)
	require.NoError(t, err)
	assert.Equal(t, "epochs: 6\nexport: /x/e.npy\nworkers: 1\n", string(got))
	plain, err := ConfigYAML(again, "", nil)
	require.NoError(t, err)
	assert.Equal(t, "epochs: 6\n", string(plain), "ConfigYAML alone writes this invocation's flags")
	broken, err := ConfigYAMLOver(again, []byte("p: ["), "", nil)
	require.NoError(t, err)
	assert.Equal(t, "epochs: 6\n", string(broken), "an earlier file that does not parse is ignored")
}
