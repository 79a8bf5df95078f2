package simulated

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLegendFig18(t *testing.T) {
	r, err := LegendFig18()
	require.NoError(t, err)
	require.Len(t, r.Rows, 8)
	p, c := col(t, r, "p"), col(t, r, "c")
	want := map[string][2]string{
		"TW/BETA": {"8", "3"}, "TW/COVER": {"16", "4"}, "TW/Legend": {"8", "3"},
		"FM/BETA": {"12", "3"}, "FM/COVER": {"16", "4"}, "FM/Legend": {"12", "3"},
	}
	for _, row := range r.Rows {
		if w, ok := want[row[0]+"/"+row[1]]; ok {
			assert.Equal(t, w, [2]string{row[p], row[c]}, "%s %s", row[0], row[1])
		}
	}
	require.Len(t, r.Charts, 1)
	assert.True(t, r.Charts[0].Bars)
	assert.Len(t, r.Charts[0].Series, 4)
	checks := 0
	for _, n := range r.Notes {
		if strings.Contains(n, "agrees") || strings.Contains(n, "DISAGREES") {
			checks++
		}
	}
	assert.Equal(t, 6, checks, "three claims on two datasets")
}
