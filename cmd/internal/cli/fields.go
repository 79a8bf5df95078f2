package cli

import (
	"strings"
	"unicode"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// fieldFlags maps the fields the libraries name in their messages
// ({Field}, inputerr.Render) whose flag is not the field's name in
// kebab case ({MicroBatches}: --micro-batches). One map for every
// command: a field a library names means one flag wherever it is set.
// TestFieldsHaveFlags checks that every field named has a flag.
var fieldFlags = map[string]string{
	"Cs":        "--c",          // sweep.Grid
	"Devices":   "--device",     // sweep.Grid
	"GPUMemory": "--gpu-memory", // sim.Request
	"PlanFile":  "--plan",       // job.Options
	"Ps":        "--p",          // sweep.Grid, sweep.RunMachines
}

// FlagOf returns the flag that sets field, as a command prints it.
func FlagOf(field string) (string, bool) {
	if f, ok := fieldFlags[field]; ok {
		return f, true
	}
	if strings.Contains(field, ".") {
		return "", false
	}
	return "--" + kebab(field), true
}

// kebab writes a Go field name in a flag's words: MicroBatches:
// micro-batches, P: p, EvalMemory: eval-memory.
func kebab(field string) string {
	var b strings.Builder
	for i, r := range field {
		if unicode.IsUpper(r) {
			if i > 0 {
				b.WriteByte('-')
			}
			r = unicode.ToLower(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// Render names the fields a library's message names ({Field}) by their
// flags, as the user typed them.
func Render(s string) string { return inputerr.Render(s, FlagOf) }

// RenderAll renders every message of ss in place (notes and warnings a
// library returns).
func RenderAll(ss []string) {
	for i, s := range ss {
		ss[i] = Render(s)
	}
}
