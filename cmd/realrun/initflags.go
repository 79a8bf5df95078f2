package main

import (
	"flag"

	"github.com/tierflow/tierflow/realrun/job"
)

// registerInitFlags adds --init, the warm start from existing embeddings.
func registerInitFlags(fs *flag.FlagSet, o *job.Options) {
	fs.StringVar(&o.Init, "init", "", "start from existing embeddings in `FILE`: a PyTorch-BigGraph checkpoint directory (or --export-format pbg output), an .npy or a .tsv export; "+
		"rows matched by node name (.npy: by row = input id), nodes it lacks start random; applied only when training starts afresh")
}
