package badinput

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
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

// corpus is testdata/bad/, relative to this package.
var corpus = filepath.Join("..", "..", "..", "testdata", "bad")

// TestBadInputCorpus runs every case of testdata/bad/cases.txt through the
// real binary, in testdata/bad/ so the cases name their files plainly.
func TestBadInputCorpus(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpus, "cases.txt"))
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cmdline, msg, ok := strings.Cut(line, " => ")
		require.True(t, ok, "case %q has no \" => \"", line)
		fields := strings.Fields(cmdline)
		n++
		t.Run(cmdline, func(t *testing.T) {
			dir := t.TempDir()
			name, args := fields[0], fields[1:]
			if name == "realrun" && (len(args) == 0 || !slices.Contains([]string{"calibrate", "eval", "export", "trainer", "etcd-member", "neighbors", "predict"}, args[0])) {
				args = append(args, "--progress", "none")
				if !strings.Contains(cmdline, "--workdir") {
					args = append(args, "--workdir", filepath.Join(dir, "work"))
				}
			}
			cmd := exec.Command(filepath.Join(bin, name), args...)
			cmd.Dir = corpus
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			err := cmd.Run()
			var exit *exec.ExitError
			require.True(t, errors.As(err, &exit), "want a failing exit, got %v; stdout %q", err, stdout.String())
			assert.Equal(t, 2, exit.ExitCode(), stderr.String())
			assert.Empty(t, stdout.String())
			got := stderr.String()
			assert.Equal(t, 1, strings.Count(got, "\n"), "exactly one line: %q", got)
			assert.True(t, strings.HasPrefix(got, name+": "), got)
			assert.NotContains(t, got, "goroutine", "no stack trace")
			assert.Contains(t, got, msg)
			entries, err := os.ReadDir(dir)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing may be left behind")
			for _, root := range []string{"/sys/fs/cgroup/blkio", "/sys/fs/cgroup"} { // nor a disk-limit cgroup
				assert.NoDirExists(t, filepath.Join(root, fmt.Sprintf("tierflow-%d", cmd.Process.Pid)))
			}
		})
	}
	assert.GreaterOrEqual(t, n, 25, "the corpus must hold at least 25 cases")
	// The corpus itself is untouched (the version-99 work directory too).
	entries, err := os.ReadDir(filepath.Join(corpus, "workdir-version-99"))
	require.NoError(t, err)
	assert.Len(t, entries, 1)
}

// TestTolerantInput: CRLF line ends, commas and a missing final newline are
// not errors.
func TestTolerantInput(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(filepath.Join(bin, "realrun"), "--edges", filepath.Join("..", "..", "..", "testdata", "ok", "edges-crlf-no-final-newline.csv"),
		"--p", "2", "--c", "2", "--dim", "4", "--progress", "none", "--workdir", filepath.Join(dir, "work"))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	assert.Contains(t, string(out), "MRR")
}
