package cli

import (
	"bytes"
	"io"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// fieldFlags maps the fields the libraries name in their messages
// ({Field}, inputerr.Render) whose flag is not the field's name in kebab
// case (inputerr.Kebab: {MicroBatches}: --micro-batches). One map for
// every command: a field a library names means one flag wherever it is
// set.
// TestFieldsHaveFlags checks that every field named has a flag.
var fieldFlags = map[string]string{
	"Cs":          "--c",        // sweep.Grid
	"Devices":     "--device",   // sweep.Grid
	"Distributed": "--trainers", // job.Options (dist.TrainDistributed sets it for realrun --trainers)
	"PlanFile":    "--plan",     // job.Options
	"Ps":          "--p",        // sweep.Grid, sweep.RunMachines
}

// FlagOf returns the flag that sets field, as a command prints it.
func FlagOf(field string) (string, bool) {
	if f, ok := fieldFlags[field]; ok {
		return f, true
	}
	if strings.Contains(field, ".") {
		return "", false
	}
	return "--" + inputerr.Kebab(field), true
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

// RenderWriter is w for a library's one-line notices (a log writer): each
// write with the fields it names ({Epochs}) rendered by their flags
// (Render). A library writes a notice in one call (fmt.Fprintf), so a
// field is never split between writes. A write reports the bytes it was
// given.
func RenderWriter(w io.Writer) io.Writer { return renderWriter{w} }

type renderWriter struct{ w io.Writer }

func (r renderWriter) Write(p []byte) (int, error) {
	if !bytes.Contains(p, []byte("{")) {
		return r.w.Write(p)
	}
	if _, err := io.WriteString(r.w, Render(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
