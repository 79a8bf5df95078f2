package dist

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/tierflow/tierflow/internal/chrometrace"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/orderings"
	"github.com/tierflow/tierflow/orderings/lockserver"
	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/report"
	"github.com/tierflow/tierflow/workload"
)

// DistOptions are a distributed run's own settings: how many trainer
// processes to start here, which etcd to use, how long a trainer's lease
// lasts, and the command lines that run this program's trainers and
// etcd members.
type DistOptions struct {
	Trainers int
	// Etcd is an existing cluster to use (no endpoints: start one here,
	// Members).
	Etcd EtcdClient
	// Members is how many etcd members to start when Etcd names none: 0
	// or 1, one embedded in this process; more, that many processes of
	// their own (StartCluster), for tests and demonstrations. Either has
	// authentication enabled with a root password new for the run.
	Members int
	// MemberHosts are the addresses the members serve on, one each
	// (none: Listen); WrapMember, when set, wraps member i's command
	// line (to run it on a test host: ip netns exec …).
	MemberHosts []string
	WrapMember  func(i int, argv []string) []string
	// OnCluster, when set, is called with the cluster of Members > 1
	// and the run's prefix once its trainers start (tests kill members).
	OnCluster func(c *Cluster, prefix string)
	Lease     time.Duration
	// Argv is the command line that runs this program (`realrun`);
	// TrainerArgs and MemberArgs are what to append to it to run a
	// trainer (its arguments, and its environment's NAME=value entries)
	// or an etcd member (RunMember). The command that knows its flags
	// makes them.
	Argv        []string
	TrainerArgs func(TrainerJoin) (args, env []string)
	MemberArgs  func(Member) []string
	// Listen is the address the embedded etcd and object store serve on
	// ("": 127.0.0.1; the test hosts' gateway for trainers in network
	// namespaces).
	Listen string
	// Objects moves partitions and edges, the manifest and the degrees
	// through an S3-compatible object store instead of the shared
	// directory (nil): a user's store, or, Embedded, one served from this
	// process's memory on Listen. The trainers then need no work
	// directory.
	Objects *ObjectStore
	// Wrap, when set, wraps trainer id's command line (to run it on a
	// test host: ip netns exec …).
	Wrap func(id int, argv []string) []string
	// Compare also predicts the run with Predict (Predicted),
	// calibrating the engine and the store first.
	Compare bool
	Predict Predictor
	// Trace records the run as a Chrome trace (DistOutput.Trace): the
	// launcher's epochs, holds and checkpoints, every trainer's buckets,
	// transfers and waits.
	Trace bool
	// Stderr receives the stderr of the trainer and etcd member processes
	// started here, as they write it (nil: the log TrainDistributed is
	// given). The log gets the run's own notices, which may name fields
	// ({Overwrite}) for the command to render in its flags' words.
	Stderr io.Writer
}

// stderr is where the processes started here write their stderr.
func (d DistOptions) stderr(log io.Writer) io.Writer {
	if d.Stderr != nil {
		return d.Stderr
	}
	return log
}

// TrainerJoin is what a trainer needs to join a run: the etcd client
// (its password for the environment, never a command line), the store,
// the run's prefix, its id and lease.
type TrainerJoin struct {
	// ID is the trainer's (-1: any free one, in the command line printed
	// for trainers started elsewhere).
	ID   int
	Etcd EtcdClient
	// PasswordFile, when set, is a file holding Etcd.Password that the
	// trainer reads instead (the run's own etcd writes one in the store).
	PasswordFile string
	Store        string
	Prefix       string
	Lease        time.Duration
}

// DistOutput is a distributed run: the configuration, every trainer's
// figures by epoch, the epochs' times and the quality at the end.
type DistOutput struct {
	Dataset  string `json:"dataset"`
	Workdir  string `json:"workdir"`
	P        int    `json:"p"`
	Trainers int    `json:"trainers"`
	Model    string `json:"model"`
	// Objective is the loss and regularisation the trainers train with.
	Objective workload.Objective `json:"objective"`
	Dim       int                `json:"dim"`
	Etcd      string             `json:"etcd"`
	// Members is how many etcd members the run started (0: it used an
	// existing cluster).
	Members int    `json:"etcd_members,omitempty"`
	Prefix  string `json:"prefix"`
	// Objects is the object store's URL (s3://bucket/prefix; "": the
	// shared directory), ObjectsEndpoint its server ("": AWS S3), and
	// ObjectsEmbedded whether it was served from the launcher's memory.
	// The run's objects are under Objects/ObjectsRun, removed at the end.
	Objects         string `json:"objects,omitempty"`
	ObjectsEndpoint string `json:"objects_endpoint,omitempty"`
	ObjectsEmbedded bool   `json:"objects_embedded,omitempty"`
	ObjectsRun      string `json:"objects_run,omitempty"`
	TrainEdges      int64  `json:"train_edges"`
	// Epochs are, by epoch, every trainer's figures and the epoch's time
	// (the slowest trainer's).
	Epochs []DistEpoch `json:"epochs"`
	// Lost counts buckets handed back to the pool from trainers that died.
	Lost    int             `json:"lost"`
	Quality realrun.Quality `json:"quality"`
	MRR     float64         `json:"mrr"`
	// Failed lists trainers that exited with an error (the run completed
	// without them).
	Failed []string `json:"failed,omitempty"`
	// Calibration and Predicted, with --compare-sim: what the prediction
	// took from this machine, and the simulator's epochs.
	Calibration *Calibration `json:"calibration,omitempty"`
	Predicted   []Predicted  `json:"predicted,omitempty"`
	// Resumed is the epoch the run resumed after (0: from the start).
	Resumed int `json:"resumed,omitempty"`
	// Best, EarlyStop and StoppedEarly are as one machine's
	// (job.Output): the record of the validated epochs and the best, the
	// patience, and the epoch after which the run stopped early.
	Best         *store.Best `json:"best,omitempty"`
	EarlyStop    int         `json:"early_stop,omitempty"`
	StoppedEarly int         `json:"stopped_early,omitempty"`
	// Order says where the lock server's bucket order came from: "plan
	// FILE" (its priority), or "" for the trainers' affinity.
	Order string `json:"order,omitempty"`
	// Trace, with DistOptions.Trace, is the run as trace processes: the
	// launcher's, then one per trainer.
	Trace []chrometrace.Process `json:"-"`
}

// DistEpoch is one epoch of a distributed run: its time (the slowest
// trainer's), every trainer's figures, and, as one machine's epoch
// (realrun.Epoch), the loss summed over the trainers and the quality the
// launcher evaluated after it.
type DistEpoch struct {
	Epoch       int              `json:"epoch"`
	Seconds     float64          `json:"seconds"`
	Loss        float64          `json:"loss"`
	LossPerEdge float64          `json:"loss_per_edge"`
	Valid       *realrun.Quality `json:"valid"`
	Test        *realrun.Quality `json:"test"`
	// EvalProtocol and EvalSeconds are the evaluation's protocol and
	// wall time; CheckpointSeconds the time the launcher took to commit
	// the epoch's checkpoint.
	EvalProtocol      string  `json:"eval_protocol,omitempty"`
	EvalSeconds       float64 `json:"eval_seconds"`
	CheckpointSeconds float64 `json:"checkpoint_seconds"`
	// Before is how many of the epoch's buckets a checkpoint inside it
	// had trained when the run resumed from there (the trainers trained
	// the others, whose loss alone Loss sums, and LossPerEdge divides by
	// their edges); Within the buckets after which the launcher took a
	// checkpoint inside it.
	Before   int            `json:"before,omitempty"`
	Within   []int          `json:"within,omitempty"`
	Trainers []TrainerEpoch `json:"trainers"`
}

// TrainDistributed is `realrun --trainers N`: it prepares the work
// directory as training does, puts its partitions in the shared store,
// starts (or joins) etcd, starts N trainer processes (d.Argv) here, waits
// for the run to finish, commits its result as the work directory's next
// checkpoint and evaluates it.
// Cancelling ctx stops the trainers it started (SIGKILL) and the run; the
// store then holds every committed bucket.
func TrainDistributed(ctx context.Context, o job.Options, d DistOptions, log io.Writer) (DistOutput, error) {
	if d.Trainers < 1 {
		return DistOutput{}, inputerr.Errorf("{Trainers} %d: at least 1 trainer", d.Trainers)
	}
	if o.P < 2 {
		return DistOutput{}, inputerr.Errorf("{P} %d: several trainers share at least 2 partitions", o.P)
	}
	if o.C == 0 || o.C > o.P {
		o.C = 2
	}
	if d.TrainerArgs == nil || (d.Members > 1 && d.MemberArgs == nil) {
		return DistOutput{}, errors.New("distributed run: no command line for trainers or etcd members")
	}
	o.Distributed = true
	// An etcd that does not answer, or refuses the credentials, is
	// refused before the work directory is touched.
	var cli *clientv3.Client
	etcd := d.Etcd
	if len(etcd.Endpoints) > 0 {
		if d.Members > 0 {
			return DistOutput{}, inputerr.Errorf("etcd: an existing cluster or %d members started here, not both", d.Members)
		}
		var err error
		if cli, err = etcd.Connect(5 * time.Second); err != nil {
			return DistOutput{}, inputerr.Errorf("%w", err)
		}
		defer cli.Close()
		if err := CheckAccess(ctx, cli, etcd); err != nil {
			return DistOutput{}, inputerr.Errorf("%w", err)
		}
	}
	// So is an object store that refuses this process.
	var ob *Objects
	if d.Objects != nil && !d.Objects.Embedded {
		var err error
		if ob, err = ConnectObjects(ctx, *d.Objects, 10*time.Second); err != nil {
			return DistOutput{}, inputerr.Errorf("%w", err)
		}
	}
	x, err := job.Open(o, 2, log)
	if err != nil {
		return DistOutput{}, err
	}
	defer x.Close()
	cfg, st := x.Config, x.Store()
	out := DistOutput{Dataset: st.M.Source, Workdir: st.Dir, P: st.M.P, Trainers: d.Trainers, Model: string(cfg.Hyper.Model), Objective: cfg.Hyper.Objective, Dim: cfg.Hyper.Dim, TrainEdges: st.M.Train}
	sums, err := Prepare(st)
	if err != nil {
		return out, err
	}
	listen := d.Listen
	if listen == "" {
		listen = "127.0.0.1"
	}
	// The run's own etcd: its root password is new, in a file of the
	// work directory readable by this user only (trainers elsewhere on
	// the shared directory read it there; those started here get it in
	// their environment).
	passwordFile := ""
	var cluster *Cluster
	if cli == nil {
		tmp, err := os.MkdirTemp("", "tierflow-etcd-")
		if err != nil {
			return out, err
		}
		defer os.RemoveAll(tmp)
		if d.Members > 1 {
			cl, err := StartCluster(ctx, ClusterOptions{Members: d.Members, Dir: tmp, Hosts: d.MemberHosts, Listen: listen, Log: d.stderr(log), Wrap: d.WrapMember,
				Argv: func(m Member) []string { return append(slices.Clone(d.Argv), d.MemberArgs(m)...) }})
			if err != nil {
				return out, err
			}
			defer cl.Close()
			etcd = cl.Client
			out.Members = d.Members
			cluster = cl
		} else {
			srv, err := StartServer(tmp, listen, 0)
			if err != nil {
				return out, err
			}
			defer srv.Close()
			c0, err := Connect([]string{srv.Endpoint}, 5*time.Second)
			if err != nil {
				return out, err
			}
			pw, err := EnableAuth(ctx, c0)
			c0.Close()
			if err != nil {
				return out, err
			}
			etcd = EtcdClient{Endpoints: []string{srv.Endpoint}, User: "root", Password: pw}
			out.Members = 1
		}
		if cli, err = etcd.Connect(5 * time.Second); err != nil {
			return out, err
		}
		defer cli.Close()
		passwordFile = filepath.Join(FilesDir(st, ""), "etcd-password")
		if err := WritePassword(passwordFile, etcd.Password); err != nil {
			return out, err
		}
		defer os.Remove(passwordFile)
	}
	endpoints := strings.Join(etcd.Endpoints, ",")
	out.Etcd, out.Prefix = endpoints, NewPrefix(st)
	hyper, err := json.Marshal(cfg.Hyper)
	if err != nil {
		return out, err
	}
	blobs := DirBlobs(st)
	if d.Objects != nil {
		if d.Objects.Embedded {
			srv, err := StartObjectServer(listen, 0)
			if err != nil {
				return out, err
			}
			defer srv.Close()
			if ob, err = ConnectObjects(ctx, srv.Store(), 10*time.Second); err != nil {
				return out, err
			}
		}
		out.Objects, out.ObjectsEndpoint, out.ObjectsEmbedded = ob.Store.URL(), ob.Store.Endpoint, ob.Store.Embedded
		out.ObjectsRun = ob.key(out.Prefix)
		blobs = ob.Blobs(out.Prefix, st)
		// The run's objects go once its result is in the work directory
		// (each epoch's is, as it ends).
		defer func() {
			if err := ob.RemoveRun(context.WithoutCancel(ctx), out.Prefix); err != nil {
				fmt.Fprintf(log, "warning: %v (the run's objects are under %s/%s)\n", err, ob.Store.URL(), out.ObjectsRun)
			}
		}()
		if err := Upload(blobs, st); err != nil {
			return out, err
		}
	}
	if d.Compare {
		cal := Calibration{}
		if cal.EdgeSeconds, err = CalibrateEngine(x); err != nil {
			return out, err
		}
		if cal.StoreBytes, err = calibrateStore(blobs, st); err != nil {
			return out, err
		}
		out.Calibration = &cal
	}
	first, within, err := x.Start(log)
	if err != nil {
		return out, err
	}
	out.Resumed = first - 1
	if x.Stopped() || first > o.Epochs {
		noteSelection(x, &out)
		return out, nil // stopped early, or trained, already
	}
	rc := Config{Run: out.Prefix, Epochs: o.Epochs, Seed: cfg.Spec.Seed, Hyper: hyper, Objects: objectStore(ob), First: first, Hold: true,
		Engine: o.Engine, Buffer: o.Buffer, Trace: d.Trace, PauseEvery: o.CheckpointEvery.Buckets}
	if within != nil {
		rc.Within = within.Lock
	}
	if o.PlanFile != "" {
		// The saved Plan's bucket order is the lock server's priority:
		// a bucket goes out in its turn when its partitions are free.
		plan := cfg.Plans[0]
		if err := checkOrder(st.M.P, plan.Buckets); err != nil {
			return out, inputerr.Errorf("{PlanFile} %s: %w", o.PlanFile, err)
		}
		rc.Order, out.Order = plan.Buckets, "plan "+o.PlanFile
	}
	if err := Init(ctx, cli, out.Prefix, rc, st.M.P, sums); err != nil {
		return out, err
	}
	if err := seedRelations(ctx, cli, out.Prefix, x.Engine(), first, within != nil); err != nil {
		return out, err
	}
	// A trainer of a run through an object store needs no work
	// directory: the store has all it needs. Trainers started here get
	// the etcd password in their environment; the line for trainers
	// elsewhere names the file that holds it (the run's own etcd).
	// Nor does it see the work directory's password file: its line
	// takes the password in the environment and says where it is.
	store, hintFile, where := st.Dir, passwordFile, ""
	if ob != nil {
		store, hintFile = "", ""
		if passwordFile != "" {
			where = "; the password is the first line of " + passwordFile + " on this machine"
		}
	}
	join := TrainerJoin{ID: -1, Etcd: etcd, PasswordFile: hintFile, Store: store, Prefix: out.Prefix, Lease: d.Lease}
	args, env := d.TrainerArgs(join)
	var hint []string
	for _, e := range env { // names only: no password is printed
		name, _, _ := strings.Cut(e, "=")
		hint = append(hint, name+"=…")
	}
	hint = append(append(hint, "realrun"), args...)
	fmt.Fprintf(log, "etcd %s, run %s: starting %d trainers (join another with: %s%s)\n",
		endpoints, out.Prefix, d.Trainers, strings.Join(hint, " "), where)
	join.PasswordFile = ""
	tctx, stopTrainers := context.WithCancel(ctx)
	exited := make(chan []error, 1)
	l := &launcher{obs: Observer(cli, out.Prefix), cli: cli, st: st, eng: x.Engine(), every: o.CheckpointEvery, since: time.Now(), log: log, exited: exited}
	if ob != nil {
		l.blobs = blobs
	}
	if within != nil {
		l.lastK, l.before = within.Bucket, within.Bucket
	}
	go func() {
		exited <- Local(tctx, d.Trainers, func(id int) ([]string, []string) {
			j := join
			j.ID = id
			args, env := d.TrainerArgs(j)
			argv := append(slices.Clone(d.Argv), args...)
			if d.Wrap != nil {
				argv = d.Wrap(id, argv)
			}
			return argv, env
		}, d.stderr(log))
	}()
	if cluster != nil && d.OnCluster != nil {
		d.OnCluster(cluster, out.Prefix)
	}
	defer func() { // a launcher that fails stops its trainers
		stopTrainers()
		if !l.waited {
			<-exited
		}
	}()
	obs := l.obs
	var epochs []realrun.Epoch
	for {
		epochStart := time.Now()
		s, err := l.waitHeld(ctx)
		if err != nil {
			return out, err
		}
		l.span("epochs", fmt.Sprintf("epoch %d", s.Epoch), epochStart, time.Now())
		// The launcher's part of the epoch, as one machine's after its
		// epoch: a checkpoint, the evaluation, the best epoch.
		if ob != nil {
			if err := Download(blobs, st, s.Files); err != nil {
				return out, err
			}
		}
		t0 := time.Now()
		if err := retryEtcd(ctx, func(ctx context.Context) error { return CommitEpoch(ctx, cli, out.Prefix, st, x.Engine(), s) }); err != nil {
			return out, fmt.Errorf("distributed run: epoch %d: %w", s.Epoch, err)
		}
		ep := realrun.Epoch{Epoch: s.Epoch}
		t1 := time.Now()
		ep.CheckpointSeconds = t1.Sub(t0).Seconds()
		l.span("launcher", fmt.Sprintf("checkpoint after epoch %d", s.Epoch), t0, t1)
		stop, err := x.AfterEpoch(&ep)
		if err != nil {
			return out, err
		}
		if ep.EvalSeconds > 0 {
			l.span("launcher", fmt.Sprintf("evaluate epoch %d", s.Epoch), t1, time.Now())
		}
		epochs = append(epochs, ep)
		if err := retryEtcd(ctx, func(ctx context.Context) error {
			// A release whose answer was lost with a member is done.
			if now, _, err := obs.State(ctx); err != nil || now.Epoch > s.Epoch || now.Done() {
				return err
			}
			_, err := obs.Release(ctx, stop || s.Epoch >= o.Epochs)
			return err
		}); err != nil {
			return out, err
		}
		l.span("holds", fmt.Sprintf("hold after epoch %d", s.Epoch), t0, time.Now())
		l.since, l.lastK = time.Now(), 0
		compact(ctx, l.obs, cli)
		if stop || s.Epoch >= o.Epochs {
			break
		}
	}
	errs := <-exited
	l.waited = true
	for _, e := range errs {
		if e != nil {
			out.Failed = append(out.Failed, e.Error())
		}
	}
	if err := ctx.Err(); err != nil {
		return out, fmt.Errorf("distributed run stopped (%w); the store holds every committed bucket", err)
	}
	var s RunState
	var reports map[int][]TrainerEpoch
	if err := retryEtcd(ctx, func(ctx context.Context) (err error) {
		if s, _, err = obs.State(ctx); err != nil {
			return err
		}
		reports, err = Reports(ctx, cli, out.Prefix)
		return err
	}); err != nil {
		return out, err
	}
	out.Lost = s.Lost
	for _, ep := range epochs {
		de := DistEpoch{Epoch: ep.Epoch, Trainers: reports[ep.Epoch], Valid: ep.Valid, Test: ep.Test, EvalProtocol: ep.EvalProtocol, EvalSeconds: ep.EvalSeconds, CheckpointSeconds: ep.CheckpointSeconds,
			Within: l.within[ep.Epoch]}
		if ep.Epoch == first {
			de.Before = l.before
		}
		var edges int64
		for _, t := range de.Trainers {
			de.Seconds = max(de.Seconds, t.Seconds)
			de.Loss += t.Loss
			edges += t.Edges
		}
		de.LossPerEdge = de.Loss / float64(max(st.M.Train, 1))
		if de.Before > 0 {
			// The loss of the buckets before the checkpoint was not
			// kept: per edge is over the edges trained after it.
			de.LossPerEdge = de.Loss / float64(max(edges, 1))
		}
		out.Epochs = append(out.Epochs, de)
		if ep.Test != nil {
			out.Quality, out.MRR = *ep.Test, ep.Test.MRR
		}
	}
	if d.Trace {
		out.Trace = l.trace(fmt.Sprintf("launcher: %d trainers (realrun, %s)", d.Trainers, out.Dataset), out.Epochs)
	}
	noteSelection(x, &out)
	if err := x.Export(log); err != nil {
		return out, err
	}
	if out.Calibration != nil && d.Predict != nil {
		if out.Predicted, err = d.Predict(st.M, d.Trainers, cfg.Hyper.Workers, len(out.Epochs), *out.Calibration, ob != nil); err != nil {
			return out, err
		}
	}
	return out, nil
}

// checkOrder checks that a Plan's buckets are every bucket of p
// partitions once: an order the lock server can follow.
func checkOrder(p int, buckets []orderings.Bucket) error {
	ls, err := lockserver.NewEpoch(p, false)
	if err != nil {
		return err
	}
	return ls.SetOrder(buckets)
}

// launcher is the launcher's side of a run: it waits for the epochs'
// ends, checkpoints inside epochs as asked, and records what it did.
type launcher struct {
	obs   *Coord
	cli   *clientv3.Client
	st    *store.Store
	eng   realrun.Engine
	blobs Blobs // nil: partitions are in the shared work directory
	log   io.Writer
	// every is how often to checkpoint inside an epoch; since the last
	// checkpoint's time and lastK its buckets into the epoch (0 at the
	// epoch's start); before the buckets the run resumed after.
	every         workload.CheckpointInterval
	since         time.Time
	lastK, before int
	// within are, by epoch, the buckets after which a checkpoint inside
	// it was taken.
	within map[int][]int
	spans  []report.Span
	exited <-chan []error
	waited bool
	errs   []error
}

// span records, in Unix seconds, what the launcher did.
func (l *launcher) span(track, name string, from, to time.Time) {
	l.spans = append(l.spans, report.Span{Track: track, Name: name, Start: unix(from), End: unix(to)})
}

// waitHeld waits until the run is held after an epoch (RunState.Held)
// and returns its state, checkpointing inside the epoch as asked on the
// way; the trainers exiting before (all of them) is an error.
func (l *launcher) waitHeld(ctx context.Context) (RunState, error) {
	for {
		var s RunState
		var rev int64
		if err := retryEtcd(ctx, func(ctx context.Context) (err error) { s, rev, err = l.obs.State(ctx); return err }); err != nil {
			return s, l.stopped(ctx, err)
		}
		if s.Held() {
			return s, nil
		}
		if err := l.alive(ctx, s); err != nil {
			return s, err
		}
		if s.Pause || l.due(s) {
			if err := l.checkpointWithin(ctx); err != nil {
				return s, l.stopped(ctx, err)
			}
			continue
		}
		l.obs.Wait(ctx, rev, 200*time.Millisecond)
	}
}

// alive fails when every trainer has exited (after one last look at
// the state) or ctx is done.
func (l *launcher) alive(ctx context.Context, s RunState) error {
	if l.waited {
		return fmt.Errorf("distributed run: every trainer exited before epoch %d was trained (%d buckets left): %w", s.Epoch, s.Lock.Remaining(), errors.Join(l.errs...))
	}
	select {
	case l.errs = <-l.exited:
		l.waited = true
	case <-ctx.Done():
		return l.stopped(ctx, nil)
	default:
	}
	return nil
}

// stopped is err, or, once ctx is done, that the run was stopped.
func (l *launcher) stopped(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("distributed run stopped (%w); the store holds every committed bucket", ctx.Err())
	}
	return err
}

// due reports whether a checkpoint inside the epoch is due by time: the
// interval has passed since the last one and a bucket has been trained
// since. (One every N buckets the lock server asks for itself:
// RunState.PauseEvery.)
func (l *launcher) due(s RunState) bool {
	return l.every.Every > 0 && s.Trained() > l.lastK && s.Lock.Remaining() > 0 && time.Since(l.since) >= l.every.Every
}

// checkpointWithin pauses the lock server, waits for the buckets in
// flight to be committed, commits the work directory's checkpoint inside
// the epoch (CommitWithin) and lets the trainers go on.
func (l *launcher) checkpointWithin(ctx context.Context) error {
	t0 := time.Now()
	ok, s, err := l.obs.Pause(ctx)
	if err != nil || !ok {
		return err
	}
	for !s.Paused() {
		var rev int64
		if s, rev, err = l.obs.State(ctx); err != nil {
			return err
		}
		if s.Paused() {
			break
		}
		if err := l.alive(ctx, s); err != nil {
			return err
		}
		if l.waited {
			return fmt.Errorf("distributed run: every trainer exited with buckets of epoch %d in flight: %w", s.Epoch, errors.Join(l.errs...))
		}
		l.obs.Wait(ctx, rev, 200*time.Millisecond)
	}
	t1 := time.Now()
	l.span("launcher", fmt.Sprintf("pause inside epoch %d: the buckets in flight finish", s.Epoch), t0, t1)
	k := s.Trained()
	if l.blobs != nil {
		if err := Download(l.blobs, l.st, s.Files); err != nil {
			return err
		}
	}
	if err := CommitWithin(ctx, l.cli, l.obs.prefix, l.st, l.eng, s); err != nil {
		return fmt.Errorf("distributed run: checkpoint inside epoch %d: %w", s.Epoch, err)
	}
	if err := l.obs.Unpause(ctx); err != nil {
		return err
	}
	l.span("launcher", fmt.Sprintf("checkpoint inside epoch %d after %d buckets", s.Epoch, k), t1, time.Now())
	l.span("holds", fmt.Sprintf("pause inside epoch %d", s.Epoch), t0, time.Now())
	fmt.Fprintf(l.log, "checkpoint inside epoch %d after %d of %d buckets\n", s.Epoch, k, len(s.Lock.Done))
	if l.within == nil {
		l.within = map[int][]int{}
	}
	l.within[s.Epoch] = append(l.within[s.Epoch], k)
	l.since, l.lastK = time.Now(), k
	return nil
}

// trace is the run as trace processes: the launcher's spans (its
// epochs, holds, checkpoints and evaluations), then every trainer's
// (its buckets, transfers and waits), in seconds from the first.
func (l *launcher) trace(name string, epochs []DistEpoch) []chrometrace.Process {
	byTrainer := map[int][]report.Span{}
	t0 := math.Inf(1)
	for _, sp := range l.spans {
		t0 = min(t0, sp.Start)
	}
	for i := range epochs {
		for j := range epochs[i].Trainers {
			tr := &epochs[i].Trainers[j]
			for _, sp := range tr.Spans {
				t0 = min(t0, sp.Start)
			}
			byTrainer[tr.Trainer] = append(byTrainer[tr.Trainer], tr.Spans...)
			tr.Spans = nil // in the trace, not the output
		}
	}
	rel := func(spans []report.Span) report.Trace {
		out := make([]report.Span, len(spans))
		for i, sp := range spans {
			sp.Start, sp.End = sp.Start-t0, sp.End-t0
			out[i] = sp
		}
		return report.Trace{Spans: out}
	}
	procs := []chrometrace.Process{{Name: name, Trace: rel(l.spans)}}
	for _, id := range slices.Sorted(maps.Keys(byTrainer)) {
		procs = append(procs, chrometrace.Process{Name: fmt.Sprintf("trainer %d", id), Trace: rel(byTrainer[id])})
	}
	return procs
}

// seedRelations puts a resumed run's relation parameters — the engine's
// state, restored from the checkpoint — into etcd, where the trainers
// take them from; a run from the start (not from a checkpoint inside
// its first epoch) leaves them to the trainers' identical
// initialisation.
func seedRelations(ctx context.Context, cli *clientv3.Client, prefix string, eng realrun.Engine, first int, within bool) error {
	sf, ok := eng.(realrun.Stateful)
	if first == 1 && !within || !ok || len(eng.Relations()) == 0 {
		return nil
	}
	state := sf.State()
	return Observer(cli, prefix).AddRelations(ctx, state, make([]float32, len(state)))
}

// noteSelection puts the run's choice of its best epoch into its output.
func noteSelection(x *job.Opened, out *DistOutput) {
	if sel := x.Selection(); sel != nil {
		b := sel.Best
		out.Best, out.EarlyStop, out.StoppedEarly = &b, sel.Patience, b.StoppedAt
	}
}

// retryEtcd runs the launcher's etcd operation op until it succeeds,
// riding out a member of the cluster lost (a leader elected again, the
// client moved to another member) for up to 30 s, as the trainers do.
func retryEtcd(ctx context.Context, op func(ctx context.Context) error) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		octx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := op(octx)
		cancel()
		if err == nil || ctx.Err() != nil || time.Now().After(deadline) || !transient(err) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// transient reports whether err is etcd unavailable for a while: no
// leader, a member gone, an operation timed out.
func transient(err error) bool {
	if errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	var ee rpctypes.EtcdError
	if errors.As(err, &ee) {
		return ee.Code() == codes.Unavailable || ee.Code() == codes.DeadlineExceeded
	}
	if st, ok := status.FromError(err); ok {
		return st.Code() == codes.Unavailable || st.Code() == codes.DeadlineExceeded
	}
	return false
}

// objectStore is the store ob is connected to (nil: none).
func objectStore(ob *Objects) *ObjectStore {
	if ob == nil {
		return nil
	}
	s := ob.Store
	return &s
}

// compact drops etcd's history up to the run's state as it is now: the
// relation parameters are rewritten every few thousand edges, and a
// cluster keeps every version until compacted. Best effort: a user that
// may not compact leaves it to the cluster's own auto-compaction.
func compact(ctx context.Context, obs *Coord, cli *clientv3.Client) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, rev, err := obs.State(ctx); err == nil {
		cli.Compact(ctx, rev)
	}
}
