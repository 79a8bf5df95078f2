package main

import (
	"slices"
	"strings"
)

// resumeArgs are a command line's arguments with --resume added (once),
// quoted for a shell where they need it.
func resumeArgs(args []string) string {
	out := append([]string(nil), args...)
	if !slices.Contains(out, "--resume") && !slices.Contains(out, "-resume") {
		out = append(out, "--resume")
	}
	for i, a := range out {
		if a == "" || strings.ContainsAny(a, " \t'\"$\\") {
			out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(out, " ")
}
