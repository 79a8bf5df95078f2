package calibrate

import (
	"time"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/store"
)

// ShapeProfile calibrates this machine for one run without looking at any
// training run: the disk holding scratchDir with O_DIRECT transfers of the
// work directory's partition size, and the engine at exactly the run's
// training shape and partition size (synthetic buckets).
// The profile is cal.Profile; cal keeps the disk measurements beside it.
//
// The disk is measured over at least ShapeDiskBytes per pass (short
// bursts of a few files overstate this virtual disk's sustained rate), and
// how the engine and the I/O slow each other (MeasureInterference) goes
// into cpu.interference.
func ShapeProfile(st *store.Store, h realrun.Hyper, scratchDir string) (Calibration, error) {
	cal, pass, err := calibrateDiskFor(st, h, scratchDir, ShapeDiskBytes)
	if err != nil {
		return cal, err
	}
	tc, err := CalibrateShape(h, st.M.Rows)
	if err != nil {
		return cal, err
	}
	t := &cal.Profile.CPU.Train
	t.Dot, t.DistMult, t.ComplEx = tc, tc, tc
	window := time.Duration(float64(pass) / 256e6 * float64(time.Second)) // ~2 s for 512 MB
	if cal.Profile.CPU.Interference, err = MeasureInterference(scratchDir, st.M.PartitionBytes, h, st.M.Rows, tc, min(max(window, 300*time.Millisecond), 2*time.Second)); err != nil {
		return cal, err
	}
	return cal, cal.Profile.Validate()
}

// calibrateDiskFor measures the disk holding scratchDir with transfers of
// st's partition size, pass bytes per measurement (at most a few epochs'
// worth of st's partitions), and the checksum rate. It returns the bytes
// of one pass.
func calibrateDiskFor(st *store.Store, h realrun.Hyper, scratchDir string, pass int64) (Calibration, int64, error) {
	pass = min(pass, 4*int64(st.M.P)*st.M.PartitionBytes)
	files := int(max(8, (pass+st.M.PartitionBytes-1)/max(st.M.PartitionBytes, 1)))
	cal, err := Calibrate(CalibrateOptions{Dir: scratchDir, FileBytes: st.M.PartitionBytes, Files: files, Name: "this-machine", Workers: h.Workers, DiskOnly: true})
	return cal, pass, err
}

// ShapeDiskBytes is the least a disk calibration pass moves, before each
// run (CompareOptions.DiskScratch) as for the profile: passes of a few
// hundred megabytes overstate this virtual disk's sustained rate. The
// disk-bracket experiment calibrates with passes of this size too.
const ShapeDiskBytes = 512 << 20

// Disk measures the disk holding scratchDir with transfers of st's
// partition size, as ShapeProfile does, and the checksum rate: what a
// comparison measures just before and just after each run.
func Disk(st *store.Store, h realrun.Hyper, scratchDir string) (Calibration, error) {
	cal, _, err := calibrateDiskFor(st, h, scratchDir, ShapeDiskBytes)
	return cal, err
}
