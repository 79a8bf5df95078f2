package calibrate

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/realrun/store"
)

// measureInterference measures how the CPU engine at shape h and
// partition I/O slow each other on this machine: the bandwidth of an
// O_DIRECT stream of partition-sized reads and writes (one goroutine
// each, as the buffer manager's loader and writer, each checksumming what
// it moves as they do) alone and while the engine trains the bench's
// buckets (the graph's own, or synthetic), and the engine's rate alone
// (given) and while the stream runs, each for window. Compute = alone ÷ with-I/O rate − 1, IO = alone ÷
// with-training bandwidth − 1, each at least 0. Scratch files go under
// dir and are removed.
func measureInterference(dir string, fileBytes int64, b *computeBench, alone float64, window time.Duration) (devices.Interference, error) {
	s, err := newIOStream(dir, fileBytes, 4)
	if err != nil {
		return devices.Interference{}, err
	}
	defer s.close()
	bwAlone, err := s.run(func() error { time.Sleep(window); return nil })
	if err != nil {
		return devices.Interference{}, err
	}
	var rates []float64
	bwWith, err := s.run(func() error {
		for t0 := time.Now(); time.Since(t0) < window || len(rates) < 3; {
			rate, _, _, err := b.round()
			if err != nil {
				return err
			}
			rates = append(rates, rate)
		}
		return nil
	})
	if err != nil {
		return devices.Interference{}, err
	}
	sort.Float64s(rates)
	withIO := rates[len(rates)/2]
	var itf devices.Interference
	if withIO > 0 {
		itf.Compute = max(alone/withIO-1, 0)
	}
	if bwWith > 0 {
		itf.IO = max(bwAlone/bwWith-1, 0)
	}
	return itf, nil
}

// ioStream reads partition-sized scratch files in one goroutine and writes
// others in another, with O_DIRECT, for as long as it runs.
type ioStream struct {
	dir        string
	release    func() // removes dir (scratchDir)
	st         *store.Store
	n          int
	rbuf, wbuf *store.Buffer
}

func newIOStream(dir string, fileBytes int64, n int) (*ioStream, error) {
	d, release, err := scratchDir(dir, ".tierflow-interference-*")
	if err != nil {
		return nil, fmt.Errorf("interference: scratch directory in %s: %w", dir, err)
	}
	s := &ioStream{dir: d, release: release, n: n, st: &store.Store{Dir: d, M: store.Manifest{PartitionBytes: fileBytes}}}
	if err := os.Mkdir(filepath.Join(d, "partitions"), 0o755); err != nil {
		s.close()
		return nil, err
	}
	if s.rbuf, err = s.st.NewBuffer(); err == nil {
		s.wbuf, err = s.st.NewBuffer()
	}
	if err != nil {
		s.close()
		return nil, err
	}
	fillPartitionLike(s.wbuf, 3) // a partition's kind of bytes, as the writer's
	for i := 0; i < 2*n; i++ {
		if _, err := s.st.WritePartition(i, s.wbuf); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// run streams while f runs and returns the stream's bytes per second.
func (s *ioStream) run(f func() error) (float64, error) {
	var moved atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	loop := func(op func(i int) (int64, error), first int) {
		defer wg.Done()
		for i := 0; !stop.Load(); i = (i + 1) % s.n {
			b, err := op(first + i)
			if err != nil {
				errs <- err
				return
			}
			moved.Add(b)
		}
	}
	wg.Add(2)
	t0 := time.Now()
	// As the loader and the writer: a read is verified, a write
	// checksummed first.
	go loop(func(i int) (int64, error) {
		n, err := s.st.ReadPartition(i, s.rbuf)
		store.Checksum(s.rbuf.Bytes())
		return n, err
	}, 0)
	go loop(func(i int) (int64, error) {
		store.Checksum(s.wbuf.Bytes())
		return s.st.WritePartition(i, s.wbuf)
	}, s.n)
	err := f()
	stop.Store(true)
	wg.Wait()
	sec := time.Since(t0).Seconds()
	close(errs)
	for e := range errs {
		err = e
	}
	if err != nil {
		return 0, fmt.Errorf("interference: %w", err)
	}
	return float64(moved.Load()) / sec, nil
}

func (s *ioStream) close() {
	if s.rbuf != nil {
		s.rbuf.Free()
	}
	if s.wbuf != nil {
		s.wbuf.Free()
	}
	s.release()
}
