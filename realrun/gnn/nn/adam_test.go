package nn

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAdamTwoSteps checks two steps against values worked out by hand
// (in float64) from PyTorch's formulas, lr 0.1: after step 1, m = (0.05,
// −0.01), v = (2.5e-4, 1e-5), w = w − 0.1·(1, −1) (less the eps
// correction); after step 2, m = (0.065, 0.021), v = (2.8975e-4,
// 9.999e-5), m̂ = m/0.19, v̂ = v/0.001999, w −= 0.1·m̂/(√v̂ + 1e-8).
func TestAdamTwoSteps(t *testing.T) {
	p := &Param{Name: "w", Shape: []int{2}, W: []float32{1, -2}, G: make([]float32, 2)}
	a := NewAdam([]*Param{p}, 0.1)
	assert.Equal(t, 0.9, a.Beta1)
	assert.Equal(t, 0.999, a.Beta2)
	assert.Equal(t, 1e-8, a.Eps)
	want := [][]float64{{0.900000002, -1.90000001}, {0.8101424839029281, -1.9494189911200654}}
	for step, g := range [][]float32{{0.5, -0.1}, {0.2, 0.3}} {
		copy(p.G, g)
		a.Step([]*Param{p})
		for i := range p.W {
			assert.InDelta(t, want[step][i], p.W[i], 1e-6, "step %d, w[%d]", step+1, i)
		}
	}
	assert.Equal(t, 2, a.Steps)
	assert.InDeltaSlice(t, []float32{0.065, 0.021}, a.m[0], 1e-7)
	assert.InDeltaSlice(t, []float32{2.8975e-4, 9.999e-5}, a.v[0], 1e-9)
}

// TestAdamLarge runs Step over a parameter big enough to split across
// workers and checks it against the one-worker result.
func TestAdamLarge(t *testing.T) {
	mk := func() *Param {
		p := &Param{Name: "w", Shape: []int{200000}, W: make([]float32, 200000), G: make([]float32, 200000)}
		for i := range p.W {
			p.W[i] = float32(i%17) / 17
			p.G[i] = float32(i%13)/13 - 0.5
		}
		return p
	}
	defer func(w int) { Workers = w }(Workers)
	var res [][]float32
	for _, w := range []int{1, 4} {
		Workers = w
		p := mk()
		a := NewAdam([]*Param{p}, 0.01)
		a.Step([]*Param{p})
		a.Step([]*Param{p})
		res = append(res, p.W)
	}
	require.Equal(t, res[0], res[1])
}

func TestAdamSaveLoad(t *testing.T) {
	ps := []*Param{
		{Name: "a", Shape: []int{3}, W: []float32{1, 2, 3}, G: []float32{0.1, -0.2, 0.3}},
		{Name: "b", Shape: []int{2}, W: []float32{4, 5}, G: []float32{0.5, 0.5}},
	}
	a := NewAdam(ps, 0.01)
	a.Step(ps)
	a.Step(ps)
	var buf bytes.Buffer
	require.NoError(t, a.Save(&buf))
	buf.WriteString("tail") // Load must not read past its state
	file := buf.Bytes()

	b := NewAdam(ps, 0.5)
	r := bytes.NewReader(file)
	require.NoError(t, b.Load(r))
	assert.Equal(t, 4, r.Len(), "bytes left after the state")
	assert.Equal(t, a.Steps, b.Steps)
	assert.Equal(t, a.m, b.m)
	assert.Equal(t, a.v, b.v)
	assert.Equal(t, 0.5, b.LR, "the caller's learning rate stays")

	// The same steps from the loaded state give the same parameters.
	cp := func() []*Param {
		var out []*Param
		for _, p := range ps {
			out = append(out, &Param{Name: p.Name, Shape: p.Shape, W: append([]float32(nil), p.W...), G: p.G})
		}
		return out
	}
	p1, p2 := cp(), cp()
	b.LR = a.LR
	a.Step(p1)
	b.Step(p2)
	for i := range p1 {
		assert.Equal(t, p1[i].W, p2[i].W)
	}

	other := []*Param{{Name: "a", Shape: []int{3}, W: make([]float32, 3), G: make([]float32, 3)}, {Name: "b", Shape: []int{3}, W: make([]float32, 3), G: make([]float32, 3)}}
	tests := []struct {
		name   string
		params []*Param
		file   []byte
		err    string
	}{
		{"fewer parameters", ps[:1], file, "optimiser file: 2 parameters, the optimiser has 1"},
		{"another size", other, file, "optimiser file: parameter 1 has 2 values, the optimiser's has 3"},
		{"truncated", ps, file[:len(file)-4-5], "unexpected EOF"},
		{"empty", ps, nil, "optimiser file: empty"},
		{"not an optimiser file", ps, []byte("TFGNNMOD\x01\x00\x00\x00"), "optimiser file: starts with"},
		{"newer version", ps, append([]byte("TFGNNADM\x02\x00\x00\x00"), file[12:]...), "optimiser file: version 2, this build reads version 1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := NewAdam(tc.params, 0.01)
			err := c.Load(bytes.NewReader(tc.file))
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.err)
			assert.NotContains(t, err.Error(), "\n")
			assert.Zero(t, c.Steps, "a failed Load leaves the state")
		})
	}
}
