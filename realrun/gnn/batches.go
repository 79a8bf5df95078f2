package gnn

import (
	"fmt"
	"math/rand/v2"
	"strconv"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// EpochOrder returns the training nodes in the order epoch e of a run
// seeded with seed trains them: train shuffled by the run's shuffle
// stream (a new slice; train is not changed).
func EpochOrder(train []int32, seed uint64, e int) []int32 {
	order := append([]int32(nil), train...)
	shuffleInto(order, seed, e)
	return order
}

// shuffleInto shuffles order (the training nodes) by the shuffle stream
// of epoch e.
func shuffleInto(order []int32, seed uint64, e int) {
	rand.New(rand.NewPCG(derive(seed, purposeShuffle), uint64(e))).Shuffle(len(order), func(i, j int) {
		order[i], order[j] = order[j], order[i]
	})
}

// SampleState is the PCG state (seed, stream) from which a run seeded
// with seed samples batch i (from 0) of epoch e (from 1).
func SampleState(seed uint64, e, i int) (uint64, uint64) {
	return derive(seed, purposeSample), stream(e, i)
}

// EpochBatches samples the batches epoch e of a run with options o
// trains on g — the same shuffle, seeds and neighbour samples as Train —
// and calls fn with each batch in order (b is reused after fn returns).
// The fanouts are o's, filled in as Train fills them.
func EpochBatches(g *data.Graph, o Options, e int, fn func(i int, b *block.Batch) error) error {
	o = o.withDefaults()
	if o.Batch < 1 {
		return fieldErr("batch", o.Batch, "must be at least 1")
	}
	order := EpochOrder(g.Train, o.Seed, e)
	s := block.NewSampler(g, o.Fanouts)
	pcg := rand.NewPCG(0, 0)
	rng := rand.New(pcg)
	var b *block.Batch
	for i := 0; i*o.Batch < len(order); i++ {
		pcg.Seed(SampleState(o.Seed, e, i))
		b = s.SampleInto(b, order[i*o.Batch:min((i+1)*o.Batch, len(order))], rng)
		if err := fn(i, b); err != nil {
			return err
		}
	}
	return nil
}

// ReadWorkdir returns the options a GNN work directory was trained with:
// its input files and the settings its StateFile records (model, layers,
// hidden, heads, fanouts, batch, dropout, learning rate, seed; the other
// fields are Defaults'), and every setting it records, by option name.
func ReadWorkdir(dir string) (Options, workdir.Settings, error) {
	st, err := readState(dir)
	if err != nil {
		return Options{}, nil, &WorkdirError{Kind: Unreadable, Dir: dir, Err: err}
	}
	if st == nil {
		return Options{}, nil, &WorkdirError{Kind: NotWorkdir, Dir: dir}
	}
	o := Defaults
	o.Files = st.Files.files()
	o.Model, o.Layers, o.Hidden, o.Heads, o.Dropout = st.Spec.Model, st.Spec.Layers, st.Spec.Hidden, st.Spec.Heads, st.Spec.Dropout
	set := st.Settings
	num := func(key string, dst *int) error {
		if v, ok := set[key]; ok {
			n, err := strconv.Atoi(v)
			if err != nil {
				return &WorkdirError{Kind: Unreadable, Dir: dir, Err: fmt.Errorf("%s: setting %s %q is not a number", StateFile, key, v)}
			}
			*dst = n
		}
		return nil
	}
	if err := num("batch", &o.Batch); err != nil {
		return Options{}, nil, err
	}
	if v, ok := set["seed"]; ok {
		if o.Seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			return Options{}, nil, &WorkdirError{Kind: Unreadable, Dir: dir, Err: fmt.Errorf("%s: setting seed %q is not a number", StateFile, v)}
		}
	}
	if v, ok := set["lr"]; ok {
		if o.LR, err = strconv.ParseFloat(v, 64); err != nil {
			return Options{}, nil, &WorkdirError{Kind: Unreadable, Dir: dir, Err: fmt.Errorf("%s: setting lr %q is not a number", StateFile, v)}
		}
	}
	o.Fanouts = nil
	if v, ok := set["fanouts"]; ok {
		if o.Fanouts, err = ParseFanouts(v); err != nil {
			return Options{}, nil, &WorkdirError{Kind: Unreadable, Dir: dir, Err: fmt.Errorf("%s: setting fanouts: %w", StateFile, err)}
		}
	}
	return o.withDefaults(), set, nil
}

// SplitSeed is the seed from which a run seeded with seed splits batch i
// (from 0) of epoch e into micro-batches (split.Split, memory.Fit).
func SplitSeed(seed uint64, e, i int) uint64 {
	return derive(derive(seed, purposeSplit), stream(e, i))
}
