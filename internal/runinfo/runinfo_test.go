package runinfo

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunInfo(t *testing.T) {
	assert.NotEmpty(t, CPU())
	c := Commit()
	assert.NotEmpty(t, c)
	if c != "unknown" {
		assert.Regexp(t, `^[0-9a-f]{12}( \(with uncommitted changes\))?$`, c)
	}
}
