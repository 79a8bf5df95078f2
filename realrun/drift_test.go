package realrun

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
)

// driftFiles are the files each direction of a stream cycles through.
const driftFiles = 16

// driftStore makes a scratch store of 2·driftFiles partition files of mb
// megabytes and two buffers.
func driftStore(t *testing.T, mb int) (*store.Store, *store.Buffer, *store.Buffer) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "partitions"), 0o755))
	st := &store.Store{Dir: dir, M: store.Manifest{PartitionBytes: int64(mb) << 20}}
	rb, err := st.NewBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { rb.Free() })
	wb, err := st.NewBuffer()
	require.NoError(t, err)
	t.Cleanup(func() { wb.Free() })
	for i := 0; i < 2*driftFiles; i++ {
		_, err := st.WritePartition(i, wb)
		require.NoError(t, err)
	}
	return st, rb, wb
}

// stream keeps O_DIRECT partition reads and writes going at once for d,
// as a data-bound epoch does, calls moved with the bytes of each
// transfer as it ends, and returns the bytes per second both moved.
func stream(t *testing.T, st *store.Store, rb, wb *store.Buffer, d time.Duration, moved func(int64)) float64 {
	start := time.Now()
	var total atomic.Int64
	add := func(n int64) {
		total.Add(n)
		if moved != nil {
			moved(n)
		}
	}
	wait := writeUntil(func(i int) error {
		n, err := st.WritePartition(driftFiles+i%driftFiles, wb)
		add(n)
		return err
	})
	for i := 0; time.Since(start) < d; i++ {
		n, err := st.ReadPartition(i%driftFiles, rb)
		require.NoError(t, err)
		add(n)
	}
	require.NoError(t, wait())
	return float64(total.Load()) / time.Since(start).Seconds()
}

// writeUntil calls write(0), write(1), … on a goroutine of its own until
// the function it returns is called, which waits for the call in flight
// and returns the first error (which also stops the writes).
func writeUntil(write func(i int) error) func() error {
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := write(i); err != nil {
				done <- err
				return
			}
		}
	}()
	return func() error {
		close(stop)
		return <-done
	}
}

// envInt is the positive integer in the environment variable name, or def.
func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestDiskDrift is a measurement, not a check, and runs only when
// TIERFLOW_DISK_SERIES gives a duration in seconds (REPRODUCE.md,
// validation): a steady stream of reads and writes at once, with the
// bytes moved per 5-second bin logged, to show how much and how fast this
// machine's disk drifts on the time scale of one epoch.
// TIERFLOW_DISK_SERIES_MB sets the file size (default 27 MB, the d=256
// validation partitions).
func TestDiskDrift(t *testing.T) {
	secs := envInt("TIERFLOW_DISK_SERIES", 0)
	if secs == 0 {
		t.Skip("set TIERFLOW_DISK_SERIES to a number of seconds")
	}
	st, rb, wb := driftStore(t, envInt("TIERFLOW_DISK_SERIES_MB", 27))
	const bin = 5 * time.Second
	bins := make([]atomic.Int64, secs/int(bin.Seconds())+2)
	start := time.Now()
	stream(t, st, rb, wb, time.Duration(secs)*time.Second, func(n int64) {
		if k := int(time.Since(start) / bin); k < len(bins) {
			bins[k].Add(n)
		}
	})
	lo, hi := math.Inf(1), 0.0
	for k := 0; k < secs/int(bin.Seconds()); k++ {
		rate := float64(bins[k].Load()) / bin.Seconds()
		lo, hi = math.Min(lo, rate), math.Max(hi, rate)
		t.Logf("t = %3.0f s: reads and writes at once %.0f MB/s", (time.Duration(k) * bin).Seconds(), rate/1e6)
	}
	t.Logf("range %.0f–%.0f MB/s: the slowest bin is %.0f%% below the fastest", lo/1e6, hi/1e6, 100*(1-lo/hi))
}

// TestDiskBracket is a measurement, not a check, and runs only when
// TIERFLOW_DISK_BRACKET gives a number of rounds (REPRODUCE.md,
// validation). Each round does what a validated run does to the disk: the
// disk calibration (calibrateDiskFor's, 512 MB passes), a 12-second
// steady stream in place of the run, the calibration again; it logs how
// far the rate of reads and writes at once measured before, after and
// their mean (meanDisk) are from the stream's, to show how closely any
// measurement next to a run can stand for the disk the run sees.
func TestDiskBracket(t *testing.T) {
	rounds := envInt("TIERFLOW_DISK_BRACKET", 0)
	if rounds == 0 {
		t.Skip("set TIERFLOW_DISK_BRACKET to a number of rounds")
	}
	mb := envInt("TIERFLOW_DISK_SERIES_MB", 27)
	st, rb, wb := driftStore(t, mb)
	scratch := t.TempDir()
	measure := func() Calibration {
		cal, err := Calibrate(CalibrateOptions{Dir: scratch, FileBytes: int64(mb) << 20, Files: int(max(8, (shapeDiskBytes>>20)/mb)), DiskOnly: true, Name: "bracket"})
		require.NoError(t, err)
		return cal
	}
	both := func(c Calibration) float64 { return c.BothReadBW + c.BothWriteBW }
	var errB, errM []float64
	for r := 0; r < rounds; r++ {
		b := measure()
		run := stream(t, st, rb, wb, 12*time.Second, nil)
		a := measure()
		m := meanDisk(b, a)
		eb, ea, em := both(b)/run-1, both(a)/run-1, both(m)/run-1
		errB, errM = append(errB, math.Abs(eb)), append(errM, math.Abs(em))
		t.Logf("round %d: stream %.0f MB/s; measured before %.0f (%+.0f%%), after %.0f (%+.0f%%), mean %.0f (%+.0f%%)",
			r+1, run/1e6, both(b)/1e6, 100*eb, both(a)/1e6, 100*ea, both(m)/1e6, 100*em)
	}
	summary := func(xs []float64) (mean, worst float64, within int) {
		for _, x := range xs {
			mean += x / float64(len(xs))
			worst = math.Max(worst, x)
			if x <= 0.10 {
				within++
			}
		}
		return
	}
	mb1, wb1, nb := summary(errB)
	mm, wm, nm := summary(errM)
	t.Logf("before only: mean |error| %.0f%%, worst %.0f%%, within 10%% in %d of %d; mean of before and after: %.0f%%, %.0f%%, %d of %d",
		100*mb1, 100*wb1, nb, rounds, 100*mm, 100*wm, nm, rounds)
}

// TestDiskPattern is a measurement, not a check, and runs only when
// TIERFLOW_DISK_PATTERN gives a number of rounds (REPRODUCE.md,
// validation). Each round runs reads and writes of partition-sized files
// at once for 6 seconds twice: back to back, as the calibration's
// both-at-once pass does, and in the engine's pattern, each read followed
// by the loader's checksum and each write preceded by the writer's. It
// logs the read and write rates while the two overlapped: for each
// transfer that overlapped the other direction for at least half its
// time, the rate during the overlap once the part alone is taken out at
// the rate measured alone (the medians over the transfers).
func TestDiskPattern(t *testing.T) {
	rounds := envInt("TIERFLOW_DISK_PATTERN", 0)
	if rounds == 0 {
		t.Skip("set TIERFLOW_DISK_PATTERN to a number of rounds")
	}
	st, rb, wb := driftStore(t, envInt("TIERFLOW_DISK_SERIES_MB", 27))
	size := float64(st.M.PartitionBytes)
	type span struct{ start, end float64 }
	alone := func(write bool) float64 {
		start := time.Now()
		for i := 0; i < driftFiles; i++ {
			var err error
			if write {
				_, err = st.WritePartition(driftFiles+i, wb)
			} else {
				_, err = st.ReadPartition(i, rb)
			}
			require.NoError(t, err)
		}
		return size * driftFiles / time.Since(start).Seconds()
	}
	run := func(engine bool) (reads, writes []span) {
		start := time.Now()
		now := func() float64 { return time.Since(start).Seconds() }
		wait := writeUntil(func(i int) error {
			if engine {
				store.Checksum(wb.Bytes())
			}
			s := now()
			_, err := st.WritePartition(driftFiles+i%driftFiles, wb)
			writes = append(writes, span{s, now()})
			return err
		})
		for i := 0; now() < 6; i++ {
			s := now()
			_, err := st.ReadPartition(i%driftFiles, rb)
			require.NoError(t, err)
			reads = append(reads, span{s, now()})
			if engine {
				store.Checksum(rb.Bytes())
			}
		}
		require.NoError(t, wait())
		return reads, writes
	}
	// during returns the median rate of the transfers in xs while they
	// overlapped others, the part alone taken out at rate aloneBW.
	during := func(xs, others []span, aloneBW float64) (float64, int) {
		var rates []float64
		for _, x := range xs {
			ov := 0.0
			for _, o := range others {
				ov += math.Max(0, math.Min(x.end, o.end)-math.Max(x.start, o.start))
			}
			d := x.end - x.start
			if ov < d/2 {
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
	for r := 0; r < rounds; r++ {
		ra, wa := alone(false), alone(true)
		for _, engine := range []bool{false, true} {
			reads, writes := run(engine)
			rr, nr := during(reads, writes, ra)
			wr, nw := during(writes, reads, wa)
			name := "back to back"
			if engine {
				name = "engine's pattern"
			}
			t.Logf("round %d, %-16s: alone read %.0f, write %.0f MB/s; while both ran: reads %.0f MB/s (%d), writes %.0f MB/s (%d), together %.0f MB/s, reads' share %.0f%%",
				r+1, name, ra/1e6, wa/1e6, rr/1e6, nr, wr/1e6, nw, (rr+wr)/1e6, 100*rr/(rr+wr))
		}
	}
}
