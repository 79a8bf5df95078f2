package main

import (
	"flag"

	"github.com/tierflow/tierflow/realrun/job"
)

// shapeFlags registers the realrun flags that set the training shape
// (validate.ShapeFlags) and the graph's partition rows, with realrun's
// defaults, so that `realrun calibrate` with a run's flags measures the
// shape that run trains at.
func shapeFlags(fs *flag.FlagSet, o *job.Options) {
	*o = job.Defaults
	fs.StringVar(&o.Dataset, "dataset", job.Defaults.Dataset, "the run's generated dataset: "+presetNames()+" (its nodes ÷ --p are the partition rows measured)")
	fs.Float64Var(&o.Scale, "scale", 0, "the run's --scale (default: "+presetScales()+")")
	fs.StringVar(&o.Edges, "edges", "", "the run's edge `FILE` instead of --dataset (its work directory must hold it already: a run on it has read it)")
	fs.StringVar(&o.Workdir, "workdir", "", "with --edges: the run's work `DIR`, if not the default")
	fs.StringVar(&o.Model, "model", "", "the run's score function: dot, distmult or complex (default: the dataset's)")
	fs.IntVar(&o.Dim, "dim", job.Defaults.Dim, "the run's embedding dimension d")
	fs.IntVar(&o.P, "p", job.Defaults.P, "the run's node partitions")
	fs.IntVar(&o.Batch, "batch", job.Defaults.Batch, "the run's edges per batch")
	fs.IntVar(&o.Negatives, "negatives", job.Defaults.Negatives, "the run's negatives per chunk")
	fs.IntVar(&o.Chunk, "chunk", 0, "the run's edges per chunk (0: as many as --negatives)")
	fs.Float64Var(&o.DegreeFrac, "degree-frac", job.Defaults.DegreeFrac, "the run's share of negatives drawn by degree (default -1: as realrun chooses)")
	fs.IntVar(&o.Workers, "workers", job.Defaults.Workers, "the run's training goroutines")
}
