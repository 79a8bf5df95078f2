package main

import (
	"bytes"
	"flag"
	"testing"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
)

var update = flag.Bool("update", false, "rewrite docs/reference/reproduce.md from reproduce's help")

// TestReference: docs/reference/reproduce.md is reproduce's help, every
// experiment listed; make docs (-update) rewrites it.
func TestReference(t *testing.T) {
	clitest.CheckReference(t, "../../docs/reference/reproduce.md", *update, func(args []string) (string, int) {
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		return o.String(), code
	}, "reproduce")
}
