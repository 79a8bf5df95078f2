package gnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// A GNN work directory holds StateFile (what the run trains on and with)
// and, after the first epoch, CheckpointFile (the parameters, Adam's
// state and the epoch records after the last complete epoch), each
// replaced atomically, and the lock (workdir.LockPath) while a run holds
// it.
const (
	StateFile      = "gnn.json"
	CheckpointFile = "checkpoint.gnn"
	stateKind      = "tierflow-gnn"
	stateVersion   = 1
	ckptMagic      = "TFGNNCKP"
	ckptVersion    = 1
)

// state is StateFile's content.
type state struct {
	Kind    string `json:"kind"`
	Version int    `json:"version"`
	// Settings are the identity of the inputs and the settings that
	// shape training, by option name (workdir.Settings); a run resumes
	// only with the same ones.
	Settings workdir.Settings `json:"settings"`
	// Files are the inputs, with absolute paths, and Spec the model: what
	// Export needs to rebuild the representations.
	Files stateFiles `json:"files"`
	Spec  nn.Spec    `json:"spec"`
}

// stateFiles are data.Files as StateFile records them.
type stateFiles struct {
	Edges, Features, FeatureNames, Labels string
	TrainNodes, ValidNodes, TestNodes     string
	Delimiter, Header, Columns            string
	Directed, Skip                        bool
}

func toStateFiles(f data.Files) stateFiles {
	abs := func(p string) string {
		if p == "" {
			return ""
		}
		if a, err := filepath.Abs(p); err == nil {
			return a
		}
		return p
	}
	return stateFiles{Edges: abs(f.Edges), Features: abs(f.Features), FeatureNames: abs(f.FeatureNames), Labels: abs(f.Labels),
		TrainNodes: abs(f.TrainNodes), ValidNodes: abs(f.ValidNodes), TestNodes: abs(f.TestNodes),
		Delimiter: f.Format.Delimiter, Header: f.Format.Header, Columns: f.Format.Columns, Directed: f.Directed, Skip: f.Skip}
}

func (s stateFiles) files() data.Files {
	return data.Files{Edges: s.Edges, Features: s.Features, FeatureNames: s.FeatureNames, Labels: s.Labels,
		TrainNodes: s.TrainNodes, ValidNodes: s.ValidNodes, TestNodes: s.TestNodes,
		Format: graph.Format{Delimiter: s.Delimiter, Header: s.Header, Columns: s.Columns}, Directed: s.Directed, Skip: s.Skip}
}

// IsWorkdir reports whether dir is a GNN work directory (it holds
// StateFile).
func IsWorkdir(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, StateFile))
	return err == nil
}

// ours reports whether a GNN run may use dir: a GNN work directory, or a
// directory that holds nothing but a lock.
func ours(dir string) bool {
	if IsWorkdir(dir) {
		return true
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(workdir.LockPath(dir)) {
			return false
		}
	}
	return true
}

// inputs are the input files by option name, in order.
func inputs(f data.Files) [][2]string {
	return [][2]string{{"edges", f.Edges}, {"features", f.Features}, {"feature-names", f.FeatureNames}, {"labels", f.Labels},
		{"train-nodes", f.TrainNodes}, {"valid-nodes", f.ValidNodes}, {"test-nodes", f.TestNodes}}
}

// settingsOf are what a run's checkpoints depend on, by option name: the
// identity of every input file (workdir.FileIdentity: its absolute path,
// size and CRC-32C) and how it is read, and the model, its shape, the
// sampling, batch, dropout, learning rate and seed, and how batches are
// split into micro-batches (recorded only when they are: a run without
// micro-batching has no such settings). The number of epochs, the
// workers and evaluation may change between runs.
func settingsOf(o Options) (workdir.Settings, error) {
	s := workdir.Settings{
		"model": o.Model, "layers": strconv.Itoa(o.Layers), "hidden": strconv.Itoa(o.Hidden),
		"batch": strconv.Itoa(o.Batch), "dropout": fmt.Sprint(o.Dropout), "lr": fmt.Sprint(o.LR), "seed": fmt.Sprint(o.Seed),
	}
	if o.Model == "gat" {
		s["heads"] = strconv.Itoa(o.Heads)
	}
	if o.Model != "mlp" {
		s["fanouts"] = FormatFanouts(o.Fanouts)
	}
	switch {
	case o.MicroBatches > 1:
		s["micro-batches"], s["micro-split"] = strconv.Itoa(o.MicroBatches), string(o.splitMethod())
	case o.MicroBatchMemory > 0:
		s["micro-batch-memory"], s["micro-split"] = strconv.FormatInt(o.MicroBatchMemory, 10), string(o.splitMethod())
	}
	for _, in := range inputs(o.Files) {
		if in[1] == "" {
			continue
		}
		sum, err := store.FileChecksum(in[1])
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return nil, &FieldError{Field: in[0], Value: in[1], Msg: err.Error()}
		}
		s[in[0]] = workdir.FileIdentity(in[1], sum)
	}
	for k, v := range o.Files.Format.NonDefault() {
		if k = strings.TrimPrefix(k, "--"); k != "unseen" {
			s[k] = v
		}
	}
	if o.Files.Directed {
		s["directed"] = "true"
	}
	if o.Files.Skip {
		s["skip-bad"] = "true"
	}
	return s, nil
}

// DefaultWorkdir is the work directory of a run from files that names
// none: under the system temp dir, named after the edge file and unique
// per set of input paths ("tierflow-gnn-edges.tsv-9a8b7c6d"), as the
// edge engine's (workdir.Default).
func DefaultWorkdir(f data.Files) string {
	var paths []string
	for _, in := range inputs(f) {
		abs := in[1]
		if a, err := filepath.Abs(in[1]); err == nil && in[1] != "" {
			abs = a
		}
		paths = append(paths, abs)
	}
	key := strings.Join(paths, "\x00")
	return filepath.Join(os.TempDir(), fmt.Sprintf("tierflow-gnn-%s-%08x", filepath.Base(f.Edges), crc32.ChecksumIEEE([]byte(key))))
}

// WorkdirError is a work directory a run cannot use as asked. Its
// message names options by their lower-case names; Kind says which case
// it is, for a command to say it in its flags' words.
type WorkdirError struct {
	Kind WorkdirErrorKind
	Dir  string
	// Epoch is the epoch the directory's checkpoint holds; Epochs the
	// total the run asked for (TooFewEpochs).
	Epoch, Epochs int
	// Diffs are the settings that differ: "hidden 256 (now 128)"
	// (workdir.Settings.Diff, by option name).
	Diffs []string
	Err   error
}

// WorkdirErrorKind tells WorkdirErrors apart.
type WorkdirErrorKind int

// The kinds of WorkdirError.
const (
	// NotWorkdir: the path exists and is not a GNN work directory.
	NotWorkdir WorkdirErrorKind = iota + 1
	// Locked: another process holds it (Err says which).
	Locked
	// HoldsCheckpoint: it holds a checkpoint and the run neither resumes
	// nor overwrites.
	HoldsCheckpoint
	// OtherSettings: its checkpoint was trained with other settings.
	OtherSettings
	// TooFewEpochs: the run resumes asking for fewer epochs than the
	// checkpoint holds.
	TooFewEpochs
	// Unreadable: its state or checkpoint cannot be read (Err).
	Unreadable
)

func (e *WorkdirError) Error() string {
	switch e.Kind {
	case NotWorkdir:
		return fmt.Sprintf("%s exists and is not a GNN work directory", e.Dir)
	case Locked:
		return e.Err.Error()
	case HoldsCheckpoint:
		return fmt.Sprintf("%s holds a checkpoint after epoch %d: resume it, overwrite it, or choose another work directory", e.Dir, e.Epoch)
	case OtherSettings:
		return fmt.Sprintf("%s holds a checkpoint after epoch %d trained with other settings: %s", e.Dir, e.Epoch, strings.Join(e.Diffs, ", "))
	case TooFewEpochs:
		return fmt.Sprintf("%s is trained through epoch %d; epochs %d counts the total, not the epochs to add", e.Dir, e.Epoch, e.Epochs)
	}
	return fmt.Sprintf("%s: %v", e.Dir, e.Err)
}

func (e *WorkdirError) Unwrap() error { return e.Err }

// checkpoint is a checkpoint's content.
type checkpoint struct {
	Epoch   int     `json:"epoch"`
	Records []Epoch `json:"records"`
	params  []byte  // Model.Save's
	adam    []byte  // Adam.Save's
}

// writeCheckpoint replaces dir's checkpoint atomically: the magic, a
// version, three length-prefixed sections (the epoch and records as JSON,
// the parameters, Adam's state) and the CRC-32C of all before it.
func writeCheckpoint(dir string, epoch int, records []Epoch, m *nn.Model, adam *nn.Adam) error {
	meta, err := json.Marshal(checkpoint{Epoch: epoch, Records: records})
	if err != nil {
		return err
	}
	var params, opt bytes.Buffer
	if err := m.Save(&params); err != nil {
		return fmt.Errorf("checkpoint parameters: %w", err)
	}
	if err := adam.Save(&opt); err != nil {
		return fmt.Errorf("checkpoint optimiser: %w", err)
	}
	var b bytes.Buffer
	b.WriteString(ckptMagic)
	b.Write(binary.LittleEndian.AppendUint32(nil, ckptVersion))
	for _, sec := range [][]byte{meta, params.Bytes(), opt.Bytes()} {
		b.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(sec))))
		b.Write(sec)
	}
	b.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(b.Bytes(), castagnoli)))
	return atomicfile.WriteBytes(filepath.Join(dir, CheckpointFile), b.Bytes())
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// readCheckpoint reads and verifies dir's checkpoint; nil (and no error)
// when there is none.
func readCheckpoint(dir string) (*checkpoint, error) {
	path := filepath.Join(dir, CheckpointFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	bad := func(what string) error { return fmt.Errorf("%s: %s", path, what) }
	if len(data) < len(ckptMagic)+4+4 || string(data[:len(ckptMagic)]) != ckptMagic {
		return nil, bad("not a GNN checkpoint")
	}
	body, sum := data[:len(data)-4], binary.LittleEndian.Uint32(data[len(data)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return nil, bad("checksum mismatch (the file is damaged)")
	}
	if v := binary.LittleEndian.Uint32(body[len(ckptMagic):]); v != ckptVersion {
		return nil, bad(fmt.Sprintf("checkpoint version %d, this tierflow reads %d", v, ckptVersion))
	}
	rest := body[len(ckptMagic)+4:]
	var secs [3][]byte
	for i := range secs {
		if len(rest) < 8 {
			return nil, bad("truncated")
		}
		n := binary.LittleEndian.Uint64(rest)
		rest = rest[8:]
		if n > uint64(len(rest)) {
			return nil, bad("truncated")
		}
		secs[i], rest = rest[:n], rest[n:]
	}
	var c checkpoint
	if err := json.Unmarshal(secs[0], &c); err != nil {
		return nil, bad(err.Error())
	}
	c.params, c.adam = secs[1], secs[2]
	return &c, nil
}

// readState reads dir's StateFile; nil (and no error) when there is
// none.
func readState(dir string) (*state, error) {
	path := filepath.Join(dir, StateFile)
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s state
	if err := json.Unmarshal(raw, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if s.Kind != stateKind {
		return nil, fmt.Errorf("%s: not a GNN work directory's state (kind %q)", path, s.Kind)
	}
	if s.Version != stateVersion {
		return nil, fmt.Errorf("%s: version %d, this tierflow reads %d", path, s.Version, stateVersion)
	}
	return &s, nil
}

func writeState(dir string, s state) error {
	s.Kind, s.Version = stateKind, stateVersion
	raw, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, StateFile), append(raw, '\n'))
}

// openedDir is a work directory opened for a run, under its lock.
type openedDir struct {
	dir      string
	unlock   func()
	settings workdir.Settings
	// ckpt is the checkpoint the run resumes (nil: from the start, any
	// checkpoint there being dropped when the run records its state).
	ckpt *checkpoint
}

// openDir locks the run's work directory and decides, before the graph
// is read, whether the run resumes its checkpoint, starts over, or is
// refused.
func openDir(o Options, log io.Writer) (*openedDir, error) {
	dir := o.Workdir
	unlock, err := workdir.LockDir(dir, ours)
	if errors.Is(err, workdir.ErrNotWorkdir) {
		return nil, &WorkdirError{Kind: NotWorkdir, Dir: dir, Err: err}
	} else if errors.Is(err, workdir.ErrLocked) {
		return nil, &WorkdirError{Kind: Locked, Dir: dir, Err: err}
	} else if err != nil {
		return nil, err
	}
	d := &openedDir{dir: dir, unlock: unlock}
	fail := func(err error) (*openedDir, error) {
		unlock()
		return nil, err
	}
	if d.settings, err = settingsOf(o); err != nil {
		return fail(err)
	}
	st, err := readState(dir)
	if err != nil {
		return fail(&WorkdirError{Kind: Unreadable, Dir: dir, Err: err})
	}
	var ckpt *checkpoint
	if st != nil {
		if ckpt, err = readCheckpoint(dir); err != nil {
			return fail(&WorkdirError{Kind: Unreadable, Dir: dir, Err: err})
		}
	}
	if ckpt == nil {
		if o.Resume {
			fmt.Fprintf(log, "nothing to resume: %s holds no checkpoint yet; training from the start\n", dir)
		}
		return d, nil
	}
	diffs := st.Settings.Diff(d.settings)
	switch {
	case o.Overwrite:
		fmt.Fprintf(log, "starting over in %s (its checkpoint after epoch %d is dropped)\n", dir, ckpt.Epoch)
		return d, nil
	case o.Resume && len(diffs) == 0 && ckpt.Epoch > o.Epochs:
		return fail(&WorkdirError{Kind: TooFewEpochs, Dir: dir, Epoch: ckpt.Epoch, Epochs: o.Epochs})
	case o.Resume && len(diffs) == 0:
		d.ckpt = ckpt
		return d, nil
	case len(diffs) == 0:
		return fail(&WorkdirError{Kind: HoldsCheckpoint, Dir: dir, Epoch: ckpt.Epoch})
	}
	return fail(&WorkdirError{Kind: OtherSettings, Dir: dir, Epoch: ckpt.Epoch, Diffs: diffs})
}

// start records the run's state in the directory, once the graph is read
// and the model built, when the run does not resume.
func (d *openedDir) start(o Options, spec nn.Spec) error {
	if d.ckpt != nil {
		return nil
	}
	if err := os.Remove(filepath.Join(d.dir, CheckpointFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return writeState(d.dir, state{Settings: d.settings, Files: toStateFiles(o.Files), Spec: spec})
}
