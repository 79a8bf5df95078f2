package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tierflow/tierflow/cmd/internal/cli/clitest"
	"github.com/tierflow/tierflow/experiments"
)

// TestHelpIsGrouped: reproduce --help is grouped and lists every
// experiment.
func TestHelpIsGrouped(t *testing.T) {
	var help string
	clitest.WalkHelp(t, func(args []string) (string, int) {
		var o, e bytes.Buffer
		code := run(args, &o, &e)
		help = o.String()
		return help, code
	})
	assert.Contains(t, help, "Experiments (--experiments):")
	for _, n := range experiments.Names() {
		assert.Contains(t, help, "\n  "+n+" ")
	}
}
