package workdir

import (
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// edgeBytes is the size of one edge in a bucket or split file.
const edgeBytes = 12

// Space is the most disk space a run takes in its work directory: the
// data — every edge at 12 bytes in its bucket or split file, the degrees
// and the relabelling at 4 bytes a node each, and for edge files the id
// table (at most the input's size) — and Copies copies of the P
// partitions (the checkpoints kept and the one being written).
type Space struct {
	Data           int64
	PartitionBytes int64
	P, Copies      int
}

// Total is the space in bytes.
func (s Space) Total() int64 { return s.Data + int64(s.Copies)*int64(s.P)*s.PartitionBytes }

// space is the Space of a graph of nodes and edges laid out as spec says,
// with extra bytes of data beside the edges.
func (spec DataSpec) space(nodes, edges, extra int64) Space {
	pb := workload.PartitionBytes(nodes, spec.P, spec.Dim, false)
	pb = (pb + store.Align - 1) / store.Align * store.Align
	return Space{Data: edges*edgeBytes + 8*nodes + extra, PartitionBytes: pb, P: spec.P, Copies: spec.Copies}
}

// checkSpace refuses, before anything is written, a run whose work
// directory would not fit the free space of its file system, naming both
// figures. It checks nothing when spec.Copies is 0 or the free space is
// unknown.
func (spec DataSpec) checkSpace(need Space) error {
	if spec.Copies == 0 {
		return nil
	}
	dir := existingAncestor(spec.Workdir)
	free := store.FreeBytes(dir)
	if free < 0 || need.Total() <= free {
		return nil
	}
	return inputerr.Errorf("--workdir %s: this run needs up to %.2f GB on its file system (data %.2f GB and %d copies of %d partitions of %.1f MB: the checkpoints kept and the one being written), %.2f GB are free",
		spec.Workdir, float64(need.Total())/1e9, float64(need.Data)/1e9, need.Copies, need.P, float64(need.PartitionBytes)/1e6, float64(free)/1e9)
}

// existingAncestor is path or its nearest parent that exists.
func existingAncestor(path string) string {
	p := filepath.Clean(path)
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}
