package workdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// EvalFile is the file of a work directory that records how training
// evaluated its checkpoints.
const EvalFile = "evaluation.json"

// EvalRecord is how training last evaluated a work directory: what a later
// evaluation of its checkpoint needs to rank the same edges against the
// same candidates, and so reproduce training's figures. Unlike Settings it
// may change from run to run (a resumed run may evaluate otherwise); it is
// written after each evaluation that changes it.
type EvalRecord struct {
	// Protocol is the protocol asked for (auto, filtered or sampled) and
	// Ranked the one it ranked with (filtered or sampled).
	Protocol string `json:"protocol"`
	Ranked   string `json:"ranked"`
	// Edges is the most edges ranked per split (a seeded sample of the
	// split when it has more); Seed seeds that sample and the sampled
	// candidates.
	Edges int   `json:"edges"`
	Seed  int64 `json:"seed"`
	// Uniform and ByDegree are the sampled candidates; FilteredMaxNodes
	// the most nodes auto ranks filtered.
	Uniform          int   `json:"uniform_negatives"`
	ByDegree         int   `json:"degree_negatives"`
	FilteredMaxNodes int64 `json:"filtered_max_nodes"`
}

// RecordEval writes r as dir's evaluation record (atomically).
func RecordEval(dir string, r EvalRecord) error {
	data, err := json.MarshalIndent(r, "", " ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, EvalFile), append(data, '\n')); err != nil {
		return fmt.Errorf("recording the evaluation protocol: %w", err)
	}
	return nil
}

// RecordedEval reads dir's evaluation record; nil (and no error) when
// there is none: the directory was never evaluated by training, or was
// trained before tierflow kept the record.
func RecordedEval(dir string) (*EvalRecord, error) {
	path := filepath.Join(dir, EvalFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r EvalRecord
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &r, nil
}

// forgetEval removes dir's evaluation record: training starts afresh, and
// the record described the checkpoints it replaces.
func forgetEval(dir string) error {
	if err := os.Remove(filepath.Join(dir, EvalFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
