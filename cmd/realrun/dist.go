//go:build !nodist

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/cmd/internal/distargs"
	"github.com/tierflow/tierflow/plots"
	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/validate"
)

// distMain is `realrun --trainers N`.
func distMain(o cmdOptions, format cli.Format, stdout, stderr io.Writer) error {
	if o.dist.Trainers < 1 {
		return cli.Usagef("--trainers %d: at least 1 trainer (--etcd and --lease go with --trainers)", o.dist.Trainers)
	}
	if o.dist.Lease < time.Second {
		return cli.Usagef("--lease %s: at least 1s", o.dist.Lease)
	}
	if o.timeline != "" {
		return cli.Usagef("--timeline %s: draws one machine's buffer slots, which several trainers do not share; with --trainers, --trace shows every trainer's buckets, transfers and waits", o.timeline)
	}
	ec, err := o.dist.Etcd.client()
	if err != nil {
		return err
	}
	switch m := o.dist.Members; {
	case m != 1 && ec.Endpoints != nil:
		return cli.Usagef("--etcd-members %d: not with --etcd (the members are those of the cluster --etcd names)", m)
	case m < 1 || m > 7 || m > 1 && m%2 == 0:
		return cli.Usagef("--etcd-members %d: 1 (embedded in this process) or 3, 5 or 7 (processes of their own; an even number survives no more losses than one fewer)", m)
	}
	objects, err := objectStore(o.dist)
	if err != nil {
		return err
	}
	argv, err := selfArgv()
	if err != nil {
		return err
	}
	d := dist.DistOptions{Trainers: o.dist.Trainers, Etcd: ec, Members: o.dist.Members, Lease: o.dist.Lease, Objects: objects, Listen: o.dist.Listen, Argv: argv, Compare: o.compareSim, Predict: predictDistributed, Trace: o.trace != "",
		TrainerArgs: distargs.Trainer, MemberArgs: distargs.Member, Stderr: stderr}
	if ec.Endpoints != nil {
		d.Members = 0
	}
	ctx, code, stop := signalContext()
	defer stop()
	out, err := dist.TrainDistributed(ctx, o.Options, d, cli.RenderWriter(stderr))
	if errors.Is(err, context.Canceled) {
		err = fmt.Errorf("%w; resume with: %s %s", err, prog, o.resume)
		if c := code(); c != 0 {
			// as one machine's run: 128+signal
			return &stoppedError{msg: err.Error(), code: c}
		}
		return err
	} else if err != nil {
		return asUsage(err)
	}
	if o.trace != "" {
		if err := cli.WriteTrace(o.trace, out.Trace, o.traceSpans, stderr); err != nil {
			return err
		}
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, out)
	case cli.CSV:
		var rows []dist.TrainerEpoch
		for _, e := range out.Epochs {
			rows = append(rows, e.Trainers...)
		}
		return trainerColumns.CSV(rows).CSV(stdout)
	}
	// The epochs as one machine's table shows them (loss, validation and
	// test quality), then every epoch's trainers.
	if len(out.Epochs) > 0 {
		if err := distEpochColumns.Select(o.out.isWide()).Human(out.Epochs).Render(stdout); err != nil {
			return err
		}
	}
	for i, e := range out.Epochs {
		fmt.Fprintf(stdout, "epoch %d: %.1f s%s\n", e.Epoch, e.Seconds, withinNote(e))
		if err := trainerColumns.Select(o.out.isWide()).Human(e.Trainers).Render(stdout); err != nil {
			return err
		}
		if i < len(out.Predicted) {
			p := out.Predicted[i]
			var loads, saves int
			var train, wait, xfer float64
			for _, t := range e.Trainers {
				n := float64(len(e.Trainers))
				loads, saves = loads+t.Loads, saves+t.Saves
				train, wait, xfer = train+t.TrainSeconds/n, wait+t.WaitBucketSeconds/n, xfer+t.TransferSeconds/n
			}
			fmt.Fprintf(stdout, "predicted: %.1f s (%+.0f%%); loads %d (measured %d), saves %d (%d); a trainer trains %.1f s (%.1f), waits %.1f s (%.1f), transfers %.1f s (%.1f)\n",
				p.Seconds, 100*(p.Seconds/e.Seconds-1), p.Loads, loads, p.Saves, saves, p.TrainSeconds, train, p.WaitBucketSeconds, wait, p.TransferSeconds, xfer)
		}
	}
	if c := out.Calibration; c != nil {
		fmt.Fprintf(stdout, "prediction: the simulator's model of this engine (sim.EngineModel) with the engine timed on one bucket before the run (%.2f µs an edge, trainers sharing %d cores) and the store's speed measured then (%.0f MB/s for a partition written and read back)\n",
			c.EdgeSeconds*1e6, runtime.NumCPU(), c.StoreBytes/1e6)
	}
	via := "the shared work directory"
	switch {
	case out.ObjectsEmbedded:
		via = "the embedded object store " + out.ObjectsEndpoint + " (in memory)"
	case out.ObjectsEndpoint != "":
		via = "the object store " + out.Objects + " at " + out.ObjectsEndpoint
	case out.Objects != "":
		via = "the object store " + out.Objects
	}
	etcd := out.Etcd
	if out.Members > 1 {
		etcd += fmt.Sprintf(" (%d members started for the run)", out.Members)
	}
	fmt.Fprintf(stdout, "%s on %s (%s, d=%d, %s, p=%d, %d train edges) through etcd %s, partitions through %s; buckets lost to dead trainers: %d\n",
		trainersOf(out), out.Dataset, out.Model, out.Dim, objectiveString(out.Objective), out.P, out.TrainEdges, etcd, via, out.Lost)
	if out.Order != "" {
		fmt.Fprintf(stdout, "buckets handed out in the order of the %s, each as soon as its partitions were free\n", out.Order)
	}
	if out.Quality.Mode != "" {
		fmt.Fprintf(stdout, "MRR %.4f  Hits@1 %.4f  Hits@10 %.4f (%s, %d test edges)\n", out.MRR, out.Quality.HitsAt1, out.Quality.HitsAt10, out.Quality.Mode, out.Quality.Edges)
	}
	if s := bestSummary(out.Best, out.Workdir, out.StoppedEarly, out.EarlyStop); s != "" {
		fmt.Fprintln(stdout, s)
	}
	for _, f := range out.Failed {
		fmt.Fprintf(stdout, "warning: %s (the others finished its buckets)\n", f)
	}
	fmt.Fprintln(stdout, "occupancy: training ÷ the trainer's epoch; wait: the lock server had no bucket with free partitions")
	return nil
}

// withinNote says where an epoch resumed and where it was checkpointed
// inside ("" for neither).
func withinNote(e dist.DistEpoch) string {
	var parts []string
	if e.Before > 0 {
		parts = append(parts, fmt.Sprintf("resumed after %d buckets", e.Before))
	}
	if len(e.Within) > 0 {
		ks := make([]string, len(e.Within))
		for i, k := range e.Within {
			ks[i] = strconv.Itoa(k)
		}
		parts = append(parts, "checkpoints inside after "+strings.Join(ks, ", ")+" buckets")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// objectStore is the store --objects names (nil: none), its endpoint
// and region from the flags or, as AWS's tools take them, the
// environment.
func objectStore(f distFlags) (*dist.ObjectStore, error) {
	switch f.Objects {
	case "":
		if f.ObjectsEndpoint != "" || f.ObjectsRegion != "" {
			return nil, cli.Usagef("--objects-endpoint and --objects-region go with --objects s3://BUCKET[/PREFIX]")
		}
		return nil, nil
	case objectsEmbedded:
		if f.ObjectsEndpoint != "" || f.ObjectsRegion != "" {
			return nil, cli.Usagef("--objects embedded: serves its own store; --objects-endpoint and --objects-region name a user's")
		}
		return &dist.ObjectStore{Embedded: true}, nil
	}
	s, err := dist.ParseObjectURL(f.Objects)
	if err != nil {
		return nil, cli.Usagef("--objects %w, or embedded", err)
	}
	s.Endpoint = firstSet(f.ObjectsEndpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL"))
	if s.Endpoint != "" {
		if err := dist.CheckEndpoint(s.Endpoint); err != nil {
			return nil, cli.Usagef("--objects-endpoint (or AWS_ENDPOINT_URL) %w", err)
		}
	}
	s.Region = firstSet(f.ObjectsRegion, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION"))
	return &s, nil
}

// firstSet is the first of ss that is not empty.
func firstSet(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// trainerColumns are the distributed run's per-trainer table and CSV.
var trainerColumns = plots.Columns{
	{Field: "Epoch", Head: "epoch"},
	{Field: "Trainer", Head: "trainer"},
	{Field: "Buckets", Head: "buckets"},
	{Field: "TrainSeconds", Head: "train", Seconds: true, CSVPrec: 3},
	{Field: "WaitBucketSeconds", Head: "wait for bucket", Seconds: true, CSVPrec: 3},
	{Field: "TransferSeconds", Head: "transfer", Seconds: true, CSVPrec: 3},
	{Field: "Seconds", Head: "epoch", Seconds: true, CSVPrec: 3},
	{Field: "Occupancy", Head: "occupancy %", Scale: 100, Prec: 0, CSVPrec: 4},
	{Field: "Loads", Head: "loads", Wide: true},
	{Field: "Saves", Head: "saves", Wide: true},
	{Field: "ReadBytes", Head: "read MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "WriteBytes", Head: "written MB", Scale: 1e-6, Prec: 1, Wide: true},
	{Field: "EdgeBytes"},
	{Field: "Loss", Head: "loss", Prec: 2, CSVPrec: 2},
	{Field: "Lost"},
}

// distEpochColumns are the distributed run's epochs table: one
// machine's columns (epochColumns) a distributed epoch has — its time,
// loss, and the quality evaluated after it.
var distEpochColumns = append(plots.Columns{{Field: "Epoch", Head: "epoch"}, {Field: "Seconds", Head: "epoch", Seconds: true, CSVPrec: 3}},
	pickColumns(epochColumns, "Loss", "LossPerEdge", "Valid.", "Test.", "EvalProtocol", "EvalSeconds")...)

// pickColumns are the columns of cs whose field is one of fields (or,
// for a name ending in ".", under it), in cs's order.
func pickColumns(cs plots.Columns, fields ...string) plots.Columns {
	var out plots.Columns
	for _, c := range cs {
		for _, f := range fields {
			if c.Field == f || strings.HasSuffix(f, ".") && strings.HasPrefix(c.Field, f) {
				out = append(out, c)
				break
			}
		}
	}
	return out
}

// client is the etcd client the flags describe (no endpoints: none
// given); the password comes from --etcd-user USER:PASSWORD, else
// --etcd-password-file, else $TIERFLOW_ETCD_PASSWORD.
func (e etcdFlags) client() (dist.EtcdClient, error) {
	var c dist.EtcdClient
	if e.Endpoints == "" {
		for _, f := range []struct{ name, v string }{{"etcd-cacert", e.CACert}, {"etcd-cert", e.Cert}, {"etcd-key", e.Key}, {"etcd-user", e.User}, {"etcd-password-file", e.PasswordFile}} {
			if f.v != "" {
				return c, cli.Usagef("--%s: goes with --etcd (an existing cluster; the etcd a run starts has credentials of its own)", f.name)
			}
		}
		return c, nil
	}
	eps, err := dist.ParseEndpoints(e.Endpoints)
	if err != nil {
		return c, cli.Usagef("--etcd %q: no endpoint", e.Endpoints)
	}
	c = dist.EtcdClient{Endpoints: eps, CACert: e.CACert, Cert: e.Cert, Key: e.Key}
	user, pw, inline := strings.Cut(e.User, ":")
	switch {
	case e.User == "" && e.PasswordFile != "":
		return c, cli.Usagef("--etcd-password-file: goes with --etcd-user")
	case e.User == "":
	case user == "":
		return c, cli.Usagef("--etcd-user %q: no user name", e.User)
	case inline && e.PasswordFile != "":
		return c, cli.Usagef("--etcd-user USER:PASSWORD and --etcd-password-file: one password, not two")
	case inline:
	case e.PasswordFile != "":
		b, err := os.ReadFile(e.PasswordFile)
		if err != nil {
			return c, cli.Usagef("--etcd-password-file: %w", err)
		}
		pw, _, _ = strings.Cut(string(b), "\n")
		pw = strings.TrimSuffix(pw, "\r")
		if pw == "" {
			return c, cli.Usagef("--etcd-password-file %s: empty", e.PasswordFile)
		}
	default:
		if pw = os.Getenv(distargs.PasswordEnv); pw == "" {
			return c, cli.Usagef("--etcd-user %s: no password (give it in $%s, --etcd-password-file FILE, or as USER:PASSWORD)", user, distargs.PasswordEnv)
		}
	}
	c.User, c.Password = user, pw
	for _, f := range []struct{ name, v string }{{"etcd-cacert", e.CACert}, {"etcd-cert", e.Cert}, {"etcd-key", e.Key}} {
		if f.v == "" {
			continue
		}
		if _, err := os.Stat(f.v); err != nil {
			return c, cli.Usagef("--%s: %w", f.name, err)
		}
	}
	if err := c.Check(); err != nil {
		return c, cli.Usagef("--etcd: %w", err)
	}
	return c, nil
}

// trainerMain is `realrun trainer`: one trainer of a distributed run.
func trainerMain(args []string, stdout, stderr io.Writer) error {
	var o dist.TrainerOptions
	var ef etcdFlags
	fs := newFlagSet(prog + " trainer")
	ef.register(fs, "etcd `ENDPOINTS` of the run (comma-separated; realrun --trainers prints them)")
	fs.StringVar(&o.Store, "store", "", "the run's shared store: its work `DIR`, on a filesystem every trainer sees (not for a run through an object store, --objects: the store holds all a trainer needs)")
	fs.StringVar(&o.Prefix, "run", "", "the run's etcd `PREFIX` (realrun --trainers prints it)")
	fs.IntVar(&o.ID, "id", -1, "this trainer's id: 0, 1, …, unique among the run's live trainers")
	fs.DurationVar(&o.Lease, "lease", 5*time.Second, "this trainer's lease: silent this long, it loses its bucket to the pool")
	wide := cli.WideFlag(fs)
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun trainer --etcd ENDPOINTS [--store DIR] --run PREFIX --id N",
		Summary: "Joins a distributed run as one trainer: takes buckets from the lock server in etcd, partitions through the run's object store (with this machine's credentials: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or ~/.aws/credentials) or its shared work directory, until the run is done.",
		Groups: []cli.FlagGroup{{Title: "The run", Flags: []string{"etcd", "store", "run", "id", "lease"}},
			{Title: "etcd's TLS and credentials (as etcdctl's)", Flags: etcdFlagNames[1:]},
			{Title: "Output", Flags: []string{"json", "csv"}}},
		Examples: []string{
			"realrun trainer --etcd http://10.0.0.1:2379 --store /shared/wd --run /tierflow/5f3a/1764170000 --id 2",
			"realrun trainer --etcd http://10.0.0.1:2379 --run /tierflow/5f3a/1764170000 --id 2   # a run through an object store",
			"TIERFLOW_ETCD_PASSWORD=… realrun trainer --etcd https://10.0.0.1:2379 --etcd-cacert ca.pem --etcd-user tierflow --store /shared/wd --run /tierflow/5f3a/1764170000 --id 2",
		},
	})
	format, err := cli.ParseFormat(fs, args, stdout)
	if err != nil {
		return err
	}
	switch {
	case ef.Endpoints == "":
		return cli.Usagef("--etcd: required (the endpoints realrun --trainers prints)")
	case o.Prefix == "":
		return cli.Usagef("--run: required (the prefix realrun --trainers prints)")
	case o.ID < 0:
		return cli.Usagef("--id %d: a trainer id ≥ 0", o.ID)
	case o.Lease < time.Second:
		return cli.Usagef("--lease %s: at least 1s", o.Lease)
	}
	if fi, err := os.Stat(o.Store); o.Store != "" && (err != nil || !fi.IsDir()) {
		return cli.Usagef("--store %s: not a directory", o.Store)
	}
	if o.Etcd, err = ef.client(); err != nil {
		return err
	}
	o.Log = cli.RenderWriter(stderr)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	eps, err := dist.RunTrainer(ctx, o)
	if errors.Is(err, dist.ErrNeedStore) {
		return cli.Usagef("--store: required: %w", err)
	}
	if errors.Is(err, dist.ErrDuplicate) || errors.Is(err, dist.ErrNoRun) || errors.Is(err, dist.ErrUnreachable) || errors.Is(err, dist.ErrNotShared) || errors.Is(err, dist.ErrObjectStore) || errors.Is(err, dist.ErrAuth) {
		return cli.Usagef("%w", err)
	} else if err != nil {
		return asUsage(err)
	}
	switch format {
	case cli.JSON:
		return cli.PrintJSON(stdout, eps)
	case cli.CSV:
		return trainerColumns.CSV(eps).CSV(stdout)
	}
	if len(eps) == 0 {
		fmt.Fprintln(stdout, "the run was already done")
		return nil
	}
	return trainerColumns.Select(*wide).Human(slices.Clip(eps)).Render(stdout)
}

// memberMain is `realrun etcd-member`: one member of the etcd cluster
// that realrun --trainers --etcd-members N starts, until SIGTERM or
// SIGINT.
func memberMain(args []string, stdout, stderr io.Writer) error {
	var m dist.Member
	fs := newFlagSet(prog + " etcd-member")
	fs.StringVar(&m.Name, "name", "", "the member's `NAME` in the cluster")
	fs.StringVar(&m.Dir, "data-dir", "", "its data `DIR`")
	fs.StringVar(&m.Client, "listen-client", "", "the `URL` it serves clients on")
	fs.StringVar(&m.Peer, "listen-peer", "", "the `URL` it serves its peers on")
	fs.StringVar(&m.Cluster, "initial-cluster", "", "every member's `NAME=URL,…` (their peer URLs)")
	cli.SetHelp(fs, cli.Help{
		Usage:   "realrun etcd-member --name NAME --data-dir DIR --listen-client URL --listen-peer URL --initial-cluster NAME=URL,…",
		Summary: "Runs one member of the etcd cluster that realrun --trainers N --etcd-members 3 starts (one process each), until SIGTERM or SIGINT.",
		Groups:  []cli.FlagGroup{{Title: "The member", Flags: []string{"name", "data-dir", "listen-client", "listen-peer", "initial-cluster"}}},
	})
	if err := cli.Parse(fs, args, stdout); err != nil {
		return err
	}
	for _, f := range []struct{ name, v string }{{"name", m.Name}, {"data-dir", m.Dir}, {"listen-client", m.Client}, {"listen-peer", m.Peer}, {"initial-cluster", m.Cluster}} {
		if f.v == "" {
			return cli.Usagef("--%s: required", f.name)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return dist.RunMember(ctx, m)
}

// signalContext is cancelled by the first SIGINT or SIGTERM, as
// signal.NotifyContext's, and code is then 128+signal (0 before), the
// exit status a run stopped by it ends with.
func signalContext() (ctx context.Context, code func() int, stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	var c atomic.Int32
	go func() {
		if s, ok := <-ch; ok {
			c.Store(int32(128 + int(s.(syscall.Signal))))
			cancel()
		}
	}()
	return ctx, func() int { return int(c.Load()) }, func() { signal.Stop(ch); close(ch); cancel() }
}

// trainersOf is "N trainers" of a run: every trainer that reported an
// epoch, those that joined from elsewhere too (the launcher's own when
// none reported).
func trainersOf(out dist.DistOutput) string {
	ids := map[int]bool{}
	for _, e := range out.Epochs {
		for _, tr := range e.Trainers {
			ids[tr.Trainer] = true
		}
	}
	n := max(len(ids), out.Trainers)
	if n == 1 {
		return "1 trainer"
	}
	return fmt.Sprintf("%d trainers", n)
}

// predictDistributed is dist's Predictor: the bridge's prediction of the
// run (validate.PredictDistributedRun) in dist's terms.
func predictDistributed(m store.Manifest, trainers, workers, epochs int, cal dist.Calibration, objects bool) ([]dist.Predicted, error) {
	eps, err := validate.PredictDistributedRun(m, trainers, workers, epochs, cal.EdgeSeconds, cal.StoreBytes, objects)
	if err != nil {
		return nil, err
	}
	out := make([]dist.Predicted, len(eps))
	for i, e := range eps {
		out[i] = dist.Predicted(e)
	}
	return out, nil
}
