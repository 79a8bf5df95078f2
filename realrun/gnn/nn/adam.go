package nn

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// Adam is the Adam optimiser (Kingma and Ba) as PyTorch's torch.optim.Adam
// computes it (no weight decay, no AMSGrad): for step t,
//
//	m = β1·m + (1-β1)·g
//	v = β2·v + (1-β2)·g²
//	w -= LR/(1-β1^t) · (m / (√v/√(1-β2^t) + Eps))
//
// in float32 per element, the bias corrections in float64.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	// Steps is the number of steps taken (t of the last step).
	Steps int
	m, v  [][]float32 // per parameter, the moments
}

// NewAdam returns Adam over params with PyTorch's defaults (β 0.9/0.999,
// eps 1e-8), learning rate lr and zero moments.
func NewAdam(params []*Param, lr float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	for _, p := range params {
		a.m = append(a.m, make([]float32, len(p.W)))
		a.v = append(a.v, make([]float32, len(p.W)))
	}
	return a
}

// adamChunk is how many elements of a parameter one worker updates at a
// time.
const adamChunk = 1024

// Step updates params — the list NewAdam was given — from their
// gradients; the caller clears the gradients afterwards.
func (a *Adam) Step(params []*Param) {
	if len(params) != len(a.m) {
		panic(fmt.Sprintf("nn.Adam.Step: %d parameters, Adam was made for %d", len(params), len(a.m)))
	}
	a.Steps++
	t := float64(a.Steps)
	k := adamStep{
		b1: float32(a.Beta1), b2: float32(a.Beta2),
		c1: float32(1 - a.Beta1), c2: float32(1 - a.Beta2), // in float64 first, as PyTorch
		stepSize: float32(a.LR / (1 - math.Pow(a.Beta1, t))),
		bc2:      float32(math.Sqrt(1 - math.Pow(a.Beta2, t))),
		eps:      float32(a.Eps),
	}
	for i, p := range params {
		m, v, w, g := a.m[i], a.v[i], p.W, p.G
		if len(m) != len(w) || len(g) != len(w) {
			panic(fmt.Sprintf("nn.Adam.Step: parameter %s has %d values and %d gradients, Adam holds %d", p.Name, len(w), len(g), len(m)))
		}
		chunks := (len(w) + adamChunk - 1) / adamChunk
		if chunks < 2*minRows { // one worker's worth: no goroutines
			k.update(m, v, w, g)
			continue
		}
		parallelRows(chunks, func(_, lo, hi int) {
			lo, hi = lo*adamChunk, min(hi*adamChunk, len(w))
			k.update(m[lo:hi], v[lo:hi], w[lo:hi], g[lo:hi])
		})
	}
}

// adamStep holds one step's constants.
type adamStep struct{ b1, b2, c1, c2, stepSize, bc2, eps float32 }

// update applies the step to the values w with gradients g and moments
// m, v.
func (k *adamStep) update(m, v, w, g []float32) {
	for j := range w {
		gj := g[j]
		m[j] = k.b1*m[j] + k.c1*gj
		v[j] = k.b2*v[j] + k.c2*gj*gj
		w[j] -= k.stepSize * (m[j] / (float32(math.Sqrt(float64(v[j])))/k.bc2 + k.eps))
	}
}

// The optimiser file: adamMagic, uint32 version, uint64 steps, uint32
// parameters; per parameter uint32 size, float32 m[size], float32
// v[size]; little-endian.
const (
	adamMagic   = "TFGNNADM"
	adamVersion = 1
)

// Save writes the optimiser's state: the step count and the moments (the
// hyperparameters are the caller's).
func (a *Adam) Save(w io.Writer) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(adamMagic)
	put32(bw, adamVersion)
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(a.Steps))
	bw.Write(b[:])
	put32(bw, uint32(len(a.m)))
	for i := range a.m {
		put32(bw, uint32(len(a.m[i])))
		binary.Write(bw, binary.LittleEndian, a.m[i])
		binary.Write(bw, binary.LittleEndian, a.v[i])
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("writing the optimiser state: %w", err)
	}
	return nil
}

// Load reads state written by Save into a, which must hold as many
// parameters of the same sizes; on an error a is unchanged. It reads no
// further than the state's last byte.
func (a *Adam) Load(r io.Reader) error {
	if err := readMagic(r, adamMagic, adamVersion, "optimiser file"); err != nil {
		return err
	}
	var b [8]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return fmt.Errorf("optimiser file: reading the step count: %w", noEOF(err))
	}
	steps := binary.LittleEndian.Uint64(b[:])
	if steps > math.MaxInt32 {
		return fmt.Errorf("optimiser file: implausible step count %d", steps)
	}
	count, err := get32(r)
	if err != nil {
		return fmt.Errorf("optimiser file: reading the parameter count: %w", noEOF(err))
	}
	if int(count) != len(a.m) {
		return fmt.Errorf("optimiser file: %d parameters, the optimiser has %d", count, len(a.m))
	}
	ms, vs := make([][]float32, count), make([][]float32, count)
	for i := range a.m {
		size, err := get32(r)
		if err != nil {
			return fmt.Errorf("optimiser file: reading parameter %d's size: %w", i, noEOF(err))
		}
		if int(size) != len(a.m[i]) {
			return fmt.Errorf("optimiser file: parameter %d has %d values, the optimiser's has %d", i, size, len(a.m[i]))
		}
		ms[i], vs[i] = make([]float32, size), make([]float32, size)
		if err := binary.Read(r, binary.LittleEndian, ms[i]); err != nil {
			return fmt.Errorf("optimiser file: reading parameter %d's moments: %w", i, noEOF(err))
		}
		if err := binary.Read(r, binary.LittleEndian, vs[i]); err != nil {
			return fmt.Errorf("optimiser file: reading parameter %d's moments: %w", i, noEOF(err))
		}
	}
	a.Steps = int(steps)
	for i := range a.m {
		copy(a.m[i], ms[i])
		copy(a.v[i], vs[i])
	}
	return nil
}
