package badinput

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var bin string

// TestMain builds the commands once into a temporary directory.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "tierflow-bin-*")
	if err != nil {
		panic(err)
	}
	bin = dir
	for _, cmd := range []string{"simulate", "realrun"} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(dir, cmd), "github.com/tierflow/tierflow/cmd/"+cmd).CombinedOutput()
		if err != nil {
			os.RemoveAll(dir)
			panic(string(out))
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func bad(name string) string { return filepath.Join("..", "..", "..", "testdata", "bad", name) }

// TestBadInputCorpus runs every malformed input through the real binary.
func TestBadInputCorpus(t *testing.T) {
	tests := []struct {
		name string
		cmd  string
		args []string
		msg  string // stderr must contain it
	}{
		// Flags.
		{"c below 2", "simulate", []string{"--c", "1"}, "c must be at least 2"},
		{"c above p", "simulate", []string{"--p", "5", "--c", "6"}, "exceeds p"},
		{"non-numeric p", "simulate", []string{"--p", "abc"}, `invalid value "abc" for flag --p`},
		{"negative p", "simulate", []string{"--p", "-4"}, "p must be at least 2"},
		{"plan too large for memory", "simulate", []string{"--p", "100000", "--c", "4"}, "GB for the order alone"},
		{"unknown ordering", "simulate", []string{"--orderings", "zigzag"}, `unknown ordering "zigzag"`},
		{"unknown system", "simulate", []string{"--system", "graphvite"}, `unknown system "graphvite"`},
		{"unknown device", "simulate", []string{"--device", "tpu-v9"}, `unknown device "tpu-v9"`},
		{"unknown dataset", "simulate", []string{"--dataset", "orkut"}, `unknown dataset "orkut"`},
		{"negative negatives", "simulate", []string{"--negatives", "-1"}, "--negatives -1"},
		{"realrun negative dim", "realrun", []string{"--dim", "-1"}, "--dim -1"},
		{"realrun unknown dataset", "realrun", []string{"--dataset", "orkut"}, "--dataset"},
		{"realrun c above p", "realrun", []string{"--p", "4", "--c", "9"}, "exceeds p"},
		// Device profiles.
		{"profile missing field", "simulate", []string{"--device", bad("profile-missing-field.yaml")}, "missing required field cpu.workers"},
		{"profile wrong units", "simulate", []string{"--device", bad("profile-wrong-units.yaml")}, "disk.read: \"400 MB\" is a size"},
		{"profile negative bandwidth", "simulate", []string{"--device", bad("profile-negative-bandwidth.yaml")}, "disk.read"},
		{"profile unknown field", "simulate", []string{"--device", bad("profile-unknown-field.yaml")}, "disk.iops: unknown field"},
		{"profile not YAML", "simulate", []string{"--device", bad("profile-not-yaml.yaml")}, "not valid YAML"},
		// Bucket histograms.
		{"histogram short row", "simulate", []string{"--p", "2", "--c", "2", "--edges", bad("histogram-short-row.json")}, "rows, want p = 2"},
		{"histogram negative", "simulate", []string{"--p", "2", "--c", "2", "--edges", bad("histogram-negative.json")}, "negative count"},
		{"histogram wrong p", "simulate", []string{"--p", "2", "--c", "2", "--edges", bad("histogram-wrong-p.json")}, "histogram has p = 4"},
		{"histogram not JSON", "simulate", []string{"--edges", bad("histogram-not-json.json")}, "histogram"},
		// Edge files.
		{"edges empty", "realrun", []string{"--edges", bad("edges-empty.tsv")}, "edges-empty.tsv: no edges"},
		{"edges binary", "realrun", []string{"--edges", bad("edges-binary.tsv")}, "edges-binary.tsv:1: not a text edge list"},
		{"edges invalid UTF-8", "realrun", []string{"--edges", bad("edges-invalid-utf8.tsv")}, "edges-invalid-utf8.tsv:2"},
		{"edges one column", "realrun", []string{"--edges", bad("edges-one-column.tsv")}, "edges-one-column.tsv:1: want 2 or 3 fields, got 1"},
		{"edges four columns", "realrun", []string{"--edges", bad("edges-four-columns.tsv")}, "edges-four-columns.tsv:1: want 2 or 3 fields, got 4"},
		{"edges mixed columns", "realrun", []string{"--edges", bad("edges-mixed-columns.tsv")}, "edges-mixed-columns.tsv:2"},
		{"edges only comments", "realrun", []string{"--edges", bad("edges-only-comments.tsv")}, "no edges"},
		{"edges missing file", "realrun", []string{"--edges", bad("no-such-file.tsv")}, "no-such-file.tsv"},
		// A work directory written by another format version is refused,
		// never replaced.
		{"manifest of another version", "realrun", []string{"--workdir", bad("workdir-version-99"), "--progress", "none"}, "format version 99"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string(nil), tt.args...)
			if tt.cmd == "realrun" && !strings.Contains(strings.Join(args, " "), "--workdir") {
				args = append(args, "--workdir", filepath.Join(dir, "work"), "--progress", "none")
			}
			cmd := exec.Command(filepath.Join(bin, tt.cmd), args...)
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "want a failing exit, got %v; stdout %q", err, stdout.String())
			assert.Equal(t, 2, exit.ExitCode(), stderr.String())
			assert.Empty(t, stdout.String())
			msg := stderr.String()
			assert.Equal(t, 1, strings.Count(msg, "\n"), "exactly one line: %q", msg)
			assert.True(t, strings.HasPrefix(msg, tt.cmd+": "), msg)
			assert.NotContains(t, msg, "goroutine", "no stack trace")
			assert.Contains(t, msg, tt.msg)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing may be left behind")
		})
	}
}
