package calibrate

import (
	"errors"
	"os"
	"sync"
)

// scratchDirs are the scratch directories the calibrations of this
// process hold now (RemoveScratch).
var scratchDirs = struct {
	sync.Mutex
	m map[string]struct{}
}{m: map[string]struct{}{}}

// scratchDir makes a scratch directory in parent named by pattern
// (os.MkdirTemp) and holds it until release, which removes it;
// RemoveScratch removes it before then.
func scratchDir(parent, pattern string) (dir string, release func(), err error) {
	dir, err = os.MkdirTemp(parent, pattern)
	if err != nil {
		return "", nil, err
	}
	scratchDirs.Lock()
	scratchDirs.m[dir] = struct{}{}
	scratchDirs.Unlock()
	return dir, func() {
		scratchDirs.Lock()
		delete(scratchDirs.m, dir)
		scratchDirs.Unlock()
		os.RemoveAll(dir)
	}, nil
}

// RemoveScratch removes every scratch directory a calibration of this
// process holds now. It is for a signal handler about to exit, so that a
// calibration stopped part-way leaves none of its partition-sized files
// behind (one stopped by SIGTERM left 26 GB); a calibration still running
// fails on its next transfer.
func RemoveScratch() error {
	scratchDirs.Lock()
	defer scratchDirs.Unlock()
	var errs []error
	for dir := range scratchDirs.m {
		errs = append(errs, os.RemoveAll(dir))
		delete(scratchDirs.m, dir)
	}
	return errors.Join(errs...)
}
