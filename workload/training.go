package workload

import (
	"fmt"
	"strings"
)

// Training is the shape of the computation of one epoch: the score
// function, the dimension, and how edges are grouped into batches and
// chunks that share their negatives.
type Training struct {
	Model Model `json:"model"`
	Dim   int   `json:"dim"`
	// Batch is the number of edges per batch, Negatives the number of
	// negative nodes sampled per chunk and shared by its edges (PBG §4.3),
	// and ChunkSize the edges per chunk (0: equal to Negatives).
	Batch     int `json:"batch"`
	Negatives int `json:"negatives"`
	ChunkSize int `json:"chunk_size"`
	// Objective is the loss and regularisation (the zero value: the
	// softmax loss, no penalty).
	Objective Objective `json:"objective,omitzero"`
}

// Validate checks the training shape.
func (t Training) Validate() error {
	switch {
	case t.Dim < 1:
		return fmt.Errorf("dimension must be at least 1, got %d", t.Dim)
	case t.Batch < 1:
		return fmt.Errorf("batch must be at least 1 edge, got %d", t.Batch)
	case t.Negatives < 1:
		return fmt.Errorf("negatives must be at least 1, got %d", t.Negatives)
	case t.ChunkSize < 0:
		return fmt.Errorf("chunk size must not be negative, got %d", t.ChunkSize)
	}
	if _, err := ParseModel(string(t.Model)); err != nil {
		return err
	}
	return t.Objective.Validate(t.Model)
}

// Chunk is the number of edges per chunk: ChunkSize, or as many as there
// are negatives when it is 0 (the default of every engine and of the
// simulator).
func (t Training) Chunk() int {
	if t.ChunkSize > 0 {
		return t.ChunkSize
	}
	return t.Negatives
}

// BatchRows is the number of embedding rows a batch of b edges touches:
// the source and destination of every edge, and the negatives of every
// chunk for both corrupted sides.
func (t Training) BatchRows(b int) float64 {
	chunks := (b + t.Chunk() - 1) / t.Chunk()
	return float64(2*b) + 2*float64(chunks)*float64(t.Negatives)
}

// WorkUnit is how many of a bucket's edges one worker of tierflow's CPU
// engine takes at a time: a batch, or — when the bucket holds fewer than
// one batch per worker — an equal share rounded up to whole chunks, so
// that every worker has work on small buckets too. Units are whole chunks,
// so the chunks (the unit of every update) are the same whatever the unit;
// with one worker a bucket is trained exactly as batch by batch. The
// engine and its model in the simulator both use this rule.
func WorkUnit(edges, batch, chunk, workers int) int {
	per := (edges + workers - 1) / max(workers, 1)
	if per >= batch {
		return batch
	}
	return max(chunk, (per+chunk-1)/chunk*chunk)
}

// AdagradEps is the ε of every engine's Adagrad step,
// x −= lr·g ÷ (√state + ε).
const AdagradEps = 1e-10

// PartitionRows is the rows of one of p node partitions: ceil(nodes/p).
func PartitionRows(nodes int64, p int) int64 {
	return (nodes + int64(p) - 1) / int64(p)
}

// PartitionBytes is the size of one of p node partitions of a graph with
// the given number of nodes at dimension d: PartitionRows rows of d
// float32 parameters plus their optimizer state — as many floats again
// for element-wise Adagrad (stored contiguously, as Legend does), one
// float a row for row-wise Adagrad (PyTorch-BigGraph §3).
func PartitionBytes(nodes int64, p, d int, rowwise bool) int64 {
	if p <= 0 || d <= 0 || nodes <= 0 {
		return 0
	}
	rows := PartitionRows(nodes, p)
	if rowwise {
		return rows * int64(d+1) * BytesPerFloat
	}
	return rows * int64(d) * BytesPerFloat * 2
}

// ModelNames lists the score functions for help texts ("dot, distmult,
// complex, transe-l1, transe-l2, rotate or a PBG operator+comparator such
// as linear+dot").
func ModelNames() string {
	names := make([]string, len(Models))
	for i, m := range Models {
		names[i] = string(m)
	}
	return strings.Join(names, ", ") + " or a PBG operator+comparator such as linear+dot (operators " + joinNames(Operators) + "; comparators " + joinNames(Comparators) + ")"
}
