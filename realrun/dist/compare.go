package dist

import (
	"math/rand/v2"
	"time"

	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/realrun/store"
)

// Predicted is the simulator's prediction of one epoch of a distributed
// run (realrun --trainers N --compare-sim), beside the measurement.
type Predicted struct {
	Epoch     int     `json:"epoch"`
	Seconds   float64 `json:"seconds"`
	Loads     int     `json:"loads"`
	Saves     int     `json:"saves"`
	EdgeBytes float64 `json:"edge_bytes"`
	// Train, WaitBucket and Transfer are the trainers' means.
	TrainSeconds      float64 `json:"train_s"`
	WaitBucketSeconds float64 `json:"wait_bucket_s"`
	TransferSeconds   float64 `json:"transfer_s"`
}

// Calibration is what the prediction of a run on this machine takes from
// measurements made before it: the engine's time per edge on one bucket
// (one trainer's workers alone), and the store's speed for one
// partition written and read back (the shared directory's disk, or the
// object store through its client).
type Calibration struct {
	EdgeSeconds float64 `json:"edge_seconds"`
	StoreBytes  float64 `json:"store_bytes_per_s"`
}

// CalibrateEngine times x's engine on bucket (0, 1) of its work
// directory: the fastest of two runs after a warm-up, per edge.
func CalibrateEngine(x *job.Opened) (float64, error) {
	st := x.Store()
	src, err := st.NewBuffer()
	if err != nil {
		return 0, err
	}
	defer src.Free()
	dst, err := st.NewBuffer()
	if err != nil {
		return 0, err
	}
	defer dst.Free()
	if _, err := st.ReadPartition(0, src); err != nil {
		return 0, err
	}
	if _, err := st.ReadPartition(1, dst); err != nil {
		return 0, err
	}
	edges, err := st.ReadBucket(0, 1)
	if err != nil || len(edges) == 0 {
		return 0, err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var best float64
	for k := range 3 {
		t0 := time.Now()
		if _, err := x.Engine().TrainBucket(edges, 0, src, 1, dst, rng); err != nil {
			return 0, err
		}
		if d := time.Since(t0).Seconds(); k > 0 && (best == 0 || d < best) {
			best = d
		}
	}
	return best / float64(len(edges)), nil
}

// calibrateStore times one partition written to and read back from b.
func calibrateStore(b Blobs, st *store.Store) (float64, error) {
	buf, err := st.NewBuffer()
	if err != nil {
		return 0, err
	}
	defer buf.Free()
	if _, err := st.ReadPartition(0, buf); err != nil {
		return 0, err
	}
	t0 := time.Now()
	n, err := b.WritePartition("calibrate", 0, buf)
	if err != nil {
		return 0, err
	}
	m, err := b.ReadPartition("calibrate", 0, buf)
	if err != nil {
		return 0, err
	}
	b.RemovePartition("calibrate", 0)
	return float64(n+m) / time.Since(t0).Seconds(), nil
}

// Predictor predicts the epochs of a distributed run from the work
// directory's manifest, the trainers, each trainer's training workers,
// the epochs run and the calibration (objects: the store is an object
// store reached over each trainer's link, not one shared disk). The
// bridge to the simulator (validate.PredictDistributedRun) is one; this
// package does not import it.
type Predictor func(m store.Manifest, trainers, workers, epochs int, cal Calibration, objects bool) ([]Predicted, error)
