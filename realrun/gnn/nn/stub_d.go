package nn

import (
	"errors"
	"io"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
)

// STUB (helper D replaces this file with model.go, loss.go, adam.go).

// Spec is a model's shape.
type Spec struct {
	// Model is mlp, sage-mean, sage-pool, sage-lstm or gat.
	Model                              string
	In, Hidden, Classes, Layers, Heads int
	Dropout                            float64
}

// Check reports the first bad field of s.
func (s Spec) Check() error { return errors.New("nn.Spec.Check: not built yet") }

// Model is a stack of layers.
type Model struct{ Spec Spec }

// New returns a model with seeded initial parameters.
func New(s Spec, seed uint64) (*Model, error) { return nil, errors.New("nn.New: not built yet") }

// Forward returns the logits of b's output nodes from the features x of
// b.Input() (NumSrc×In).
func (m *Model) Forward(b *block.Batch, x []float32, train bool, rng *rand.Rand) []float32 {
	panic("not built yet")
}

// Backward adds the parameters' gradients for dLogits.
func (m *Model) Backward(dLogits []float32) { panic("not built yet") }

// Params returns the parameters.
func (m *Model) Params() []*Param { return nil }

// ZeroGrad clears every gradient.
func (m *Model) ZeroGrad() {}

// ReprDim is the width of the representation Infer returns.
func (m *Model) ReprDim() int { return 0 }

// Infer runs the model layer by layer over every node of g with every
// neighbour, batch destinations at a time, and returns the final node
// representations (the last layer's input, N×ReprDim) and logits
// (N×Classes).
func (m *Model) Infer(g *data.Graph, batch int) (repr, logits []float32) { panic("not built yet") }

// Save writes the parameters.
func (m *Model) Save(w io.Writer) error { return errors.New("not built yet") }

// Load reads parameters written by Save into m (same Spec).
func (m *Model) Load(r io.Reader) error { return errors.New("not built yet") }

// CrossEntropy returns the mean softmax cross-entropy of logits (n×classes)
// against labels, the number predicted right, and writes the gradient of
// the mean loss into dLogits.
func CrossEntropy(logits []float32, labels []int32, classes int, dLogits []float32) (loss float64, correct int) {
	panic("not built yet")
}

// Adam is the Adam optimiser (Kingma and Ba) over a model's parameters.
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	Steps                 int
}

// NewAdam returns Adam with PyTorch's defaults and learning rate lr.
func NewAdam(params []*Param, lr float64) *Adam { return &Adam{} }

// Step updates the parameters from their gradients.
func (a *Adam) Step(params []*Param) { panic("not built yet") }

// Save writes the optimiser's state; Load reads it back.
func (a *Adam) Save(w io.Writer) error { return errors.New("not built yet") }

// Load reads state written by Save.
func (a *Adam) Load(r io.Reader) error { return errors.New("not built yet") }
