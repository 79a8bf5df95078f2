package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The best checkpoint: a run that keeps its best epoch (by a validation
// metric) has, beside its last checkpoints, a copy of the best epoch's
// checkpoint in best-EEEE/ and a record of the choice in best.json. The
// copy shares the checkpoint's files (hard links: partitions are never
// written in place), so that pruning the checkpoints (Keep) never
// removes it. It is made in best-EEEE.tmp/, synced and renamed, and only
// then named by best.json (replaced atomically), and only then is the
// copy it replaces removed: a crash leaves the record naming a whole
// copy, the old one or the new one.
const BestFile = "best.json"

// Validated is one validated epoch's metric.
type Validated struct {
	Epoch int     `json:"epoch"`
	Value float64 `json:"value"`
}

// Best is a work directory's record of its validated epochs and the best
// of them (best.json).
type Best struct {
	// Metric names the metric compared ("valid_mrr": higher is better).
	Metric string `json:"metric"`
	// Epoch is the best epoch so far (0: none validated) and Value its
	// metric; Dir, relative to the work directory, holds a copy of its
	// checkpoint ("": the run kept no copy).
	Epoch int     `json:"epoch"`
	Value float64 `json:"value"`
	Dir   string  `json:"dir,omitempty"`
	// History is every validated epoch, in order.
	History []Validated `json:"history"`
	// SinceBest counts the validated epochs after Epoch (none improved on
	// it); StoppedAt is the epoch after which the run stopped early
	// because SinceBest reached its patience (0: it did not).
	SinceBest int `json:"since_best"`
	StoppedAt int `json:"stopped_early_at,omitempty"`
}

// Has reports whether epoch e was validated.
func (b Best) Has(e int) bool {
	for _, v := range b.History {
		if v.Epoch == e {
			return true
		}
	}
	return false
}

// ErrNoBest is wrapped when a work directory holds no copy of a best
// checkpoint.
var ErrNoBest = errors.New("no best checkpoint")

// BestDirName is the directory of the copy of epoch e's checkpoint.
func BestDirName(e int) string { return fmt.Sprintf("best-%04d", e) }

// ReadBest reads the work directory's best.json; ok is false when there
// is none.
func (s *Store) ReadBest() (b Best, ok bool, err error) {
	path := filepath.Join(s.Dir, BestFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return Best{}, false, nil
	} else if err != nil {
		return Best{}, false, err
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return Best{}, false, fmt.Errorf("%s: %w", path, err)
	}
	return b, true, nil
}

// BestCheckpoint is the copy of the best checkpoint the work directory
// keeps, verified to be complete (its checksums.json is there); an error
// wrapping ErrNoBest when it keeps none.
func (s *Store) BestCheckpoint() (Checkpoint, Best, error) {
	b, ok, err := s.ReadBest()
	if err != nil {
		return Checkpoint{}, b, err
	}
	if !ok || b.Dir == "" || b.Epoch == 0 {
		return Checkpoint{}, b, fmt.Errorf("%s: %w kept", s.Dir, ErrNoBest)
	}
	dir := filepath.Join(s.Dir, b.Dir)
	if _, err := os.Stat(filepath.Join(dir, sumsFile)); err != nil {
		return Checkpoint{}, b, fmt.Errorf("%s: best.json names %s, which is not a whole checkpoint: %w", s.Dir, b.Dir, ErrCorrupt)
	}
	return Checkpoint{Epoch: b.Epoch, Dir: dir}, b, nil
}

// WriteBest replaces best.json with b atomically (a temporary file,
// synced, renamed, the directory synced).
func (s *Store) WriteBest(b Best) error {
	data, err := json.MarshalIndent(b, "", " ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(s.Dir, BestFile+".tmp")
	if err := writeFile(tmp, append(data, '\n')); err != nil {
		return err
	}
	if err := syncFile(tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(s.Dir, BestFile)); err != nil {
		return err
	}
	return syncFile(s.Dir)
}

// CopyBest makes best-EEEE/, a copy of the current checkpoint (an epoch
// checkpoint: Bucket 0) sharing its files, whole and synced, and returns
// its name relative to the work directory. It does not name it in
// best.json (WriteBest does) and writes nothing into a committed
// checkpoint; a stale copy of the same name not named by best.json is
// replaced.
func (s *Store) CopyBest() (string, error) {
	if s.Bucket != 0 || s.Current == 0 {
		return "", fmt.Errorf("best checkpoint: the current checkpoint %d+%d is not an epoch's", s.Current, s.Bucket)
	}
	name := BestDirName(s.Current)
	final, tmp := filepath.Join(s.Dir, name), filepath.Join(s.Dir, name+".tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return "", err
	}
	if b, ok, err := s.ReadBest(); err != nil {
		return "", err
	} else if ok && b.Dir == name {
		return "", fmt.Errorf("best checkpoint %s: already named by %s", name, BestFile)
	}
	if _, err := os.Stat(final); err == nil {
		if err := removeDir(final); err != nil {
			return "", err
		}
	}
	if err := os.Mkdir(tmp, 0o755); err != nil {
		return "", err
	}
	src := s.CurrentDir()
	entries, err := os.ReadDir(src)
	if err != nil {
		return "", err
	}
	for _, ent := range entries {
		if err := os.Link(filepath.Join(src, ent.Name()), filepath.Join(tmp, ent.Name())); err != nil {
			os.RemoveAll(tmp)
			return "", fmt.Errorf("best checkpoint: %w", err)
		}
	}
	if err := syncFile(tmp); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		os.RemoveAll(tmp)
		return "", err
	}
	return name, syncFile(s.Dir)
}

// TidyBest removes the copies of best checkpoints best.json does not
// name: the ones it replaced, and partial ones a crash left.
func (s *Store) TidyBest() error {
	b, _, err := s.ReadBest()
	if err != nil {
		return err
	}
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		return err
	}
	for _, ent := range entries {
		name := ent.Name()
		if !strings.HasPrefix(name, "best-") || name == b.Dir {
			continue
		}
		if err := removeDir(filepath.Join(s.Dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// View returns a read-only view of the store whose current checkpoint is
// c (its reads — partitions, extra files — come from c.Dir): for
// evaluating or exporting a kept checkpoint other than the current one.
func (s *Store) View(c Checkpoint) *Store {
	v := *s
	v.Current, v.Bucket, v.view = c.Epoch, c.Bucket, c.Dir
	return &v
}
