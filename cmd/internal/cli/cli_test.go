package cli

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/internal/inputerr"
)

func TestExit(t *testing.T) {
	var buf bytes.Buffer
	assert.Equal(t, 0, Exit(&buf, "x", nil))
	assert.Equal(t, 2, Exit(&buf, "x", Usagef("bad %s", "flag")))
	assert.Equal(t, 1, Exit(&buf, "x", errors.New("disk\nfull")))
	assert.Equal(t, "x: bad flag\nx: disk full\n", buf.String())
}

func TestAsUsage(t *testing.T) {
	var ue *UsageError
	bad := fmt.Errorf("reading: %w", inputerr.Errorf("no such dataset"))
	require.ErrorAs(t, AsUsage(bad), &ue)
	assert.Equal(t, bad.Error(), ue.Error())
	other := errors.New("disk full")
	assert.Same(t, other, AsUsage(other))
	assert.Nil(t, AsUsage(nil))
}

func TestParse(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	n := fs.Int("n", 1, "")
	require.NoError(t, Parse(fs, []string{"--n", "3"}, io.Discard))
	assert.Equal(t, 3, *n)
	err := Parse(flag.NewFlagSet("t", flag.ContinueOnError), []string{"pos"}, io.Discard)
	var ue *UsageError
	assert.ErrorAs(t, err, &ue)
}

func TestSplitListAndFormat(t *testing.T) {
	assert.Equal(t, []string{"a", "b"}, SplitList(" a,,b ,"))
	f, err := PickFormat(true, false)
	require.NoError(t, err)
	assert.Equal(t, JSON, f)
	_, err = PickFormat(true, true)
	assert.Error(t, err)
}

func TestIntList(t *testing.T) {
	tests := []struct {
		in   string
		want []int
		err  string
	}{
		{"8,16,32", []int{8, 16, 32}, ""},
		{"2-5", []int{2, 3, 4, 5}, ""},
		{" 2-3 , 8 ,3", []int{2, 3, 8}, ""},
		{"4-4", []int{4}, ""},
		{"", nil, "empty list"},
		{",", nil, "empty list"},
		{"x", nil, `"x" is not a positive integer`},
		{"0", nil, `"0" is not a positive integer`},
		{"-3", nil, `"-3" is not a positive integer`},
		{"5-2", nil, `"5-2" is not a range`},
		{"2-", nil, `"2-" is not a range`},
		{"1-5000", nil, "more than 1024 values"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := IntList(tt.in)
			if tt.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzIntList: any input either fails with an error or yields between 1
// and MaxListItems distinct positive values.
func FuzzIntList(f *testing.F) {
	for _, s := range []string{"8,16,32", "2-16", "1-1024", "3,3,3", "9-1", "a", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := IntList(s)
		if err != nil {
			return
		}
		require.NotEmpty(t, got)
		require.LessOrEqual(t, len(got), MaxListItems)
		seen := map[int]bool{}
		for _, v := range got {
			require.Positive(t, v)
			require.False(t, seen[v], "duplicate %d", v)
			seen[v] = true
		}
	})
}
