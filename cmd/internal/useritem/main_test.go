package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "g")
	var out bytes.Buffer
	if err := run([]string{dir, "--users", "500", "--items", "100", "--communities", "5", "--p", "2", "--test", "50", "--valid", "50", "--no-similar"}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "500 users (2 partitions)") {
		t.Errorf("summary %q", out.String())
	}
	schema, err := os.ReadFile(filepath.Join(dir, "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(schema), "user: {partitions: 2}") || strings.Contains(string(schema), "similar") {
		t.Errorf("schema.yaml:\n%s", schema)
	}
	if err := run([]string{}, &out); err == nil {
		t.Error("no OUTDIR: want an error")
	}
}
