// Command repredict predicts the runs of a saved realrun --compare-sim
// --json output again with other device profiles, so that a change to the
// calibration can be read against runs already measured: for each run and
// profile it prints the prediction, its error and, where the profile
// carries a spread, the range and whether the measured epoch lies in it;
// then the run predicted again with the engine's rate as it ran (the
// compute predicted over the compute measured), and with both the engine
// and the disk as they ran (validate.Decompose).
//
//	go run ./cmd/internal/repredict -manifest WORKDIR/manifest.json \
//	    -flags "--dataset freebase86m --scale 0.35 --dim 100 --p 16 --c 4 --negatives 100" \
//	    RESULTS.json PROFILE.yaml...
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/validate"
)

func main() {
	manifest := flag.String("manifest", "", "the work directory's manifest.json (its buckets and partition size)")
	flags := flag.String("flags", "", "the run's training flags: --dim, --p, --c, --negatives, --batch, --model, --workers, --dataset")
	flag.Parse()
	if err := run(*manifest, *flags, flag.Args()); err != nil {
		fmt.Fprintln(os.Stderr, "repredict:", cli.Render(err.Error())) // job names fields: {Dim}
		os.Exit(2)
	}
}

func run(manifest, flags string, args []string) error {
	if manifest == "" || len(args) < 2 {
		return fmt.Errorf("usage: repredict -manifest M -flags F RESULTS.json PROFILE.yaml...")
	}
	data, err := os.ReadFile(manifest)
	if err != nil {
		return err
	}
	var m store.Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return fmt.Errorf("%s: %w", manifest, err)
	}
	o, err := parseFlags(flags)
	if err != nil {
		return err
	}
	cfg, err := job.Configure(o)
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(args[0])
	if err != nil {
		return err
	}
	var out validate.CompareOutput
	if err := json.Unmarshal(raw, &out); err != nil {
		return fmt.Errorf("%s: %w", args[0], err)
	}
	st := &store.Store{M: m}
	fmt.Println("profile\tordering\tmeasured s\tpredicted s\terror %\trange s\tin range\tstall measured s\tstall predicted s\tengine ran ×\tengine as ran s\terror %\tboth as ran s\terror %")
	for _, path := range args[1:] {
		prof, err := devices.Load(path)
		if err != nil {
			return err
		}
		for _, c := range out.Results {
			plans, _, err := orderings.Select([]string{c.Ordering}, m.P, o.C, orderings.Belady, 0)
			if err != nil || len(plans) != 1 {
				return fmt.Errorf("%s: plan: %v", c.Ordering, err)
			}
			pred, lo, hi, err := validate.PredictRange(st, plans[0], cfg.Hyper, true, prof)
			if err != nil {
				return err
			}
			meas := c.Measured.EpochSeconds
			rng, in := "—", "—"
			if hi > 0 {
				rng, in = fmt.Sprintf("%.1f–%.1f", lo, hi), fmt.Sprint(lo <= meas && meas <= hi)
			}
			d, err := validate.Decompose(st, plans[0], cfg.Hyper, true, prof, c.Measured, pred)
			if err != nil {
				return err
			}
			pct := func(x float64) float64 { return 100 * (x/meas - 1) }
			fmt.Printf("%s\t%s\t%.1f\t%.1f\t%+.1f\t%s\t%s\t%.1f\t%.1f\t%.2f\t%.1f\t%+.1f\t%.1f\t%+.1f\n", path, c.Ordering, meas, pred.EpochSeconds, pct(pred.EpochSeconds), rng, in,
				c.Measured.StallSeconds, pred.StallSeconds, d.EngineRatio, d.AsRanEngineSeconds, pct(d.AsRanEngineSeconds), d.AsRanAllSeconds, pct(d.AsRanAllSeconds))
		}
	}
	return nil
}

// parseFlags reads the few training flags a prediction needs into
// job.Defaults.
func parseFlags(s string) (job.Options, error) {
	o := job.Defaults
	fs := flag.NewFlagSet("flags", flag.ContinueOnError)
	fs.StringVar(&o.Dataset, "dataset", o.Dataset, "")
	fs.Float64Var(&o.Scale, "scale", o.Scale, "")
	fs.IntVar(&o.Dim, "dim", o.Dim, "")
	fs.IntVar(&o.P, "p", o.P, "")
	fs.IntVar(&o.C, "c", o.C, "")
	fs.IntVar(&o.Negatives, "negatives", o.Negatives, "")
	fs.IntVar(&o.Batch, "batch", o.Batch, "")
	fs.IntVar(&o.Workers, "workers", o.Workers, "")
	fs.StringVar(&o.Model, "model", o.Model, "")
	return o, fs.Parse(strings.Fields(s))
}
