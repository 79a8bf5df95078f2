package cublas

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeEnv is a file system holding files and an environment vars.
func fakeEnv(vars map[string]string, files ...string) Env {
	have := map[string]bool{}
	for _, f := range files {
		have[f] = true
	}
	return Env{
		Getenv: func(k string) string { return vars[k] },
		Exists: func(p string) bool { return have[p] },
		Glob: func(pattern string) ([]string, error) {
			var out []string
			for f := range have {
				for d := filepath.Dir(f); d != "/" && d != "."; d = filepath.Dir(d) {
					if ok, _ := filepath.Match(pattern, d); ok {
						out = append(out, d)
					}
				}
			}
			return out, nil
		},
	}
}

func TestCandidatesOrder(t *testing.T) {
	venv13 := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13"
	conda12 := "/conda/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12"
	toolkit := "/usr/local/cuda/lib64/libcublas.so.12"
	home := "/cuda/lib64/libcublas.so.11"
	for _, tc := range []struct {
		name  string
		vars  map[string]string
		files []string
		want  []string
	}{
		{"nothing installed: the loader's own search only", nil, nil, Sonames},
		{"toolkit, then the venv of the GPU machines", nil, []string{venv13, toolkit},
			append(append([]string(nil), Sonames...), toolkit, venv13)},
		{"CUDA_HOME before /usr/local/cuda, CONDA_PREFIX before /opt/*/.venv",
			map[string]string{"CUDA_HOME": "/cuda", "CONDA_PREFIX": "/conda"}, []string{venv13, toolkit, home, conda12},
			append(append([]string(nil), Sonames...), home, toolkit, conda12, venv13)},
		{"the variable names a file: only it", map[string]string{EnvVar: "/x/libcublas.so.12"}, []string{venv13},
			[]string{"/x/libcublas.so.12"}},
		{"the variable names a folder: its sonames, newest first", map[string]string{EnvVar: "/x"}, []string{venv13},
			[]string{"/x/libcublas.so.13", "/x/libcublas.so.12", "/x/libcublas.so.11"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, Candidates(fakeEnv(tc.vars, tc.files...)))
		})
	}
}

func TestLoad(t *testing.T) {
	venv13 := "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13"
	var tried []string
	open := func(only string) Opener {
		return func(c string) error {
			tried = append(tried, c)
			if c == only {
				return nil
			}
			return errors.New(c + ": cannot open shared object file")
		}
	}
	got, err := Load(fakeEnv(nil, venv13), open(venv13))
	require.NoError(t, err)
	assert.Equal(t, venv13, got)
	assert.Equal(t, append(append([]string(nil), Sonames...), venv13), tried, "sonames first, then the venv")

	tried = nil
	got, err = Load(fakeEnv(nil), open("libcublas.so.12"))
	require.NoError(t, err)
	assert.Equal(t, "libcublas.so.12", got)
	assert.Equal(t, []string{"libcublas.so.13", "libcublas.so.12"}, tried, "stops at the first that opens")

	_, err = Load(fakeEnv(nil), open("none"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.Equal(t, "cuBLAS: not found (tried libcublas.so.13, libcublas.so.12, libcublas.so.11); set TIERFLOW_CUBLAS to libcublas.so.N or its folder", err.Error())

	_, err = Load(fakeEnv(map[string]string{EnvVar: "/x/libcublas.so.12"}), open("none"))
	require.Error(t, err)
	assert.NotContains(t, err.Error(), "\n")
	assert.True(t, strings.HasPrefix(err.Error(), "cuBLAS: $TIERFLOW_CUBLAS=/x/libcublas.so.12 does not load ("), err.Error())
}
