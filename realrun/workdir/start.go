package workdir

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
)

// Use says how a run means to use its work directory.
type Use struct {
	// Resume continues the directory's last checkpoint; it is refused
	// when the checkpoint was trained with other Settings.
	Resume bool
	// Overwrite lets a run start over on a directory that holds a
	// checkpoint (which is then lost).
	Overwrite bool
	// Settings are the run's, recorded when training starts from the
	// initial partitions and compared with the recorded ones otherwise.
	Settings Settings
	// Keep is how many checkpoints the run keeps (store.Store.Keep).
	Keep int
}

// Start opens the work directory of spec for a run, or builds it, and
// says whether the run resumes its last checkpoint. It never loses a
// checkpoint silently: a directory holding one is resumed (with
// use.Resume and the same settings) or refused — naming each setting that
// differs and the ways on — unless use.Overwrite. A directory without a
// checkpoint is reused when built from the same data and layout, its
// partitions initialised afresh, and rebuilt otherwise; with use.Resume
// the run says there was nothing to resume. A path that exists and is not
// a tierflow work directory is refused before any work. Call it holding
// the directory's lock (LockWorkdir).
func Start(spec DataSpec, use Use, log io.Writer) (st *store.Store, resume bool, err error) {
	dir := spec.Workdir
	if fi, err := os.Stat(dir); err == nil && (!fi.IsDir() || !store.IsWorkdir(dir) && !store.Unbuilt(dir)) {
		return nil, false, inputerr.Errorf("{Workdir} %s exists and is not a tierflow work directory; choose another {Workdir}", dir)
	}
	st, err = store.Open(dir)
	switch {
	case errors.Is(err, store.ErrVersion):
		return nil, false, inputerr.Errorf("{Workdir}: %v; remove it or choose another {Workdir}", err)
	case err != nil && store.IsWorkdir(dir):
		return nil, false, inputerr.Errorf("{Workdir}: %w", err)
	case err != nil: // nothing there yet
		if use.Resume {
			fmt.Fprintf(log, "nothing to resume: %s does not exist yet; training from the start\n", dir)
		}
		return fresh(spec, use)
	}
	st.Keep = use.Keep
	if st.Current == 0 && st.Bucket == 0 {
		if use.Resume {
			fmt.Fprintf(log, "nothing to resume: %s holds no checkpoint yet; training from the start\n", dir)
		}
		return reuseOrBuild(st, spec, use)
	}
	was, err := recordedOrManifest(st)
	if err != nil {
		return nil, false, err
	}
	diffs := was.WithObjective().Diff(use.Settings)
	switch {
	case use.Overwrite:
		fmt.Fprintf(log, "{Overwrite}: starting over in %s (its checkpoint after %s is dropped)\n", dir, position(st))
		return reuseOrBuild(st, spec, use)
	case use.Resume && len(diffs) == 0:
		return st, true, nil
	case use.Resume:
		return nil, false, inputerr.Errorf("{Resume}: %s holds a checkpoint after %s trained with other settings: %s; resume with those settings, or start over with {Overwrite} or another {Workdir}",
			dir, position(st), strings.Join(diffs, ", "))
	case len(diffs) == 0:
		return nil, false, inputerr.Errorf("{Workdir} %s holds a checkpoint after %s: {Resume} continues it, {Overwrite} starts over (losing it), or choose another {Workdir}", dir, position(st))
	}
	return nil, false, inputerr.Errorf("{Workdir} %s holds a checkpoint after %s trained with other settings: %s; {Resume} with those settings continues it, {Overwrite} starts over (losing it), or choose another {Workdir}",
		dir, position(st), strings.Join(diffs, ", "))
}

// position says where a store's current checkpoint stands: "epoch 3" or
// "12 buckets of epoch 4".
func position(st *store.Store) string {
	if st.Bucket == 0 {
		return fmt.Sprintf("epoch %d", st.Current)
	}
	return fmt.Sprintf("%d buckets of epoch %d", st.Bucket, st.Current+1)
}

// recordedOrManifest are the settings a directory's training was started
// with: its record, or — for a directory made before tierflow kept one —
// what its manifest says (the data, p, d, model and seed).
func recordedOrManifest(st *store.Store) (Settings, error) {
	was, err := Recorded(st.Dir)
	if err != nil || was != nil {
		return was, err
	}
	return manifestSettings(st), nil
}

// manifestSettings are the settings a directory's manifest says: the
// data's p, d, model and seed.
func manifestSettings(st *store.Store) Settings {
	m := st.M
	return Settings{SettingKey("P"): fmt.Sprint(m.P), SettingKey("Dim"): fmt.Sprint(m.Dim), SettingKey("Model"): m.Model, SettingKey("Seed"): fmt.Sprint(m.Seed)}
}

// reuseOrBuild starts training from the initial partitions: in st when it
// holds the same data and layout as spec, else in a directory rebuilt.
func reuseOrBuild(st *store.Store, spec DataSpec, use Use) (*store.Store, bool, error) {
	if same, err := sameData(st, spec); err != nil || !same {
		if err != nil {
			return nil, false, err
		}
		return fresh(spec, use)
	}
	spec.Copies = max(spec.Copies-1, 0) // the initial partitions are there
	if err := spec.checkSpace(Space{PartitionBytes: st.M.PartitionBytes, P: st.M.P, Copies: spec.Copies}); err != nil {
		return nil, false, err
	}
	if err := st.InitPartitions(spec.Seed, InitScale); err != nil {
		return nil, false, err
	}
	if err := forgetEval(st.Dir); err != nil {
		return nil, false, err
	}
	return st, false, Record(st.Dir, use.Settings)
}

// fresh builds spec's work directory and records the run's settings.
func fresh(spec DataSpec, use Use) (*store.Store, bool, error) {
	st, err := Prepare(spec)
	if err != nil {
		return nil, false, err
	}
	st.Keep = use.Keep
	return st, false, Record(st.Dir, use.Settings)
}
