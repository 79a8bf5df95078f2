package gnn

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/memory"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// The purposes of the random streams, each seeded from Options.Seed.
const (
	purposeInit uint64 = iota + 1
	purposeShuffle
	purposeSample
	purposeDropout
	purposeSplit
)

// derive is the seed of one purpose's stream: SplitMix64 of the seed
// and the purpose, so that neighbouring seeds give unrelated streams.
func derive(seed, purpose uint64) uint64 {
	z := seed + purpose*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

// stream is the position of a batch's stream: its epoch and batch, so
// that a batch's random choices depend on (seed, epoch, batch) alone.
func stream(epoch, batch int) uint64 { return uint64(epoch)<<32 | uint64(uint32(batch)) }

// Train trains a model as o says: it reads the graph (o.Files or
// o.Graph), builds the model from seeded initial parameters — or, with
// o.Resume, continues the work directory's last checkpoint — and trains
// o.Epochs epochs of shuffled mini-batches of training nodes, each
// sampled one batch ahead of the compute, with Adam on the mean
// cross-entropy; after every o.EvalEvery-th epoch and the last it runs
// layer-wise inference over the whole graph for the validation and test
// accuracy, and with a work directory it checkpoints after every epoch.
// A stop (o.Stop) returns what completed and a *StopError. Bad options
// are *FieldErrors, a work directory that cannot be used a
// *WorkdirError, bad input files inputerr.Errors.
func Train(o Options) (*Result, error) {
	o = o.withDefaults()
	if err := o.Check(); err != nil {
		return nil, err
	}
	log := o.Log
	if log == nil {
		log = io.Discard
	}
	workers := o.Workers
	if workers == 0 {
		workers = runtime.NumCPU()
	}
	res := &Result{Workdir: o.Workdir, Settings: Settings{Model: o.Model, Layers: o.Layers, Hidden: o.Hidden, Heads: o.Heads,
		Fanouts: FormatFanouts(o.Fanouts), Batch: o.Batch, Dropout: o.Dropout, LR: o.LR, Epochs: o.Epochs, Seed: o.Seed,
		Workers: workers, EvalEvery: o.EvalEvery, Directed: o.Files.Directed,
		MicroBatches: o.MicroBatches, MicroBatchMemory: o.MicroBatchMemory, MicroSplit: string(o.splitMethod())}, Epochs: []Epoch{}}
	var wd *openedDir
	if o.Workdir != "" {
		var err error
		if wd, err = openDir(o, log); err != nil {
			return nil, err
		}
		defer wd.unlock()
	}
	g, stats := o.Graph, data.Stats{}
	if g == nil {
		var err error
		if g, stats, err = data.Load(o.Files); err != nil {
			return nil, &inputerr.Error{Err: err}
		}
	}
	res.Graph = summariseGraph(g, stats)
	if len(g.Train) == 0 {
		return nil, inputerr.Errorf("no training nodes: the graph has none labelled in its training split")
	}
	if len(g.Classes) < 2 {
		where := "the graph"
		if o.Files.Labels != "" {
			where = o.Files.Labels
		}
		return nil, inputerr.Errorf("%s: %d label class: node classification needs at least 2", where, len(g.Classes))
	}
	spec := specOf(o, g)
	if err := spec.Check(); err != nil {
		return nil, inputerr.Errorf("model: %w", err)
	}
	nn.Workers = workers
	m, err := nn.New(spec, derive(o.Seed, purposeInit))
	if err != nil {
		return nil, err
	}
	adam := nn.NewAdam(m.Params(), o.LR)
	for _, p := range m.Params() {
		res.Params += len(p.W)
	}
	t := newTrainer(o, g, spec, m, adam, workers)
	first := 1
	if wd != nil && wd.ckpt != nil {
		first = wd.ckpt.Epoch + 1
	}
	if err := t.fits(first); err != nil {
		return nil, err
	}
	if wd != nil {
		if wd.ckpt != nil {
			if err := m.Load(bytes.NewReader(wd.ckpt.params)); err != nil {
				return nil, &WorkdirError{Kind: Unreadable, Dir: wd.dir, Err: fmt.Errorf("checkpoint parameters: %w", err)}
			}
			if err := adam.Load(bytes.NewReader(wd.ckpt.adam)); err != nil {
				return nil, &WorkdirError{Kind: Unreadable, Dir: wd.dir, Err: fmt.Errorf("checkpoint optimiser: %w", err)}
			}
			res.Epochs = append(res.Epochs, wd.ckpt.Records...)
			first, res.Resumed = wd.ckpt.Epoch+1, wd.ckpt.Epoch
			if first > o.Epochs {
				fmt.Fprintf(log, "nothing left to train: %s is trained through epoch %d, the epochs asked for (they count the total: ask for more to train on)\n", wd.dir, wd.ckpt.Epoch)
			} else {
				fmt.Fprintf(log, "resuming after epoch %d (checkpoint verified)\n", wd.ckpt.Epoch)
			}
		} else if err := wd.start(o, spec); err != nil {
			return nil, err
		}
	}
	if o.SaveBlocks != "" {
		if err := os.MkdirAll(o.SaveBlocks, 0o755); err != nil {
			return nil, inputerr.Errorf("blocks directory: %w", err)
		}
	}
	if o.Loaded != nil {
		o.Loaded(res)
	}
	for e := first; e <= o.Epochs; e++ {
		ep, err := t.epoch(e)
		if err != nil {
			res.summarise()
			return res, err
		}
		if (e%o.EvalEvery == 0 || e == o.Epochs) && len(g.Valid)+len(g.Test) > 0 {
			t.evaluate(&ep)
		}
		res.Epochs = append(res.Epochs, ep)
		if wd != nil {
			if err := writeCheckpoint(wd.dir, e, res.Epochs, m, adam); err != nil {
				res.summarise()
				return res, err
			}
		}
	}
	res.summarise()
	return res, nil
}

// specOf is the model o trains on g.
func specOf(o Options, g *data.Graph) nn.Spec {
	return nn.Spec{Model: o.Model, In: g.F, Hidden: o.Hidden, Classes: len(g.Classes), Layers: o.Layers, Heads: o.Heads, Dropout: o.Dropout}
}

// trainer holds a run's model, optimiser and the buffers its batches
// reuse. Two samplers, feature and label buffers (and micro-batch
// builders and micro-batches) alternate between batches, so that the
// next batch is sampled, split and gathered while this one computes.
type trainer struct {
	o        Options
	g        *data.Graph
	spec     nn.Spec
	m        *nn.Model
	adam     *nn.Adam
	workers  int
	samplers [2]*block.Sampler
	batches  [2]*block.Batch
	pcg      [2]*rand.PCG
	rng      [2]*rand.Rand
	x        [2][]float32
	y        [2][]int32
	builders [2]*split.Builder
	micro    [2][]microBatch
	dropPCG  *rand.PCG
	dropRng  *rand.Rand
	order    []int32
	classes  int
}

// microBatch is a micro-batch with its input features and output labels
// gathered.
type microBatch struct {
	b *block.Batch
	x []float32
	y []int32
}

func newTrainer(o Options, g *data.Graph, spec nn.Spec, m *nn.Model, adam *nn.Adam, workers int) *trainer {
	t := &trainer{o: o, g: g, spec: spec, m: m, adam: adam, workers: workers, classes: len(g.Classes), order: make([]int32, len(g.Train))}
	for p := range t.samplers {
		t.samplers[p] = block.NewSampler(g, o.Fanouts)
		t.pcg[p] = rand.NewPCG(0, 0)
		t.rng[p] = rand.New(t.pcg[p])
		if o.micro() {
			t.builders[p] = split.NewBuilder()
		}
	}
	t.dropPCG = rand.NewPCG(0, 0)
	t.dropRng = rand.New(t.dropPCG)
	return t
}

// prepared is a batch sampled, with its input features and labels
// gathered — or, split, its micro-batches with theirs.
type prepared struct {
	b *block.Batch
	x []float32
	y []int32
	// micro are the batch's micro-batches (nil: the batch trains whole).
	micro []microBatch
	// microInputs are the micro-batches' input nodes, summed (the
	// batch's own when it trains whole); peak the largest estimated
	// step of the batch or its micro-batches.
	microInputs int64
	peak        int64
	// seconds sampling and gathering, splitSeconds splitting.
	seconds, splitSeconds float64
	err                   error
}

// shuffle orders the training nodes for epoch e.
func (t *trainer) shuffle(e int) {
	copy(t.order, t.g.Train)
	shuffleInto(t.order, t.o.Seed, e)
}

// prepare samples batch i of epoch e into the buffers of slot p, splits
// it when the options say so, and gathers the features and labels.
func (t *trainer) prepare(e, i, p int) prepared {
	o, g := t.o, t.g
	start := time.Now()
	n := len(t.order)
	seeds := t.order[i*o.Batch : min((i+1)*o.Batch, n)]
	t.pcg[p].Seed(SampleState(o.Seed, e, i))
	b := t.samplers[p].SampleInto(t.batches[p], seeds, t.rng[p])
	t.batches[p] = b
	s0 := time.Now()
	parts, peak, err := t.split(b, e, i)
	if err != nil {
		return prepared{err: err}
	}
	pb := prepared{b: b, peak: peak}
	if len(parts) <= 1 {
		if o.micro() {
			pb.splitSeconds = time.Since(s0).Seconds()
		}
		t.x[p] = g.Gather(t.x[p], b.Input(), t.workers)
		t.y[p] = g.Labels(t.y[p], b.Output())
		pb.x, pb.y, pb.microInputs = t.x[p], t.y[p], int64(len(b.Input()))
		pb.seconds = time.Since(start).Seconds() - pb.splitSeconds
		return pb
	}
	for len(t.micro[p]) < len(parts) {
		t.micro[p] = append(t.micro[p], microBatch{})
	}
	pb.micro = t.micro[p][:len(parts)]
	for j, outs := range parts {
		mb := &pb.micro[j]
		mb.b = t.builders[p].Micro(b, outs, mb.b)
		pb.microInputs += int64(len(mb.b.Input()))
	}
	if o.MicroBatches > 1 { // a budget's plan carries its peak
		for j := range pb.micro {
			pb.peak = max(pb.peak, memory.Batch(t.spec, pb.micro[j].b).Need())
		}
	}
	pb.splitSeconds = time.Since(s0).Seconds()
	for j := range pb.micro {
		mb := &pb.micro[j]
		mb.x = g.Gather(mb.x, mb.b.Input(), t.workers)
		mb.y = g.Labels(mb.y, mb.b.Output())
	}
	pb.seconds = time.Since(start).Seconds() - pb.splitSeconds
	return pb
}

// split returns the output positions of b's micro-batches (nil: b
// trains whole) and, when it knows it, the largest estimated step: with
// a fixed count, split.Split into that many (at most one per output
// node); with a budget, memory.Fit's fewest that fit; without either,
// none (the peak is then b's estimate).
func (t *trainer) split(b *block.Batch, e, i int) ([][]int32, int64, error) {
	o := t.o
	seed := SplitSeed(o.Seed, e, i)
	outs := len(b.Output())
	switch {
	case o.MicroBatches > 1:
		k := min(o.MicroBatches, outs)
		if k <= 1 {
			return nil, memory.Batch(t.spec, b).Need(), nil
		}
		parts, err := split.Split(b, k, o.splitMethod(), seed)
		if err != nil {
			return nil, 0, fmt.Errorf("epoch %d, batch %d: split into %d micro-batches: %w", e, i+1, k, err)
		}
		return parts, 0, nil
	case o.MicroBatchMemory > 0:
		plan, err := memory.Fit(t.spec, b, o.MicroBatchMemory, o.splitMethod(), seed)
		var be *memory.BudgetError
		if errors.As(err, &be) {
			return nil, 0, &FieldError{Field: "micro-batch-memory", Value: strconv.FormatInt(o.MicroBatchMemory, 10), Err: be,
				Msg: fmt.Sprintf("too small: batch %d of epoch %d needs at least %s (%d bytes) in its largest micro-batch, however it is split (down to one output node each)",
					i+1, e, devices.Bytes(be.Need).Approx(), be.Need)}
		}
		if err != nil {
			return nil, 0, fmt.Errorf("epoch %d, batch %d: micro-batches within %d bytes: %w", e, i+1, o.MicroBatchMemory, err)
		}
		if plan.K <= 1 {
			return nil, plan.Whole.Need(), nil
		}
		return plan.Parts, plan.Peak.Need(), nil
	}
	return nil, memory.Batch(t.spec, b).Need(), nil
}

// fits checks, before the work directory records the run, that a budget
// (Options.MicroBatchMemory) fits the first batch the run trains, so that
// a budget too small for any split is refused before any work; a later
// batch that needs more stops the run when it comes.
func (t *trainer) fits(first int) error {
	if t.o.MicroBatches > 1 || t.o.MicroBatchMemory <= 0 || first > t.o.Epochs {
		return nil
	}
	t.shuffle(first)
	return t.prepare(first, 0, 0).err
}

// epoch trains epoch e over every training node once.
func (t *trainer) epoch(e int) (Epoch, error) {
	o := t.o
	t.shuffle(e)
	n := len(t.order)
	nb := (n + o.Batch - 1) / o.Batch
	ready, quit := make(chan prepared), make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(ready)
		for i := 0; i < nb; i++ {
			pb := t.prepare(e, i, i&1)
			select {
			case ready <- pb:
			case <-quit:
				return
			}
			if pb.err != nil {
				return
			}
		}
	}()
	defer func() {
		close(quit)
		wg.Wait()
	}()

	ep := Epoch{Epoch: e, Batches: nb}
	var saved *blockFile
	if o.SaveBlocks != "" {
		var err error
		if saved, err = newBlockFile(o.SaveBlocks, e, nb); err != nil {
			return ep, err
		}
		defer saved.abort()
	}
	start := time.Now()
	var lossSum float64
	var correct, done int64
	for i := 0; i < nb; i++ {
		if stopped(o.Stop) {
			return ep, &StopError{Epochs: e - 1, Workdir: o.Workdir}
		}
		w0 := time.Now()
		pb := <-ready
		ep.StallSeconds += time.Since(w0).Seconds()
		if pb.err != nil {
			return ep, pb.err
		}
		ep.SampleSeconds += pb.seconds
		ep.SplitSeconds += pb.splitSeconds
		for l := range pb.b.Blocks {
			ep.SampledEdges += int64(len(pb.b.Blocks[l].Nbr))
		}
		ep.InputNodes += int64(len(pb.b.Input()))
		ep.MicroInputNodes += pb.microInputs
		ep.MicroBatches += max(len(pb.micro), 1)
		ep.MaxMicroBatches = max(ep.MaxMicroBatches, len(pb.micro), 1)
		ep.PeakBytes = max(ep.PeakBytes, pb.peak)
		if saved != nil {
			if err := saved.w.Write(pb.b); err != nil {
				return ep, fmt.Errorf("%s: %w", saved.path, err)
			}
		}
		if pb.micro == nil {
			ep.FLOPs += t.m.FLOPs(pb.b)
		}
		for j := range pb.micro {
			ep.FLOPs += t.m.FLOPs(pb.micro[j].b)
		}
		c0 := time.Now()
		rows := len(pb.b.Output())
		if pb.micro == nil {
			t.dropPCG.Seed(derive(o.Seed, purposeDropout), stream(e, i))
			loss, right := t.m.TrainStep(pb.b, pb.x, pb.y, 1, t.dropRng)
			lossSum += loss * float64(rows)
			correct += int64(right)
		} else {
			// Every micro-batch draws the batch's dropout (the masks are
			// per node), weighted by its share of the batch's outputs.
			for j := range pb.micro {
				mb := &pb.micro[j]
				t.dropPCG.Seed(derive(o.Seed, purposeDropout), stream(e, i))
				loss, right := t.m.TrainStep(mb.b, mb.x, mb.y, float64(len(mb.y))/float64(rows), t.dropRng)
				lossSum += loss * float64(len(mb.y))
				correct += int64(right)
			}
		}
		t.adam.Step(t.m.Params())
		t.m.ZeroGrad()
		ep.ComputeSeconds += time.Since(c0).Seconds()
		done += int64(rows)
		if o.Progress != nil {
			secs := time.Since(start).Seconds()
			o.Progress(Progress{Epoch: e, Epochs: o.Epochs, Batch: i + 1, Batches: nb, Nodes: done, Seconds: secs,
				Loss: lossSum / float64(done), NodesPerSecond: float64(done) / max(secs, 1e-9), Final: i+1 == nb})
		}
	}
	ep.RedundantInputNodes = ep.MicroInputNodes - ep.InputNodes
	ep.EpochSeconds = time.Since(start).Seconds()
	ep.Loss = lossSum / float64(max(done, 1))
	ep.TrainAcc = float64(correct) / float64(max(done, 1))
	if ep.EpochSeconds > 0 {
		ep.NodesPerSecond = float64(done) / ep.EpochSeconds
		ep.EdgesPerSecond = float64(ep.SampledEdges) / ep.EpochSeconds
	}
	if ep.ComputeSeconds > 0 {
		ep.FLOPsPerSecond = ep.FLOPs / ep.ComputeSeconds
	}
	if saved != nil {
		if err := saved.commit(); err != nil {
			return ep, err
		}
	}
	return ep, nil
}

// evaluate runs layer-wise inference over the whole graph and records the
// validation and test accuracy.
func (t *trainer) evaluate(ep *Epoch) {
	start := time.Now()
	_, logits := t.m.Infer(t.g, t.o.Batch)
	ep.ValidAcc = accuracy(logits, t.classes, t.g.Y, t.g.Valid)
	ep.TestAcc = accuracy(logits, t.classes, t.g.Y, t.g.Test)
	ep.EvalSeconds = time.Since(start).Seconds()
}

// accuracy is the share of nodes whose highest logit is their label (nil
// without nodes).
func accuracy(logits []float32, classes int, y []int32, nodes []int32) *float64 {
	if len(nodes) == 0 {
		return nil
	}
	right := 0
	for _, v := range nodes {
		row := logits[int(v)*classes : int(v+1)*classes]
		best := 0
		for c := 1; c < classes; c++ {
			if row[c] > row[best] {
				best = c
			}
		}
		if int32(best) == y[v] {
			right++
		}
	}
	acc := float64(right) / float64(len(nodes))
	return &acc
}

// stopped reports whether stop has been closed (a nil channel never is).
func stopped(stop <-chan struct{}) bool {
	select {
	case <-stop:
		return true
	default:
		return false
	}
}

// growFloats returns buf resized to n (not zeroed), reusing its array
// when it can.
func growFloats(buf []float32, n int) []float32 {
	if cap(buf) < n {
		return make([]float32, n)
	}
	return buf[:n]
}

// blockFile is an epoch's block file being written (--save-blocks):
// streamed into a temporary file beside it, renamed into place once the
// epoch's batches are all in.
type blockFile struct {
	path string
	f    *os.File
	w    *block.Writer
	done bool
}

func newBlockFile(dir string, epoch, batches int) (*blockFile, error) {
	path := filepath.Join(dir, block.EpochFile(epoch))
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	w, err := block.NewWriter(f, batches)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, fmt.Errorf("write %s: %w", path, err)
	}
	return &blockFile{path: path, f: f, w: w}, nil
}

// commit finishes the file and renames it into place.
func (b *blockFile) commit() error {
	err := b.w.Close()
	if err == nil {
		err = b.f.Chmod(0o644)
	}
	if cerr := b.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(b.f.Name(), b.path)
	}
	if err != nil {
		os.Remove(b.f.Name())
		return fmt.Errorf("write %s: %w", b.path, err)
	}
	b.done = true
	return nil
}

// abort removes the unfinished file (after commit: nothing).
func (b *blockFile) abort() {
	if !b.done {
		b.f.Close()
		os.Remove(b.f.Name())
	}
}
