package inputerr

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRender(t *testing.T) {
	flags := map[string]string{"P": "--p", "Disk.Read": "--disk-read"}
	name := func(f string) (string, bool) { n, ok := flags[f]; return n, ok }
	for _, tc := range []struct{ in, want string }{
		{"{P} 3: must be at least 1", "--p 3: must be at least 1"},
		{"{P} and {Disk.Read}", "--p and --disk-read"},
		{"{Unknown} stays", "{Unknown} stays"},
		{"no field {p} {1} {} {P.} {\"a\":1}", "no field {p} {1} {} {P.} {\"a\":1}"},
		{Field("P") + " x", "--p x"},
	} {
		assert.Equal(t, tc.want, Render(tc.in, name), tc.in)
	}
	assert.Equal(t, []string{"P", "Disk.Read", "P"}, Fields("{P} {Disk.Read} {x} {P}"))
	assert.Empty(t, Fields("none"))
}

func TestKebab(t *testing.T) {
	for field, want := range map[string]string{
		"P": "p", "Dim": "dim", "MicroBatchMemory": "micro-batch-memory", "OrderingSeed": "ordering-seed",
		"LR": "lr", "GPUMemory": "gpu-memory", "TF32": "tf32", "FP32": "fp32", "EvalMemory": "eval-memory",
	} {
		assert.Equal(t, want, Kebab(field), field)
	}
}
