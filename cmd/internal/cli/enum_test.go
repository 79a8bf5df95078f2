package cli

import (
	"flag"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestEnumFlags: an enumerated flag's value is stored, printed and
// written to a configuration in lower case, from the command line and
// from a --config file alike; a flag that names a preset or a file
// lower-cases only the presets.
func TestEnumFlags(t *testing.T) {
	tests := []struct {
		name        string
		args        []string
		file        string
		proto, list string
		device      string
	}{
		{name: "as typed", args: []string{"--eval-protocol", "Filtered", "--orderings", "Beta,HILBERT", "--device", "P3.2xlarge"},
			proto: "filtered", list: "beta,hilbert", device: "p3.2xlarge"},
		{name: "a file keeps its case", args: []string{"--device", "My-Box.yaml", "--eval-protocol", " SAMPLED "},
			proto: "sampled", list: "all", device: "My-Box.yaml"},
		{name: "a preset in a list", args: []string{"--device", "P3.2xlarge,Box.YAML"},
			proto: "auto", list: "all", device: "p3.2xlarge,Box.YAML"},
		{name: "from a config file", file: "eval-protocol: Filtered\norderings: [Beta, Hilbert]\ndevice: PBG-Paper\n",
			proto: "filtered", list: "beta,hilbert", device: "pbg-paper"},
		{name: "unknown values are kept for the command to refuse", args: []string{"--eval-protocol", "Exact"},
			proto: "exact", list: "all", device: "p3.2xlarge"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
			var proto, list, device string
			EnumVar(fs, &proto, "eval-protocol", "auto", "")
			EnumVar(fs, &list, "orderings", "all", "")
			PresetOrFileVar(fs, &device, "device", "p3.2xlarge", "", []string{"p3.2xlarge", "pbg-paper"})
			ConfigFlags(fs)
			args := tc.args
			if tc.file != "" {
				args = []string{"--config", writeFile(t, tc.file)}
			}
			require.NoError(t, Parse(fs, args, io.Discard))
			assert.Equal(t, tc.proto, proto)
			assert.Equal(t, tc.list, list)
			assert.Equal(t, tc.device, device)
			cfg, err := ConfigYAML(fs, "", nil)
			require.NoError(t, err)
			if tc.proto != "auto" {
				assert.Contains(t, string(cfg), "eval-protocol: "+tc.proto)
			}
			assert.Equal(t, "auto", fs.Lookup("eval-protocol").DefValue)
		})
	}
}
