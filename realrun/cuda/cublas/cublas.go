// Package cublas finds NVIDIA's cuBLAS library for the CUDA engine at run
// time, so that one binary works against whichever CUDA a machine has
// (libcublas.so.13, .12 or .11, in the system's library path, a CUDA
// toolkit or a Python environment's nvidia wheels). It holds the search
// order only; the engine (build tag cuda) opens the candidates with dlopen.
package cublas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// EnvVar names the library (a file) or the folder that holds it; when it
// is set nothing else is tried.
const EnvVar = "TIERFLOW_CUBLAS"

// Sonames are the cuBLAS versions tried, newest first.
var Sonames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// Env is what the search reads of the process: its environment and the
// file system (tests give fakes).
type Env struct {
	Getenv func(string) string
	Glob   func(pattern string) ([]string, error)
	Exists func(path string) bool
}

// OS is the running process's environment.
var OS = Env{Getenv: os.Getenv, Glob: filepath.Glob, Exists: func(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && !fi.IsDir()
}}

// Candidates lists what to open, in order: with $TIERFLOW_CUBLAS set,
// only that file (or the sonames in that folder); otherwise each soname
// through the dynamic loader's own search (LD_LIBRARY_PATH, ld.so.cache),
// then each soname in the CUDA toolkit folders ($CUDA_HOME, $CUDA_PATH,
// /usr/local/cuda) and in the nvidia wheels of Python environments
// ($VIRTUAL_ENV, $CONDA_PREFIX, /opt/*/.venv, /usr/local, /usr), newest
// version first within each place. Entries without a slash are sonames
// for the loader; the others are files that exist.
func Candidates(env Env) []string {
	if v := env.Getenv(EnvVar); v != "" {
		if strings.HasPrefix(filepath.Base(v), "libcublas.so") {
			return []string{v}
		}
		var out []string
		for _, s := range Sonames {
			out = append(out, filepath.Join(v, s))
		}
		return out
	}
	out := append([]string(nil), Sonames...)
	seen := map[string]bool{}
	add := func(dir string) {
		for _, s := range Sonames {
			p := filepath.Join(dir, s)
			if !seen[p] && env.Exists(p) {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := env.Getenv(v); d != "" {
			add(filepath.Join(d, "lib64"))
			add(filepath.Join(d, "lib"))
		}
	}
	add("/usr/local/cuda/lib64")
	add("/usr/local/cuda/targets/x86_64-linux/lib")
	var prefixes []string
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := env.Getenv(v); d != "" {
			prefixes = append(prefixes, d)
		}
	}
	venvs, _ := env.Glob("/opt/*/.venv")
	sort.Strings(venvs)
	prefixes = append(prefixes, venvs...)
	prefixes = append(prefixes, "/opt/conda", "/usr/local", "/usr")
	for _, pre := range prefixes {
		for _, site := range []string{"site-packages", "dist-packages"} {
			// pip's CUDA 13 wheels install into nvidia/cu13/lib, the
			// CUDA 12 and 11 ones into nvidia/cublas/lib.
			for _, sub := range []string{"nvidia/cu13/lib", "nvidia/cublas/lib"} {
				dirs, _ := env.Glob(filepath.Join(pre, "lib", "python3*", site, sub))
				sort.Sort(sort.Reverse(sort.StringSlice(dirs))) // newest Python first
				for _, d := range dirs {
					add(d)
				}
			}
		}
	}
	return out
}

// Opener opens one candidate (dlopen) and says why it could not.
type Opener func(candidate string) error

// Load opens the first candidate that opens and returns it. When none
// does, the error is one line: what was tried and how to point the
// engine at a library.
func Load(env Env, open Opener) (string, error) {
	cands := Candidates(env)
	var errs []string
	for _, c := range cands {
		err := open(c)
		if err == nil {
			return c, nil
		}
		errs = append(errs, err.Error())
	}
	if v := env.Getenv(EnvVar); v != "" {
		return "", fmt.Errorf("cuBLAS: $%s=%s does not load (%s)", EnvVar, v, strings.Join(errs, "; "))
	}
	return "", errors.New("cuBLAS: not found (tried " + strings.Join(cands, ", ") + "); set " + EnvVar + " to libcublas.so.N or its folder")
}
