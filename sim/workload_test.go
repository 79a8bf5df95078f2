package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRowwiseAdagradPartitionBytes(t *testing.T) {
	pbg, err := LookupSystem("pbg")
	require.NoError(t, err)
	marius, err := LookupSystem("marius")
	require.NoError(t, err)
	assert.Equal(t, int64(10*101*4), pbg.PartitionBytes(40, 4, 100))
	assert.Equal(t, int64(10*100*8), marius.PartitionBytes(40, 4, 100))
}
