package workdir

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
)

// SettingsFile is the file of a work directory that records what its
// training was started with.
const SettingsFile = "training.json"

// Settings are what a work directory's checkpoints depend on, each under
// the key of the field that sets it (SettingKey: "--dim" → "16"; the
// graph's identity under Edges' or Dataset's): recorded when training
// starts from the initial partitions and compared on every later run, so
// that a checkpoint is only ever continued with the settings it was
// trained with.
type Settings map[string]string

// SettingKey is the key under which Settings (and Manifest.InputFormat)
// record the setting of field, the field of a run's specification that
// sets it ({Field} in a message): the field's words in lower case joined
// by "-", after "--" ("Dim": "--dim", "OrderingSeed": "--ordering-seed",
// "LR": "--lr"). That is the key every record has used (it was realrun's
// flag for the setting), so a directory recorded before still resumes.
func SettingKey(field string) string { return "--" + inputerr.Kebab(field) }

// Record writes s as dir's training record (atomically).
func Record(dir string, s Settings) error {
	data, err := json.MarshalIndent(s, "", " ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(filepath.Join(dir, SettingsFile), append(data, '\n'))
}

// Recorded reads dir's training record; nil (and no error) when there is
// none.
func Recorded(dir string) (Settings, error) {
	data, err := os.ReadFile(filepath.Join(dir, SettingsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s Settings
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, SettingsFile), err)
	}
	return s, nil
}

// LossSetting is the key of the setting of the training loss (the field
// Loss). A directory trained before the loss was a setting has none, and
// was trained with the softmax loss (WithObjective).
var LossSetting = SettingKey("Loss")

// WithObjective is s with the loss a directory trained before the
// objective was recorded was trained with, the softmax loss, where s
// records none; the regularisation and the loss's numbers are recorded
// only where they are not zero, and need no such default.
func (s Settings) WithObjective() Settings {
	if _, ok := s[LossSetting]; ok || s == nil {
		return s
	}
	out := maps.Clone(s)
	out[LossSetting] = "softmax"
	return out
}

// Diff lists, in key order, every setting whose value differs between
// the recorded was and now: "--dim 32 (now 16)"; a setting only one side
// has shows "(none)" on the other.
func (was Settings) Diff(now Settings) []string {
	keys := map[string]bool{}
	for k := range was {
		keys[k] = true
	}
	for k := range now {
		keys[k] = true
	}
	var out []string
	for _, k := range sortedKeys(keys) {
		a, okA := was[k]
		b, okB := now[k]
		if a == b && okA == okB {
			continue
		}
		if !okA {
			a = "(none)"
		}
		if !okB {
			b = "(none)"
		}
		out = append(out, fmt.Sprintf("%s %s (now %s)", k, a, b))
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// String is the settings as keys and values, in key order ("--c 4 --dim
// 16 …").
func (s Settings) String() string {
	keys := map[string]bool{}
	for k := range s {
		keys[k] = true
	}
	var parts []string
	for _, k := range sortedKeys(keys) {
		parts = append(parts, k+" "+s[k])
	}
	return strings.Join(parts, " ")
}

// Trained is what a work directory's training was started with, in
// fields: its training shape and its Plan. A zero field is one the
// directory does not say: a directory made before tierflow kept a
// training record says only P, Dim and Model (its manifest).
type Trained struct {
	Model            string
	Dim              int
	Batch, Negatives int
	// Chunk is the edges per chunk where they were set apart from
	// Negatives; 0: as many as Negatives (the default).
	Chunk int
	P, C  int
	// Ordering, Policy and OrderingSeed make the Plan (the ordering's
	// name; a Plan read from a file is recorded by its ordering's name).
	Ordering, Policy string
	OrderingSeed     int64
	// Recorded: the directory has a training record (SettingsFile); else
	// the fields are its manifest's.
	Recorded bool
}

// ReadTrained reads what st's training was started with: its training
// record, or — for a directory made before tierflow kept one — its
// manifest. A record that does not parse is an error naming the file.
func ReadTrained(st *store.Store) (Trained, error) {
	s, err := Recorded(st.Dir)
	if err != nil {
		return Trained{}, err
	}
	t := Trained{Recorded: s != nil}
	if s == nil {
		s = manifestSettings(st)
	}
	var errs []error
	num := func(key string, dst *int) {
		v, ok := s[key]
		if !ok {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			errs = append(errs, fmt.Errorf("%s %q is not a count", key, v))
			return
		}
		*dst = n
	}
	num(SettingKey("Dim"), &t.Dim)
	num(SettingKey("Batch"), &t.Batch)
	num(SettingKey("Negatives"), &t.Negatives)
	num(SettingKey("Chunk"), &t.Chunk)
	num(SettingKey("P"), &t.P)
	num(SettingKey("C"), &t.C)
	if v, ok := s[SettingKey("OrderingSeed")]; ok {
		if t.OrderingSeed, err = strconv.ParseInt(v, 10, 64); err != nil {
			errs = append(errs, fmt.Errorf("%s %q is not a number", SettingKey("OrderingSeed"), v))
		}
	}
	if t.Chunk == t.Negatives {
		t.Chunk = 0 // the default, recorded as its value
	}
	t.Model, t.Ordering, t.Policy = s[SettingKey("Model")], s[SettingKey("Ordering")], s[SettingKey("Policy")]
	if err := errors.Join(errs...); err != nil {
		return Trained{}, fmt.Errorf("%s: %w", filepath.Join(st.Dir, SettingsFile), err)
	}
	return t, nil
}
