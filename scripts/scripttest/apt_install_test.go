// Package scripttest holds the tests of the repository's shell scripts
// (scripts/) and of the Makefile targets that call them.
package scripttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMakeInstallsThroughAptInstall: every Makefile target that installs
// Debian packages (build-hdf5 among them) goes through apt-install.sh,
// never apt-get directly, so that it says what it installs first.
func TestMakeInstallsThroughAptInstall(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("no make")
	}
	for _, target := range []string{"build-hdf5", "test-hdf5", "reproduce-quality"} {
		t.Run(target, func(t *testing.T) {
			// -n prints the commands without running them (the guards
			// included: they are one line with the install).
			out, err := exec.Command("make", "-n", "-C", "../..", "-W", "bin/reproduce", target).CombinedOutput()
			require.NoError(t, err, string(out))
			assert.NotContains(t, string(out), "apt-get", "installs go through scripts/apt-install.sh")
			assert.Contains(t, string(out), "./scripts/apt-install.sh ")
		})
	}
	data, err := os.ReadFile("../../Makefile")
	require.NoError(t, err)
	assert.NotContains(t, string(data), "apt-get update", "no target calls apt-get directly")
}

// TestAptInstall runs apt-install.sh with stand-ins for dpkg-query and
// apt-get: it names the missing packages in one line before apt-get
// runs, installs only those, with --no-upgrade, and does nothing when
// none is missing.
func TestAptInstall(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("apt-install.sh installs as root only")
	}
	fake := t.TempDir()
	// dpkg-query: python3-numpy is installed, nothing else.
	writeScript(t, filepath.Join(fake, "dpkg-query"), `for a in "$@"; do last=$a; done
if [ "$last" = python3-numpy ]; then printf 'install ok installed'; else exit 1; fi`)
	writeScript(t, filepath.Join(fake, "apt-get"), `echo "apt-get $*"`)
	tests := []struct {
		name     string
		packages []string
		want     []string
	}{
		{"two missing, one present", []string{"python3-h5py", "python3-numpy", "libhdf5-dev"}, []string{
			"h5py-deps: installing python3-h5py libhdf5-dev with apt-get (missing; installed packages are not upgraded)",
			"apt-get update -qq",
			"apt-get install -y -qq --no-upgrade --no-install-recommends python3-h5py libhdf5-dev",
		}},
		{"all present", []string{"python3-numpy"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command("../apt-install.sh", append([]string{"h5py-deps"}, tc.packages...)...)
			cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
			out, err := cmd.CombinedOutput()
			require.NoError(t, err, string(out))
			var lines []string
			if s := strings.TrimSpace(string(out)); s != "" {
				lines = strings.Split(s, "\n")
			}
			assert.Equal(t, tc.want, lines)
			for _, l := range lines {
				if f := strings.Fields(l); f[0] == "apt-get" {
					assert.Contains(t, []string{"update", "install"}, f[1], "apt-get only updates its lists and installs: %s", l)
				}
			}
		})
	}
}

func writeScript(t *testing.T, path, body string) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte("#!/bin/sh\n"+body+"\n"), 0o755))
}
