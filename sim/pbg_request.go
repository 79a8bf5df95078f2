package sim

import (
	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/workload"
)

// PBGRequest is `simulate --machines`, PyTorch-BigGraph on one machine or
// several, in names and numbers as a user states them; zero values mean
// the defaults.
type PBGRequest struct {
	Device, Dataset string
	Model           string // "" = the dataset's
	Dim, P          int
	Machines        int
	// Bandwidth ("10GB/s"; "" = the device's) replaces the network's.
	Bandwidth string
	// Epochs is the number of epochs to report the time of (0: 10, the
	// papers' tables).
	Epochs int
	// Graph, when set, replaces Dataset wholesale (see Request.Graph):
	// its sizes, and its own training edges per bucket at P. P 0 is
	// DefaultP (or Graph.P when set); Dim 0 and Model "" are the graph's.
	Graph *Graph
}

// PBGPrediction is what `simulate --machines` prints.
type PBGPrediction struct {
	PBGReport
	Training workload.Training `json:"training"`
	// EpochsReported and Seconds: the time of that many epochs (the first,
	// then the steady one repeated).
	EpochsReported int     `json:"epochs_reported"`
	Seconds        float64 `json:"seconds"`
}

// Predict resolves and checks the request and simulates it. Bad input is
// an inputerr.Error naming the field ({Machines}).
func (q PBGRequest) Predict() (PBGPrediction, error) {
	if q.Graph != nil {
		if err := q.Graph.Check(); err != nil {
			return PBGPrediction{}, inputerr.Errorf("{Graph}: %w", err)
		}
		if q.P == 0 {
			q.P = q.Graph.P
		}
		if q.Dim == 0 {
			q.Dim = q.Graph.Dim
		}
	}
	if q.P == 0 {
		q.P = DefaultP
	}
	if q.Machines < 1 {
		return PBGPrediction{}, inputerr.Errorf("{Machines} %d: at least 1 machine", q.Machines)
	}
	if q.P < 1 {
		return PBGPrediction{}, inputerr.Errorf("{P} %d: at least 1 partition", q.P)
	}
	if q.Machines > 1 && q.P < 2 {
		return PBGPrediction{}, inputerr.Errorf("{P} %d: %d machines need at least 2 partitions", q.P, q.Machines)
	}
	if q.Dim < 1 {
		return PBGPrediction{}, inputerr.Errorf("{Dim} %d: the dimension must be at least 1", q.Dim)
	}
	if q.Epochs < 0 {
		return PBGPrediction{}, inputerr.Errorf("{Epochs} %d: must not be negative", q.Epochs)
	}
	prof, err := devices.Resolve(q.Device)
	if err != nil {
		return PBGPrediction{}, inputerr.Errorf("{Device}: %w", err)
	}
	if q.Bandwidth != "" {
		bw, err := devices.ParseBandwidth(q.Bandwidth)
		if err != nil {
			return PBGPrediction{}, inputerr.Errorf("{Bandwidth}: %w", err)
		}
		if bw <= 0 {
			return PBGPrediction{}, inputerr.Errorf("{Bandwidth} %s: must be positive", q.Bandwidth)
		}
		prof.Network.Bandwidth = bw
	}
	var ds workload.Dataset
	var buckets []int64 // nil: uniform
	if q.Graph != nil {
		ds = q.Graph.Dataset()
		h, err := q.Graph.Histogram(q.P)
		if err != nil {
			return PBGPrediction{}, inputerr.Errorf("{Graph} %s: %w", q.Graph.Name, err)
		}
		buckets, _ = h.Flat()
	} else if ds, err = workload.LookupDataset(q.Dataset); err != nil {
		return PBGPrediction{}, inputerr.Errorf("{Dataset}: %w", err)
	}
	tr := PBGTraining(ds, q.Dim)
	if q.Model != "" {
		if tr.Model, err = workload.ParseModel(q.Model); err != nil {
			return PBGPrediction{}, inputerr.Errorf("{Model}: %w", err)
		}
	}
	rep, err := SimulatePBG(PBGConfig{Profile: prof, Dataset: ds, Training: tr, P: q.P, Machines: q.Machines, BucketEdges: buckets})
	if err != nil {
		return PBGPrediction{}, &inputerr.Error{Err: err}
	}
	n := q.Epochs
	if n == 0 {
		n = 10
	}
	return PBGPrediction{PBGReport: rep, Training: tr, EpochsReported: n, Seconds: rep.Seconds(n)}, nil
}
