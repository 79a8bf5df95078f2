package main

import (
	"testing"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
)

// TestReference: docs/reference/simulate.md is simulate's help and every
// subcommand's; make docs (-update, the flag of main_test.go) rewrites it.
func TestReference(t *testing.T) {
	clitest.CheckReference(t, "../../docs/reference/simulate.md", *update, func(args []string) (string, int) {
		out, _, code := runCmd(args...)
		return out, code
	}, "simulate")
}
