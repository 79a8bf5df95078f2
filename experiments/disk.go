package experiments

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tierflow/tierflow/realrun/calibrate"
	"github.com/tierflow/tierflow/realrun/store"
)

// The disk experiments measure the disk holding the system's temporary
// directory ($TMPDIR, else /tmp) with O_DIRECT transfers of
// partition-sized scratch files, as the engine moves partitions; they
// show how far any measurement next to a run can stand for the disk the
// run sees (experiments/notes/validate.md). They were tests that asserted
// nothing (TestDiskDrift, TestDiskBracket, TestDiskPattern) before they
// became experiments.
func init() {
	register(Experiment{Name: "disk-drift", Description: "Stream partition-sized O_DIRECT reads and writes at once for DiskDriftSeconds (90 s) and chart the rate in 5-s bins: how much and how fast this machine's disk drifts on the time scale of an epoch (takes ~1.5 min)", Run: DiskDrift, Slow: true})
	register(Experiment{Name: "disk-bracket", Description: "DiskBracketRounds (10) rounds of disk calibration, a 12-s read+write stream in place of a run, calibration again: how far the calibrations before, after and their mean are from the stream's rate (takes ~4–6 min)", Run: DiskBracket, Slow: true})
	register(Experiment{Name: "disk-pattern", Description: "DiskPatternRounds (4) rounds of reads and writes at once for 6 s, back to back as the calibration runs them and in the engine's pattern (loader's and writer's checksums): the rates while both ran (takes ~1 min)", Run: DiskPattern, Slow: true})
}

// Parameters of the disk experiments (they were environment variables of
// the tests: TIERFLOW_DISK_SERIES, TIERFLOW_DISK_BRACKET,
// TIERFLOW_DISK_PATTERN, TIERFLOW_DISK_SERIES_MB).
var (
	// DiskFileMB is the size of each scratch file in MiB: 27, about the
	// partitions of the d=256 validation configuration.
	DiskFileMB = 27
	// DiskDriftSeconds is how long disk-drift streams, and DiskDriftBin
	// the width of the bins it reports (a trailing partial bin is left
	// out).
	DiskDriftSeconds = 90
	DiskDriftBin     = 5 * time.Second
	// DiskBracketRounds is how many rounds disk-bracket runs, and
	// DiskBracketStream how long the stream in place of a run lasts.
	DiskBracketRounds = 10
	DiskBracketStream = 12 * time.Second
	// DiskPatternRounds is how many rounds disk-pattern runs, and
	// DiskPatternStream how long each of its two streams lasts.
	DiskPatternRounds = 4
	DiskPatternStream = 6 * time.Second
)

// diskFiles are the files each direction of a stream cycles through.
const diskFiles = 16

// diskScratch is a scratch store of 2·diskFiles partition files and two
// buffers, the write buffer filled with pseudo-random bytes.
type diskScratch struct {
	st     *store.Store
	rb, wb *store.Buffer
	dir    string
}

// newDiskScratch makes a scratch store of files of mb MiB under a new
// temporary directory; close removes it.
func newDiskScratch(name string, mb int) (*diskScratch, error) {
	if mb < 1 {
		return nil, fmt.Errorf("%s: DiskFileMB is %d, want at least 1", name, mb)
	}
	dir, err := os.MkdirTemp("", "tierflow-"+name+"-*")
	if err != nil {
		return nil, err
	}
	d := &diskScratch{dir: dir, st: &store.Store{Dir: dir, M: store.Manifest{PartitionBytes: int64(mb) << 20}}}
	if err := d.init(); err != nil {
		d.close()
		return nil, fmt.Errorf("%s: scratch files in %s: %w", name, dir, err)
	}
	return d, nil
}

func (d *diskScratch) init() error {
	if err := os.Mkdir(filepath.Join(d.dir, "partitions"), 0o755); err != nil {
		return err
	}
	var err error
	if d.rb, err = d.st.NewBuffer(); err != nil {
		return err
	}
	if d.wb, err = d.st.NewBuffer(); err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := d.wb.Bytes()
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	for i := 0; i < 2*diskFiles; i++ {
		if _, err := d.st.WritePartition(i, d.wb); err != nil {
			return err
		}
	}
	return nil
}

func (d *diskScratch) close() {
	if d.rb != nil {
		d.rb.Free()
	}
	if d.wb != nil {
		d.wb.Free()
	}
	os.RemoveAll(d.dir)
}

// writeUntil calls write(0), write(1), … on a goroutine of its own until
// deadline passes, a write fails or wait is called; wait stops it, waits
// for the write in flight and returns the first error (every call the
// same). The goroutine ends by itself at the deadline even if wait is
// never called. failed
// reports whether a write failed (the other direction can stop early).
func writeUntil(deadline time.Time, write func(i int) error) (wait func() error, failed func() bool) {
	stop := make(chan struct{})
	done := make(chan error, 1)
	var bad atomic.Bool
	go func() {
		for i := 0; time.Now().Before(deadline); i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := write(i); err != nil {
				bad.Store(true)
				done <- err
				return
			}
		}
		done <- nil
	}()
	var once sync.Once
	var err error
	return func() error {
		once.Do(func() {
			close(stop)
			err = <-done
		})
		return err
	}, bad.Load
}

// stream keeps O_DIRECT partition reads and writes going at once for d,
// as a data-bound epoch does, calls moved with the bytes of each transfer
// as it ends (write true for writes), and returns the bytes per second
// both moved.
func (s *diskScratch) stream(d time.Duration, moved func(write bool, n int64)) (float64, error) {
	start := time.Now()
	var total atomic.Int64
	add := func(write bool, n int64) {
		total.Add(n)
		if moved != nil {
			moved(write, n)
		}
	}
	wait, failed := writeUntil(start.Add(d), func(i int) error {
		n, err := s.st.WritePartition(diskFiles+i%diskFiles, s.wb)
		add(true, n)
		return err
	})
	var rerr error
	for i := 0; time.Since(start) < d && !failed(); i++ {
		n, err := s.st.ReadPartition(i%diskFiles, s.rb)
		add(false, n)
		if err != nil {
			rerr = err
			break
		}
	}
	if err := errors.Join(rerr, wait()); err != nil {
		return 0, err
	}
	return float64(total.Load()) / time.Since(start).Seconds(), nil
}

// driftBins counts the bytes of transfers by the bin in which each ended:
// full bins of width over a stream of total; a transfer that ends after
// the last full bin is not counted.
type driftBins struct {
	width time.Duration
	bytes []atomic.Int64
}

func newDriftBins(total, width time.Duration) *driftBins {
	n := 0
	if width > 0 {
		n = int(total / width)
	}
	return &driftBins{width: width, bytes: make([]atomic.Int64, n)}
}

// add counts n bytes of a transfer that ended at (since the start).
func (b *driftBins) add(at time.Duration, n int64) {
	if at < 0 || b.width <= 0 {
		return
	}
	if k := int(at / b.width); k < len(b.bytes) {
		b.bytes[k].Add(n)
	}
}

// rates is the bytes per second of each full bin.
func (b *driftBins) rates() []float64 {
	r := make([]float64, len(b.bytes))
	for k := range b.bytes {
		r[k] = float64(b.bytes[k].Load()) / b.width.Seconds()
	}
	return r
}

// rateRange is the lowest and highest of rates and how far the lowest is
// below the highest (a fraction of it; 0 when there are none).
func rateRange(rates []float64) (lo, hi, drop float64) {
	if len(rates) == 0 {
		return 0, 0, 0
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, r := range rates {
		lo, hi = math.Min(lo, r), math.Max(hi, r)
	}
	if hi > 0 {
		drop = 1 - lo/hi
	}
	return lo, hi, drop
}

// DiskDrift streams reads and writes at once for DiskDriftSeconds and
// reports the bytes moved per DiskDriftBin: how much and how fast this
// machine's disk drifts on the time scale of one epoch.
func DiskDrift() (Result, error) {
	r := Result{
		Name:   "disk-drift",
		Title:  fmt.Sprintf("O_DIRECT reads and writes of %d MiB files at once, %g-s bins over %d s on this machine", DiskFileMB, DiskDriftBin.Seconds(), DiskDriftSeconds),
		Header: []string{"t s", "reads MB/s", "writes MB/s", "together MB/s"},
	}
	total := time.Duration(DiskDriftSeconds) * time.Second
	if DiskDriftBin <= 0 || total < DiskDriftBin {
		return r, fmt.Errorf("disk-drift: DiskDriftSeconds (%d) must cover at least one bin of %v", DiskDriftSeconds, DiskDriftBin)
	}
	s, err := newDiskScratch("disk-drift", DiskFileMB)
	if err != nil {
		return r, err
	}
	defer s.close()
	reads, writes := newDriftBins(total, DiskDriftBin), newDriftBins(total, DiskDriftBin)
	start := time.Now()
	mean, err := s.stream(total, func(write bool, n int64) {
		if write {
			writes.add(time.Since(start), n)
		} else {
			reads.add(time.Since(start), n)
		}
	})
	if err != nil {
		return r, fmt.Errorf("disk-drift: %w", err)
	}
	rr, wr := reads.rates(), writes.rates()
	both := make([]float64, len(rr))
	sr, sw, sb := Series{Name: "reads"}, Series{Name: "writes"}, Series{Name: "together"}
	for k := range rr {
		both[k] = rr[k] + wr[k]
		at := (time.Duration(k) * DiskDriftBin).Seconds()
		r.Rows = append(r.Rows, []string{f0(at), f0(rr[k] / 1e6), f0(wr[k] / 1e6), f0(both[k] / 1e6)})
		sr.X, sr.Y = append(sr.X, at), append(sr.Y, rr[k]/1e6)
		sw.X, sw.Y = append(sw.X, at), append(sw.Y, wr[k]/1e6)
		sb.X, sb.Y = append(sb.X, at), append(sb.Y, both[k]/1e6)
	}
	r.Charts = []Chart{{File: "disk-drift", Title: fmt.Sprintf("Disk drift: reads and writes of %d MiB files at once, %g-s bins", DiskFileMB, DiskDriftBin.Seconds()), XLabel: "time (s)", YLabel: "MB/s", Series: []Series{sb, sr, sw}}}
	lo, hi, drop := rateRange(both)
	r.Notes = []string{
		fmt.Sprintf("Range %.0f–%.0f MB/s together: the slowest bin is %.0f%% below the fastest (mean over the whole stream %.0f MB/s).", lo/1e6, hi/1e6, 100*drop, mean/1e6),
		fmt.Sprintf("Method: one goroutine reads %d files of %d MiB in turn while another writes %d others (each write replaces its file), O_DIRECT, in %s; each transfer's bytes count in the bin in which it ended; a trailing partial bin is left out. Run again, it gives another range: the disk is shared.", diskFiles, DiskFileMB, diskFiles, filepath.Dir(s.dir)),
	}
	return r, nil
}

// bracketSummary is the mean and worst of the absolute relative errors
// errs and how many of them are within tol.
func bracketSummary(errs []float64, tol float64) (mean, worst float64, within int) {
	for _, e := range errs {
		e = math.Abs(e)
		mean += e / float64(len(errs))
		worst = math.Max(worst, e)
		if e <= tol {
			within++
		}
	}
	return mean, worst, within
}

// diskBracketFiles is how many files of mb MiB the bracket's calibration
// uses: at least calibrate.ShapeDiskBytes per pass (whole files), at
// least 8.
func diskBracketFiles(mb int) int {
	return max(8, int((calibrate.ShapeDiskBytes>>20)/int64(mb)))
}

// DiskBracket runs DiskBracketRounds rounds of what a validated run does
// to the disk: the disk calibration (passes of calibrate.ShapeDiskBytes),
// a DiskBracketStream steady stream of reads and writes at once in place
// of the run, and the calibration again. It reports how far the rate of
// reads and writes at once measured before, after and their mean
// (calibrate.MeanDisk) are from the stream's.
func DiskBracket() (Result, error) {
	within := fmt.Sprintf("%.0f%%", 100*ValidateTolerance)
	r := Result{
		Name:  "disk-bracket",
		Title: fmt.Sprintf("Disk calibration (reads and writes at once) before and after a %g-s stream in place of a run, against the stream's rate, on this machine", DiskBracketStream.Seconds()),
		Header: []string{"round", "stream MB/s", "before MB/s", "before error %", "after MB/s", "after error %",
			"mean MB/s", "mean error %"},
	}
	if DiskBracketRounds < 1 {
		return r, fmt.Errorf("disk-bracket: DiskBracketRounds is %d, want at least 1", DiskBracketRounds)
	}
	start := time.Now()
	s, err := newDiskScratch("disk-bracket", DiskFileMB)
	if err != nil {
		return r, err
	}
	defer s.close()
	files := diskBracketFiles(DiskFileMB)
	measure := func() (calibrate.Calibration, error) {
		return calibrate.Calibrate(calibrate.CalibrateOptions{Dir: s.dir, FileBytes: int64(DiskFileMB) << 20, Files: files, Name: "bracket"})
	}
	both := func(c calibrate.Calibration) float64 { return c.BothReadBW + c.BothWriteBW }
	var errB, errA, errM []float64
	ss, sb, sa, sm := Series{Name: "stream"}, Series{Name: "before"}, Series{Name: "after"}, Series{Name: "mean of before and after"}
	for k := 1; k <= DiskBracketRounds; k++ {
		b, err := measure()
		if err != nil {
			return r, fmt.Errorf("disk-bracket: round %d, calibration before: %w", k, err)
		}
		run, err := s.stream(DiskBracketStream, nil)
		if err != nil {
			return r, fmt.Errorf("disk-bracket: round %d, stream: %w", k, err)
		}
		a, err := measure()
		if err != nil {
			return r, fmt.Errorf("disk-bracket: round %d, calibration after: %w", k, err)
		}
		m := calibrate.MeanDisk(b, a)
		eb, ea, em := both(b)/run-1, both(a)/run-1, both(m)/run-1
		errB, errA, errM = append(errB, eb), append(errA, ea), append(errM, em)
		r.Rows = append(r.Rows, []string{strconv.Itoa(k), f0(run / 1e6), f0(both(b) / 1e6), pct(eb), f0(both(a) / 1e6), pct(ea), f0(both(m) / 1e6), pct(em)})
		x := float64(k)
		for _, p := range []struct {
			s *Series
			v float64
		}{{&ss, run}, {&sb, both(b)}, {&sa, both(a)}, {&sm, both(m)}} {
			p.s.X, p.s.Y = append(p.s.X, x), append(p.s.Y, p.v/1e6)
		}
	}
	r.Charts = []Chart{{File: "disk-bracket", Title: "Disk calibrations around a stream in place of a run (reads and writes at once)", XLabel: "round", YLabel: "MB/s", Series: []Series{ss, sb, sa, sm}}}
	n := DiskBracketRounds
	summary := func(what string, errs []float64) string {
		mean, worst, in := bracketSummary(errs, ValidateTolerance)
		return fmt.Sprintf("%s: mean |error| %.0f%%, worst %.0f%%, within %s in %d of %d rounds.", what, 100*mean, 100*worst, within, in, n)
	}
	r.Notes = []string{
		summary("Calibration before only", errB),
		summary("Calibration after only", errA),
		summary("Mean of before and after (calibrate.MeanDisk, what a validated prediction uses)", errM),
		fmt.Sprintf("Method: each calibration is calibrate.Calibrate's disk pass (median of three passes over %d files of %d MiB, about %d MiB a pass); its figure is the rate reads and writes moved together while both ran. The stream keeps %d MiB O_DIRECT reads and writes going at once for %g s, as a data-bound epoch does; error is the calibration's rate over the stream's, minus one. Scratch files in %s.",
			files, DiskFileMB, calibrate.ShapeDiskBytes>>20, DiskFileMB, DiskBracketStream.Seconds(), filepath.Dir(s.dir)),
		fmt.Sprintf("Run time: %.1f min.", time.Since(start).Minutes()),
	}
	return r, nil
}

// span is one transfer's start and end (seconds since its stream began).
type span struct{ start, end float64 }

// overlapRate is the median rate of the transfers in xs (of size bytes
// each) while they overlapped the transfers in others: for each
// transfer that overlapped others for at least half its time, the bytes
// left once the part alone is taken out at aloneBW, over the overlapped
// time. It returns 0, 0 when no transfer counts; n is how many did.
func overlapRate(xs, others []span, size, aloneBW float64) (rate float64, n int) {
	var rates []float64
	for _, x := range xs {
		ov := 0.0
		for _, o := range others {
			ov += math.Max(0, math.Min(x.end, o.end)-math.Max(x.start, o.start))
		}
		d := x.end - x.start
		if ov <= 0 || ov < d/2 {
			continue
		}
		if rest := size - aloneBW*(d-ov); rest > 0 {
			rates = append(rates, rest/ov)
		}
	}
	if len(rates) == 0 {
		return 0, 0
	}
	sort.Float64s(rates)
	return rates[len(rates)/2], len(rates)
}

// readShare is reads' part of reads plus writes (0 when both are 0).
func readShare(reads, writes float64) float64 {
	if reads+writes <= 0 {
		return 0
	}
	return reads / (reads + writes)
}

// alone is the rate of diskFiles reads (or writes) in turn with nothing
// else on the disk.
func (s *diskScratch) alone(write bool) (float64, error) {
	start := time.Now()
	for i := 0; i < diskFiles; i++ {
		var err error
		if write {
			_, err = s.st.WritePartition(diskFiles+i, s.wb)
		} else {
			_, err = s.st.ReadPartition(i, s.rb)
		}
		if err != nil {
			return 0, err
		}
	}
	return float64(s.st.M.PartitionBytes) * diskFiles / time.Since(start).Seconds(), nil
}

// pattern runs reads and writes at once for d and returns the spans of
// each: back to back, or (engine) in the engine's pattern, each read
// followed by the loader's checksum and each write preceded by the
// writer's.
func (s *diskScratch) pattern(d time.Duration, engine bool) (reads, writes []span, err error) {
	start := time.Now()
	now := func() float64 { return time.Since(start).Seconds() }
	wait, failed := writeUntil(start.Add(d), func(i int) error {
		if engine {
			store.Checksum(s.wb.Bytes())
		}
		t := now()
		_, err := s.st.WritePartition(diskFiles+i%diskFiles, s.wb)
		writes = append(writes, span{t, now()})
		return err
	})
	var rerr error
	for i := 0; now() < d.Seconds() && !failed(); i++ {
		t := now()
		if _, rerr = s.st.ReadPartition(i%diskFiles, s.rb); rerr != nil {
			break
		}
		reads = append(reads, span{t, now()})
		if engine {
			store.Checksum(s.rb.Bytes())
		}
	}
	if err := errors.Join(rerr, wait()); err != nil {
		return nil, nil, err
	}
	return reads, writes, nil
}

// DiskPattern runs DiskPatternRounds rounds of reads and writes of
// partition-sized files at once for DiskPatternStream, twice a round:
// back to back, as the calibration's both-at-once pass does, and in the
// engine's pattern (each read followed by the loader's checksum, each
// write preceded by the writer's). It reports the read and write rates
// while the two overlapped (overlapRate), beside the rates alone.
func DiskPattern() (Result, error) {
	r := Result{
		Name:  "disk-pattern",
		Title: fmt.Sprintf("Reads and writes of %d MiB files at once for %g s: back to back and in the engine's pattern, on this machine", DiskFileMB, DiskPatternStream.Seconds()),
		Header: []string{"round", "pattern", "read alone MB/s", "write alone MB/s", "reads while both MB/s", "reads counted",
			"writes while both MB/s", "writes counted", "together MB/s", "reads' share %"},
	}
	if DiskPatternRounds < 1 {
		return r, fmt.Errorf("disk-pattern: DiskPatternRounds is %d, want at least 1", DiskPatternRounds)
	}
	s, err := newDiskScratch("disk-pattern", DiskFileMB)
	if err != nil {
		return r, err
	}
	defer s.close()
	size := float64(s.st.M.PartitionBytes)
	names := [2]string{"back to back", "engine's pattern"}
	var together [2]Series
	lo, hi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{}
	shareLo, shareHi := [2]float64{math.Inf(1), math.Inf(1)}, [2]float64{}
	for i := range together {
		together[i].Name = names[i]
	}
	for k := 1; k <= DiskPatternRounds; k++ {
		ra, err := s.alone(false)
		if err != nil {
			return r, fmt.Errorf("disk-pattern: round %d: %w", k, err)
		}
		wa, err := s.alone(true)
		if err != nil {
			return r, fmt.Errorf("disk-pattern: round %d: %w", k, err)
		}
		for i, engine := range []bool{false, true} {
			reads, writes, err := s.pattern(DiskPatternStream, engine)
			if err != nil {
				return r, fmt.Errorf("disk-pattern: round %d, %s: %w", k, names[i], err)
			}
			rr, nr := overlapRate(reads, writes, size, ra)
			wr, nw := overlapRate(writes, reads, size, wa)
			share := readShare(rr, wr)
			r.Rows = append(r.Rows, []string{strconv.Itoa(k), names[i], f0(ra / 1e6), f0(wa / 1e6), f0(rr / 1e6), strconv.Itoa(nr),
				f0(wr / 1e6), strconv.Itoa(nw), f0((rr + wr) / 1e6), f0(100 * share)})
			together[i].X, together[i].Y = append(together[i].X, float64(k)), append(together[i].Y, (rr+wr)/1e6)
			lo[i], hi[i] = math.Min(lo[i], rr+wr), math.Max(hi[i], rr+wr)
			shareLo[i], shareHi[i] = math.Min(shareLo[i], share), math.Max(shareHi[i], share)
		}
	}
	r.Charts = []Chart{{File: "disk-pattern", Title: "Reads and writes at once: rate while both ran, back to back and in the engine's pattern", XLabel: "round", YLabel: "MB/s together", Series: together[:]}}
	for i := range names {
		r.Notes = append(r.Notes, fmt.Sprintf("%s: %.2f–%.2f GB/s together while both ran, reads taking %.0f–%.0f%%.", names[i], lo[i]/1e9, hi[i]/1e9, 100*shareLo[i], 100*shareHi[i]))
	}
	r.Notes = append(r.Notes,
		fmt.Sprintf("Method: each round measures %d reads and %d writes of %d MiB files alone (O_DIRECT), then reads and writes at once for %g s twice, back to back and in the engine's pattern. A rate while both ran is the median over the transfers that overlapped the other direction for at least half their time, each one's bytes less the part alone (at the rate alone) over the overlapped time; counted is how many transfers that is. Scratch files in %s.",
			diskFiles, diskFiles, DiskFileMB, DiskPatternStream.Seconds(), filepath.Dir(s.dir)))
	return r, nil
}

func f0(x float64) string { return strconv.FormatFloat(x, 'f', 0, 64) }

func pct(x float64) string { return fmt.Sprintf("%+.0f", 100*x) }
