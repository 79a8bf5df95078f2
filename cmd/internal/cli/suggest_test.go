package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestUnknownFlagSuggests: a mistyped flag is one line naming it with
// dashes and, when one is close, the flag meant; a --config file's
// mistyped key gets the same suggestion.
func TestUnknownFlagSuggests(t *testing.T) {
	tests := []struct {
		name string
		args []string
		file string
		want string
	}{
		{name: "one letter short", args: []string{"--epoch", "3"}, want: "unknown flag --epoch; did you mean --epochs?"},
		{name: "single dash", args: []string{"-epoch", "3"}, want: "unknown flag --epoch; did you mean --epochs?"},
		{name: "with a value", args: []string{"--epoch=3"}, want: "unknown flag --epoch; did you mean --epochs?"},
		{name: "a prefix", args: []string{"--eval-proto", "sampled"}, want: "unknown flag --eval-proto; did you mean --eval-protocol?"},
		{name: "swapped letters", args: []string{"--ordreing", "beta"}, want: "unknown flag --ordreing; did you mean --ordering?"},
		{name: "nothing close", args: []string{"--partitions", "8"}, want: "unknown flag --partitions (cmd --help lists them)"},
		{name: "config key", file: "epoch: 3\n", want: `unknown key "epoch": cmd has no flag --epoch; did you mean --epochs?`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
			fs.Int("epochs", 1, "")
			fs.String("ordering", "beta", "")
			fs.String("eval-protocol", "auto", "")
			fs.String("eval", "every", "")
			fs.Int("p", 16, "")
			ConfigFlags(fs)
			args := tc.args
			if tc.file != "" {
				args = []string{"--config", writeFile(t, tc.file)}
			}
			err := Parse(fs, args, io.Discard)
			var ue *UsageError
			require.ErrorAs(t, err, &ue)
			assert.Contains(t, err.Error(), tc.want)
			assert.NotContains(t, err.Error(), "provided but not defined")
		})
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"epochs", "eval", "eval-every", "eval-protocol", "p", "c", "dim"}
	for in, want := range map[string]string{
		"epoch": "epochs", "epochss": "epochs", "eval-evry": "eval-every", "eval-prot": "eval-protocol",
		"dims": "dim", "q": "", "partitions": "", "xyzzy": "", "ev": "",
	} {
		assert.Equal(t, want, Suggest(in, names), in)
	}
}
