// Command distbench is `make reproduce-distributed`: tierflow's
// distributed engine on the project's own test hosts — trainers in
// network namespaces whose links to the shared object store and etcd are
// shaped with tc — measured against the simulator's prediction for the
// same links, trainer counts and store (validate.PredictDistributed).
// It needs root (network namespaces, tc).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/cmd/internal/distargs"
	"github.com/tierflow/tierflow/experiments"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/testhosts"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/validate"
)

// tbfPayload is the share of a tbf-shaped Ethernet link's rate that TCP
// payload gets: 1448 bytes of every 1514 on the wire (the test hosts'
// own measurement: 76.6–76.9 Mbit/s under 80mbit).
const tbfPayload = 1448.0 / 1514

// Row is one epoch of one configuration, measured and predicted.
type Row struct {
	Trainers         int     `json:"trainers"`
	Rate             string  `json:"rate"`
	Epoch            int     `json:"epoch"`
	MeasuredSeconds  float64 `json:"measured_s"`
	PredictedSeconds float64 `json:"predicted_s"`
	Error            float64 `json:"error"`
	MeasuredLoads    int     `json:"measured_loads"`
	PredictedLoads   int     `json:"predicted_loads"`
	MeasuredSaves    int     `json:"measured_saves"`
	PredictedSaves   int     `json:"predicted_saves"`
	MeasuredEdgeMB   float64 `json:"measured_edge_mb"`
	PredictedEdgeMB  float64 `json:"predicted_edge_mb"`
	MeasuredWait     float64 `json:"measured_wait_s"`
	PredictedWait    float64 `json:"predicted_wait_s"`
	MeasuredTrain    float64 `json:"measured_train_s"`
}

func main() {
	os.Exit(cli.Exit(os.Stderr, "distbench", run(os.Args[1:], os.Stdout, os.Stderr)))
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("distbench", flag.ContinueOnError)
	out := fs.String("out", "results/distributed", "write distributed.json and distributed.md to `DIR`")
	trainers := fs.String("trainers", "1,2", "trainer counts")
	rates := fs.String("rates", "40mbit,80mbit", "link speeds (tc units)")
	realrun := fs.String("realrun", "bin/realrun", "the realrun binary the trainers run")
	epochs := fs.Int("epochs", 2, "epochs per run")
	scale := fs.Float64("scale", 0.002, "Twitter preset scale")
	if err := fs.Parse(args); err != nil {
		return cli.Usagef("%w", err)
	}
	if err := testhosts.Supported(); err != nil {
		return cli.Usagef("test hosts: %w", err)
	}
	bin, err := filepath.Abs(*realrun)
	if err != nil {
		return err
	}
	if _, err := os.Stat(bin); err != nil {
		return cli.Usagef("--realrun: %w (make build)", err)
	}
	ns, err := cli.IntList(*trainers)
	if err != nil {
		return cli.Usagef("--trainers: %w", err)
	}
	tmp, err := os.MkdirTemp("", "distbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	start := time.Now()
	var rows []Row
	for _, rate := range cli.SplitList(*rates) {
		for _, n := range ns {
			r, err := measure(bin, n, rate, *epochs, *scale, filepath.Join(tmp, fmt.Sprintf("%d-%s", n, rate)), stderr)
			if err != nil {
				return fmt.Errorf("%d trainers at %s: %w", n, rate, err)
			}
			rows = append(rows, r...)
			for _, x := range r {
				fmt.Fprintf(stderr, "%d trainers, %s, epoch %d: measured %.2f s, predicted %.2f s (%+.1f%%); loads %d/%d, saves %d/%d\n",
					x.Trainers, x.Rate, x.Epoch, x.MeasuredSeconds, x.PredictedSeconds, 100*x.Error, x.MeasuredLoads, x.PredictedLoads, x.MeasuredSaves, x.PredictedSaves)
			}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if err := atomicfile.Write(filepath.Join(*out, "distributed.json"), func(w io.Writer) error {
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(rows)
	}); err != nil {
		return err
	}
	md := table(rows)
	fmt.Fprint(stdout, md)
	if err := atomicfile.Write(filepath.Join(*out, "distributed.md"), func(w io.Writer) error { _, err := io.WriteString(w, md); return err }); err != nil {
		return err
	}
	f, _ := experiments.LookupFolder("distributed")
	f.Command = cli.Render(f.Command) // the fields it names by their flags
	return experiments.WriteFolderReadme(*out, f, experiments.LiveProvenance(f.Command, start, time.Since(start)))
}

func options(workdir string, epochs int, scale float64) job.Options {
	o := job.Defaults
	o.Dataset, o.Scale, o.P, o.C, o.Dim, o.Epochs, o.Workers, o.Workdir, o.Eval, o.Negatives = "twitter", scale, 8, 2, 32, epochs, 1, workdir, "none", 100
	return o
}

// calibrate times the engine on one bucket of the work directory
// (dist.CalibrateEngine): the time per edge the prediction uses (one
// worker, as each trainer).
func calibrate(o job.Options) (float64, store.Manifest, error) {
	x, err := job.Open(o, 2, io.Discard)
	if err != nil {
		return 0, store.Manifest{}, err
	}
	defer x.Close()
	e, err := dist.CalibrateEngine(x)
	return e, x.Store().M, err
}

func measure(bin string, n int, rate string, epochs int, scale float64, workdir string, log io.Writer) ([]Row, error) {
	o := options(workdir, epochs, scale)
	edgeSeconds, m, err := calibrate(o)
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	net, err := testhosts.New(ctx, n, rate, 0)
	if err != nil {
		return nil, err
	}
	defer net.Close()
	out, err := dist.TrainDistributed(ctx, o, dist.DistOptions{Trainers: n, Argv: []string{bin}, TrainerArgs: distargs.Trainer, Listen: net.Gateway, Objects: &dist.ObjectStore{Embedded: true}, Lease: 5 * time.Second,
		Wrap: func(id int, argv []string) []string {
			return append([]string{"ip", "netns", "exec", net.Hosts[id].Name}, argv...)
		}}, log)
	if err != nil {
		return nil, err
	}
	rateBits, err := testhosts.ParseRate(rate)
	if err != nil {
		return nil, err
	}
	pred, err := validate.PredictDistributed(validate.DistributedSetup{Manifest: m, Trainers: n, LinkBytes: float64(rateBits) / 8 * tbfPayload, EdgeSeconds: edgeSeconds, Epochs: epochs})
	if err != nil {
		return nil, err
	}
	var rows []Row
	for i, e := range out.Epochs {
		p := pred.Epochs[min(i, len(pred.Epochs)-1)]
		r := Row{Trainers: n, Rate: rate, Epoch: e.Epoch, MeasuredSeconds: e.Seconds, PredictedSeconds: p.Seconds}
		r.Error = p.Seconds/e.Seconds - 1
		for _, t := range e.Trainers {
			r.MeasuredLoads += t.Loads
			r.MeasuredSaves += t.Saves
			r.MeasuredEdgeMB += float64(t.EdgeBytes) / 1e6
			r.MeasuredWait += t.WaitBucketSeconds / float64(n)
			r.MeasuredTrain += t.TrainSeconds / float64(n)
		}
		for _, t := range p.Trainers {
			r.PredictedLoads += t.Loads
			r.PredictedSaves += t.Saves
			r.PredictedWait += t.WaitBucketSeconds / float64(n)
		}
		r.PredictedEdgeMB = p.EdgeBytes / 1e6
		rows = append(rows, r)
	}
	return rows, nil
}

func table(rows []Row) string {
	var b strings.Builder
	b.WriteString("| trainers | link | epoch | measured s | predicted s | predicted ÷ measured − 1 | loads (measured / predicted) | saves (measured / predicted) | edge MB (measured / predicted) | wait s a trainer (measured / predicted) | train s a trainer (measured) |\n")
	b.WriteString("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %d | %s | %d | %.2f | %.2f | %+.1f%% | %d / %d | %d / %d | %.1f / %.1f | %.2f / %.2f | %.2f |\n",
			r.Trainers, r.Rate, r.Epoch, r.MeasuredSeconds, r.PredictedSeconds, 100*r.Error, r.MeasuredLoads, r.PredictedLoads, r.MeasuredSaves, r.PredictedSaves, r.MeasuredEdgeMB, r.PredictedEdgeMB, r.MeasuredWait, r.PredictedWait, r.MeasuredTrain)
	}
	return b.String()
}
