package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestResumeArgs(t *testing.T) {
	assert.Equal(t, "--dataset twitter --resume", resumeArgs([]string{"--dataset", "twitter"}))
	assert.Equal(t, "--resume --p 4", resumeArgs([]string{"--resume", "--p", "4"}), "added once")
	assert.Equal(t, "--edges 'my file.tsv' --resume", resumeArgs([]string{"--edges", "my file.tsv"}), "quoted for a shell")
}
