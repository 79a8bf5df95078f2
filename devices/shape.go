package devices

import (
	"fmt"
	"strings"
)

// TrainShape is the training shape a profile's cpu.train was measured at
// (`realrun calibrate` records it): the CPU engine's rate depends on all
// of it — the score function, the dimension, the batch, the negatives and
// the edges per chunk sharing them, the training goroutines, and the rows
// of a node partition (how much of the partitions the caches hold). A
// rate measured at one shape predicts another shape only roughly.
type TrainShape struct {
	Model     string `yaml:"model" json:"model"`
	Dim       int    `yaml:"dim" json:"dim"`
	Batch     int    `yaml:"batch" json:"batch"`
	Negatives int    `yaml:"negatives" json:"negatives"`
	Chunk     int    `yaml:"chunk" json:"chunk"`
	Workers   int    `yaml:"workers" json:"workers"`
	// Rows are the rows of one node partition.
	Rows int64 `yaml:"partition_rows" json:"partition_rows"`
}

// String is the shape in one phrase: "dot, d=64, batch 10000, 100
// negatives, chunk 100, 2 workers, 10400 rows per partition".
func (s TrainShape) String() string {
	return fmt.Sprintf("%s, d=%d, batch %d, %d negatives, chunk %d, %d workers, %d rows per partition",
		s.Model, s.Dim, s.Batch, s.Negatives, s.Chunk, s.Workers, s.Rows)
}

// Differences lists how run differs from s, the shape a rate was measured
// at, one entry per field ("d 128 → 64 (0.50×)"); none when they agree.
func (s TrainShape) Differences(run TrainShape) []string {
	var out []string
	num := func(name string, a, b int64) {
		if a != b {
			ratio := ""
			if a > 0 {
				ratio = fmt.Sprintf(" (%.2f×)", float64(b)/float64(a))
			}
			out = append(out, fmt.Sprintf("%s %d → %d%s", name, a, b, ratio))
		}
	}
	if !strings.EqualFold(s.Model, run.Model) {
		out = append(out, fmt.Sprintf("model %s → %s", s.Model, run.Model))
	}
	num("d", int64(s.Dim), int64(run.Dim))
	num("batch", int64(s.Batch), int64(run.Batch))
	num("negatives", int64(s.Negatives), int64(run.Negatives))
	num("chunk", int64(s.Chunk), int64(run.Chunk))
	num("workers", int64(s.Workers), int64(run.Workers))
	num("partition rows", s.Rows, run.Rows)
	return out
}

// checkShape checks a recorded training shape: absent, or every field set.
func checkShape(path string, s *TrainShape) error {
	if s == nil {
		return nil
	}
	if strings.TrimSpace(s.Model) == "" {
		return fmt.Errorf("missing required field %s.model", path)
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"dim", int64(s.Dim)}, {"batch", int64(s.Batch)}, {"negatives", int64(s.Negatives)}, {"chunk", int64(s.Chunk)}, {"workers", int64(s.Workers)}, {"partition_rows", s.Rows}} {
		if f.v < 1 {
			return fmt.Errorf("%s.%s: must be at least 1, got %d", path, f.name, f.v)
		}
	}
	return nil
}
