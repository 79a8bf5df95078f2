package job

import (
	"errors"
	"fmt"
	"io"
	"syscall"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/initemb"
	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
	"github.com/tierflow/tierflow/workload"
)

// configureInit checks --init before any work (readable, of the run's
// dimension) and records its identity among the run's settings, so that a
// checkpoint is only resumed with the init it started from.
func configureInit(o Options, cfg *Config) error {
	if o.Init == "" {
		return nil
	}
	if err := initemb.Check(o.Init, o.Dim); err != nil {
		return err
	}
	id, err := initemb.Identity(o.Init)
	if err != nil {
		return err
	}
	cfg.Settings[workdir.SettingKey("Init")] = id
	return nil
}

// applyInit, when the run starts afresh, rewrites checkpoint 0 with the
// init file's rows and says how many nodes it set.
func applyInit(o Options, r *run, log io.Writer) error {
	if o.Init == "" || r.resume {
		return nil
	}
	res, err := initemb.Apply(r.st, o.Init, r.st.M.Seed, workdir.InitScale)
	if err != nil {
		return err
	}
	fmt.Fprintln(log, res)
	return nil
}

// checkExportPBG checks --export DIR --export-format pbg before any work.
func checkExportPBG(dir string) error {
	if err := pbgio.CheckOut(dir); err != nil {
		return inputerr.Errorf("{Export}: %w", err)
	}
	return nil
}

// checkPBGForm refuses a PBG export of a model PBG cannot express
// (pbgio.NoPBGForm).
func checkPBGForm(m workload.Model) error {
	if why := pbgio.NoPBGForm(m); why != "" {
		return inputerr.Errorf("the pbg format: the model %s has no PyTorch-BigGraph form: %s; export it as npy, tsv or csv", m, why)
	}
	return nil
}

// exportPBG writes the trained embeddings and relation parameters in
// PyTorch-BigGraph's checkpoint layout.
func exportPBG(dir string, st *store.Store, log io.Writer) error {
	sum, err := pbgio.Export(dir, st)
	if errors.Is(err, syscall.ENOSPC) {
		return err
	} else if err != nil {
		return inputerr.Errorf("{Export}: %w", err)
	}
	fmt.Fprintf(log, "wrote %s (PyTorch-BigGraph checkpoint layout, %.1f MB: %s, version %d, operator %s, %d relations)\n",
		dir, float64(sum.Bytes)/1e6, sum.Layout(), sum.Version, sum.Operator, sum.Relations)
	return nil
}
