package devices

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// spreadYAML is a spread for minimal (disk 400 MB/s both ways, cpu.batch_edges
// 1M edges/s).
const spreadYAML = `spread:
  samples: 6
  disk.read: [300 MB/s, 450 MB/s]
  cpu.batch_edges: [800k edges/s, 1.2M edges/s]
`

func TestSpreadParses(t *testing.T) {
	p, err := Parse([]byte(minimal+spreadYAML), "s.yaml")
	require.NoError(t, err)
	require.True(t, p.HasSpread())
	assert.Equal(t, 6, p.Spread.Samples)
	assert.Equal(t, []string{"disk.read", "cpu.batch_edges"}, p.Spread.Keys())
	r, ok := p.Spread.Of("disk.read")
	require.True(t, ok)
	assert.Equal(t, Range{300e6, 450e6}, r)
	r, _ = p.Spread.Of("cpu.batch_edges")
	assert.Equal(t, Range{800e3, 1.2e6}, r)

	// Written back and read again, it is the same profile.
	y, err := p.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(y), "spread:\n  samples: 6\n  disk.read: [300 MB/s, 450 MB/s]\n  cpu.batch_edges: [800k edges/s, 1.2M edges/s]\n")
	back, err := Parse(y, "back")
	require.NoError(t, err)
	assert.Equal(t, p, back)

	// JSON carries it in base units, and reads back.
	j, err := json.Marshal(p.Spread)
	require.NoError(t, err)
	assert.JSONEq(t, `{"samples": 6, "disk.read": [3e8, 4.5e8], "cpu.batch_edges": [8e5, 1.2e6]}`, string(j))
	var s Spread
	require.NoError(t, json.Unmarshal(j, &s))
	assert.Equal(t, p.Spread, s)

	// Without a spread, none is written.
	q, err := Parse([]byte(minimal), "m")
	require.NoError(t, err)
	y, err = q.YAML()
	require.NoError(t, err)
	assert.NotContains(t, string(y), "spread")
	j, err = json.Marshal(q)
	require.NoError(t, err)
	assert.NotContains(t, string(j), "spread")
}

func TestSpreadErrors(t *testing.T) {
	for _, tc := range []struct{ name, spread, want string }{
		{"unknown key", "spread: {disk.speed: [1 MB/s, 2 MB/s]}", "spread.disk.speed: unknown rate (a spread may give samples, disk.read, disk.write, disk.combined, pcie.h2d"},
		{"value below", "spread: {disk.read: [500 MB/s, 600 MB/s]}", "spread.disk.read: disk.read 400 MB/s is outside its spread [500 MB/s, 600 MB/s]"},
		{"value above", "spread: {disk.write: [100 MB/s, 200 MB/s]}", "spread.disk.write: disk.write 400 MB/s is outside its spread [100 MB/s, 200 MB/s]"},
		{"reversed", "spread: {disk.read: [450 MB/s, 300 MB/s]}", "spread.disk.read: [450 MB/s, 300 MB/s] is not a range: the slowest comes first"},
		{"zero", "spread: {disk.read: [0, 450 MB/s]}", "spread.disk.read: 0 is not a positive finite bandwidth"},
		{"wrong unit", "spread: {disk.read: [300 MB/s, 1M edges/s]}", `spread.disk.read: "1M edges/s" is an edge rate; want a bandwidth such as "1 MB/s"`},
		{"missing unit", "spread: {cpu.batch_edges: [800000, 1200000]}", `spread.cpu.batch_edges: missing unit in "800000"; want an edge rate such as "800000M edges/s"`},
		{"one bound", "spread: {disk.read: [300 MB/s]}", "spread.disk.read: want [slowest, fastest], each a bandwidth such as \"400 MB/s\"; got a list of 1"},
		{"scalar", "spread: {disk.read: 300 MB/s}", "spread.disk.read: want [slowest, fastest], each a bandwidth such as \"400 MB/s\"; got \"300 MB/s\""},
		{"unset rate", "spread: {disk.combined: [300 MB/s, 500 MB/s]}", "spread.disk.combined: disk.combined is not set; a spread is of a rate the profile gives"},
		{"one sample", "spread: {samples: 1, disk.read: [300 MB/s, 450 MB/s]}", "spread.samples: 1; want the number of measurements (at least 2), or leave it out"},
		{"samples not a number", "spread: {samples: many}", `spread.samples: want a whole number, got "many"`},
		{"twice", "spread:\n  disk.read: [300 MB/s, 450 MB/s]\n  disk.read: [300 MB/s, 450 MB/s]", "spread.disk.read: defined twice (lines 5 and 6)"},
		{"not a mapping", "spread: [1, 2]", "spread: want a mapping of rates to [slowest, fastest], such as disk.read: [884 MB/s, 2.16 GB/s]; got a list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(minimal+tc.spread+"\n"), "s.yaml")
			require.Error(t, err)
			msg := err.Error()
			assert.NotContains(t, msg, "\n")
			assert.True(t, strings.HasPrefix(msg, "s.yaml: "+tc.want), "got %q", msg)
		})
	}
}

func TestSetSpread(t *testing.T) {
	p, err := Parse([]byte(minimal), "m")
	require.NoError(t, err)
	q := p // a copy shares nothing with p once either changes its spread
	require.NoError(t, q.SetSpreadSamples("disk.read", []float64{380e6, 400e6, 420e6, 390e6}))
	require.NoError(t, q.SetSpreadSamples("cpu.batch_edges", []float64{0.9e6, 1e6, 1.1e6}))
	assert.False(t, p.HasSpread())
	assert.Equal(t, 3, q.Spread.Samples, "the fewest measurements")
	r, _ := q.Spread.Of("disk.read")
	assert.Equal(t, Range{380e6, 420e6}, r)
	require.NoError(t, q.Validate())

	r2 := q
	require.NoError(t, r2.SetSpread("disk.read", 350e6, 450e6))
	got, _ := q.Spread.Of("disk.read")
	assert.Equal(t, Range{380e6, 420e6}, got, "changing a copy's spread leaves the original's")

	assert.EqualError(t, q.SetSpread("disk.read", 410e6, 420e6), "spread.disk.read: disk.read 400 MB/s is outside its spread [410 MB/s, 420 MB/s]")
	assert.EqualError(t, q.SetSpread("gpu.speed", 1, 2), "spread.gpu.speed: unknown rate (a spread may give samples, "+strings.Join(SpreadKeys(), ", ")+")")
	assert.EqualError(t, q.SetSpreadSamples("disk.write", []float64{400e6}), "spread.disk.write: 1 measurements give no range (want at least 2)")

	q.ClearSpread("disk.read")
	assert.Equal(t, []string{"cpu.batch_edges"}, q.Spread.Keys())
	q.ClearSpread()
	assert.False(t, q.HasSpread())
	assert.True(t, q.Spread.IsZero())

	lo, hi := Extent([]float64{3, 1, 2})
	assert.Equal(t, [2]float64{1, 3}, [2]float64{lo, hi})
}

func TestExtremes(t *testing.T) {
	for _, name := range PresetNames() {
		p, err := Preset(name)
		require.NoError(t, err)
		fast, slow := p.Extremes()
		assert.Equal(t, p, fast, "%s: without a spread, Extremes is the identity", name)
		assert.Equal(t, p, slow, name)
	}

	p, err := Parse([]byte(minimal+spreadYAML), "s.yaml")
	require.NoError(t, err)
	fast, slow := p.Extremes()
	assert.Equal(t, Bandwidth(450e6), fast.Disk.Read)
	assert.Equal(t, Bandwidth(300e6), slow.Disk.Read)
	assert.Equal(t, EdgeRate(1.2e6), fast.CPU.BatchEdges)
	assert.Equal(t, EdgeRate(800e3), slow.CPU.BatchEdges)
	assert.Equal(t, p.Disk.Write, fast.Disk.Write, "no spread: unchanged")
	assert.Equal(t, p.Disk.Write, slow.Disk.Write)
	assert.False(t, fast.HasSpread())
	require.NoError(t, fast.Validate())
	require.NoError(t, slow.Validate())

	// A combined rate is held within [max(read, write), read + write].
	p.Disk.Combined = 500e6
	require.NoError(t, p.SetSpread("disk.combined", 420e6, 900e6))
	fast, slow = p.Extremes()
	assert.Equal(t, Bandwidth(850e6), fast.Disk.Combined, "at most read + write")
	assert.Equal(t, Bandwidth(420e6), slow.Disk.Combined)
	require.NoError(t, fast.Validate())
	require.NoError(t, slow.Validate())
}

func TestCarrySpread(t *testing.T) {
	p, err := Parse([]byte(minimal+spreadYAML), "s.yaml")
	require.NoError(t, err)
	again := p
	again.Disk.Read = 800e6 // measured again, twice as fast
	again = again.CarrySpread(p)
	require.NoError(t, again.Validate())
	r, _ := again.Spread.Of("disk.read")
	assert.Equal(t, Range{600e6, 900e6}, r)
	r, _ = again.Spread.Of("cpu.batch_edges")
	assert.Equal(t, Range{800e3, 1.2e6}, r, "an unchanged rate keeps its range")
	assert.Equal(t, p, p.CarrySpread(p))
}

// TestSpreadTestdata keeps the example profile of docs/guides/simulate.md loadable.
func TestSpreadTestdata(t *testing.T) {
	p, err := Load("testdata/p3.2xlarge-spread.yaml")
	require.NoError(t, err)
	assert.Equal(t, []string{"disk.read", "disk.write", "disk.combined", "cpu.batch_edges"}, p.Spread.Keys())
	assert.Equal(t, 6, p.Spread.Samples)
	fast, slow := p.Extremes()
	require.NoError(t, fast.Validate())
	require.NoError(t, slow.Validate())
}
