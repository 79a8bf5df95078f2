package workdir

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// edgeBytes is the size of one edge in a bucket or split file.
const edgeBytes = 12

// CheckSpace turns the up-front free-space checks on (checkSpace,
// CheckResumeSpace); a test that fills the disk during a run on purpose
// turns it off.
var CheckSpace = true

// Space is the most disk space a run takes in its work directory: the
// data — every edge at 12 bytes in its bucket or split file, the degrees
// and the relabelling at 4 bytes a node each, and for edge files the id
// table (at most the input's size) — and Copies copies of the P
// partitions (the checkpoints kept and the one being written), and the
// Export of the embeddings when it is written to the same file system.
type Space struct {
	Data           int64
	PartitionBytes int64
	P, Copies      int
	Export         int64
}

// Total is the space in bytes.
func (s Space) Total() int64 {
	return s.Data + int64(s.Copies)*int64(s.P)*s.PartitionBytes + s.Export
}

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
	if spec.Copies == 0 || !CheckSpace {
		return nil
	}
	dir := existingAncestor(spec.Workdir)
	free := store.FreeBytes(dir)
	if free < 0 || need.Total() <= free {
		return nil
	}
	return inputerr.Errorf("{Workdir} %s: this run needs up to %.2f GB on its file system (data %.2f GB and %d copies of %d partitions of %.1f MB: the checkpoints kept and the one being written), %.2f GB are free",
		spec.Workdir, float64(need.Total())/1e9, float64(need.Data)/1e9, need.Copies, need.P, float64(need.PartitionBytes)/1e6, float64(free)/1e9)
}

// CheckResumeSpace refuses, before anything is written, a resumed run in
// st whose remaining writes would not fit the free space of its file
// system, naming both figures, as a first run is refused (checkSpace).
// They are the copies of the partitions the run may still add to the ones
// st holds when it trains (its next checkpoints: spec.Copies in all, at
// least the one being written) and then, once the last checkpoint is
// committed and the oldest pruned, the export of the embeddings, when
// export, the path it is written to ("" for none), is on the same file
// system (4 bytes a value, their .npy size; text takes more). An export on
// another file system is checked against that one's free space. It checks
// nothing when spec.Copies is 0 or the free space is unknown.
func (spec DataSpec) CheckResumeSpace(st *store.Store, trains bool, export string) error {
	if spec.Copies == 0 || !CheckSpace {
		return nil
	}
	held, err := heldCopies(st)
	if err != nil {
		return err
	}
	train := Space{PartitionBytes: st.M.PartitionBytes, P: st.M.P}
	end := train
	if trains {
		train.Copies = max(spec.Copies-held, 1)
		end.Copies = max(spec.Copies-1-held, 0)
	}
	dir := existingAncestor(spec.Workdir)
	if export != "" {
		exportBytes := 4 * st.M.Nodes * int64(st.M.Dim)
		edir := existingAncestor(export)
		if store.SameFileSystem(dir, edir) {
			end.Export = exportBytes
		} else if free := store.FreeBytes(edir); free >= 0 && exportBytes > free {
			return exportSpaceError(export, exportBytes, st, free)
		}
	}
	free := store.FreeBytes(dir)
	switch {
	case free < 0:
		return nil
	case train.Total() > free:
		copies := fmt.Sprintf("%d more copies", train.Copies)
		if train.Copies == 1 {
			copies = "1 more copy"
		}
		return inputerr.Errorf("{Workdir} %s: resuming, this run still needs up to %.2f GB on its file system (%s of %d partitions of %.1f MB: the checkpoints it writes), %.2f GB are free",
			spec.Workdir, float64(train.Total())/1e9, copies, train.P, float64(train.PartitionBytes)/1e6, float64(free)/1e9)
	case end.Total() > free:
		if end.Copies == 0 {
			return exportSpaceError(export, end.Export, st, free)
		}
		return inputerr.Errorf("{Workdir} %s: resuming, this run still needs up to %.2f GB on its file system (its checkpoints, then its export to %s of about %.2f GB), %.2f GB are free",
			spec.Workdir, float64(end.Total())/1e9, export, float64(end.Export)/1e9, float64(free)/1e9)
	}
	return nil
}

// exportSpaceError says that an export of about need bytes does not fit
// the free bytes of its file system.
func exportSpaceError(export string, need int64, st *store.Store, free int64) error {
	return inputerr.Errorf("{Export} %s: resuming, this run's export needs about %.2f GB on its file system (%d nodes × d=%d at 4 bytes), %.2f GB are free",
		export, float64(need)/1e9, st.M.Nodes, st.M.Dim, float64(free)/1e9)
}

// heldCopies is how many copies of the partitions st holds: its committed
// checkpoints and the copies of best checkpoints.
func heldCopies(st *store.Store) (int, error) {
	cps, err := st.Checkpoints()
	if err != nil {
		return 0, fmt.Errorf("work directory %s: %w", st.Dir, err)
	}
	entries, err := os.ReadDir(st.Dir)
	if err != nil {
		return 0, fmt.Errorf("work directory %s: %w", st.Dir, err)
	}
	n := len(cps)
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), "best-") && !strings.HasSuffix(e.Name(), ".tmp") {
			n++
		}
	}
	return n, nil
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
