package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReferenceCommands: every command of cmd/ (cmd/internal's are the
// project's own tools) has its generated reference, docs/reference/NAME.md,
// a TestReference that fails when the file differs from its help, and a
// place in make docs, which regenerates them; and no reference is left of
// a command that is gone.
func TestReferenceCommands(t *testing.T) {
	entries, err := os.ReadDir(filepath.Join(repoRoot, "cmd"))
	require.NoError(t, err)
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	require.NoError(t, err)
	docsRule := regexp.MustCompile(`(?m)^docs:\n\t(.*)$`).FindSubmatch(makefile)
	require.NotNil(t, docsRule, "Makefile: no docs rule")
	commands := map[string]bool{}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == "internal" {
			continue
		}
		name := e.Name()
		commands[name] = true
		assert.FileExists(t, filepath.Join(repoRoot, "docs", "reference", name+".md"), "cmd/%s: no reference; add its TestReference and run make docs", name)
		test, err := os.ReadFile(filepath.Join(repoRoot, "cmd", name, "reference_test.go"))
		if assert.NoError(t, err, "cmd/%s: no reference_test.go checking docs/reference/%s.md", name, name) {
			assert.Contains(t, string(test), "func TestReference(", "cmd/%s/reference_test.go", name)
			assert.Contains(t, string(test), "docs/reference/"+name+".md", "cmd/%s/reference_test.go", name)
		}
		assert.Contains(t, strings.Fields(string(docsRule[1])), "./cmd/"+name, "Makefile: make docs does not regenerate cmd/%s's reference", name)
	}
	refs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "reference", "*.md"))
	require.NoError(t, err)
	for _, r := range refs {
		name := strings.TrimSuffix(filepath.Base(r), ".md")
		assert.True(t, commands[name], "docs/reference/%s.md: no command cmd/%s", name, name)
	}
}
