package cli

import (
	"bytes"
	"flag"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReferenceMachineDefault: --help prints a machine-dependent default's
// value; inside DescribeMachine (the generated reference) it prints what
// the default is, and only for the flags marked so.
func TestReferenceMachineDefault(t *testing.T) {
	fs := flag.NewFlagSet("cmd", flag.ContinueOnError)
	fs.Int("workers", 7, "goroutines")
	fs.Int("p", 7, "partitions")
	fs.String("dir", "/tmp", "scratch `DIR`")
	MachineDefault(fs, "workers", "the number of CPUs")
	MachineDefault(fs, "dir", "the system temp dir")
	h := Help{Usage: "cmd [flags]", Summary: "Does it.", Groups: []FlagGroup{{Title: "Flags", Flags: []string{"workers", "p", "dir"}}}}
	print := func() string {
		var b bytes.Buffer
		h.Print(&b, fs)
		return b.String()
	}
	for _, tc := range []struct {
		name     string
		describe bool
		want     []string
	}{
		{"help", false, []string{"goroutines (default 7)", "partitions (default 7)", "scratch DIR (default /tmp)"}},
		{"reference", true, []string{"goroutines (default: the number of CPUs)", "partitions (default 7)", "scratch DIR (default: the system temp dir)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			if tc.describe {
				DescribeMachine(func() { got = print() })
			} else {
				got = print()
			}
			for _, w := range tc.want {
				assert.Contains(t, got, w)
			}
		})
	}
	assert.Contains(t, print(), "(default 7)", "DescribeMachine ends with its function")
}
