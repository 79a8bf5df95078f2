package experiments

import (
	"errors"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDiskExperimentsRegisteredAndSlow(t *testing.T) {
	for _, name := range []string{"disk-drift", "disk-bracket", "disk-pattern", "prediction-variants", "engine-drift"} {
		e, err := Lookup(name)
		require.NoError(t, err, name)
		assert.True(t, e.Slow, "%s measures this machine for minutes", name)
		assert.NotNil(t, e.Run, name)
		assert.NotEmpty(t, e.Description, name)
	}
}

func TestDriftBinsCountFullBinsOnly(t *testing.T) {
	// 12 s in 5-s bins: two full bins, the trailing 2 s left out.
	b := newDriftBins(12*time.Second, 5*time.Second)
	require.Len(t, b.bytes, 2)
	b.add(0, 10e6)
	b.add(4999*time.Millisecond, 15e6) // still the first bin
	b.add(5*time.Second, 20e6)         // the second starts at 5 s
	b.add(9*time.Second, 5e6)
	b.add(11*time.Second, 1e9) // the partial bin: not counted
	b.add(-time.Second, 1e9)   // before the start: not counted
	assert.Equal(t, []float64{5e6, 5e6}, b.rates(), "25 MB in each 5-s bin")
	assert.Empty(t, newDriftBins(4*time.Second, 5*time.Second).rates(), "no full bin")
}

func TestRateRange(t *testing.T) {
	lo, hi, drop := rateRange([]float64{1.2e9, 1.0e9, 1.25e9, 1.1e9})
	assert.Equal(t, 1.0e9, lo)
	assert.Equal(t, 1.25e9, hi)
	assert.InDelta(t, 0.2, drop, 1e-12, "the slowest is 20% below the fastest")
	lo, hi, drop = rateRange(nil)
	assert.Zero(t, lo+hi+drop)
}

func TestBracketSummary(t *testing.T) {
	// Errors of the calibration against the stream, either sign.
	mean, worst, within := bracketSummary([]float64{0.05, -0.20, 0.10, -0.01}, 0.10)
	assert.InDelta(t, 0.09, mean, 1e-12, "(5+20+10+1)/4 %")
	assert.InDelta(t, 0.20, worst, 1e-12, "the worst is the largest magnitude")
	assert.Equal(t, 3, within, "10% itself counts as within")
	_, _, within = bracketSummary([]float64{-0.3, 0.11}, 0.10)
	assert.Zero(t, within)
}

func TestDiskBracketFiles(t *testing.T) {
	assert.Equal(t, 18, diskBracketFiles(27), "512 MiB in whole 27 MiB files, as the test calibrated")
	assert.Equal(t, 512, diskBracketFiles(1))
	assert.Equal(t, 8, diskBracketFiles(256), "at least 8 files")
}

func TestOverlapRate(t *testing.T) {
	const size, alone = 100.0, 100.0 // bytes a transfer, bytes/s alone
	writes := []span{{0.5, 1.5}, {3, 5}}
	reads := []span{
		{0, 1},     // half overlapped: 50 bytes alone in 0.5 s, 50 in the overlap of 0.5 s → 100/s
		{3, 5},     // wholly overlapped for 2 s → 50/s
		{6, 7},     // alone: not counted
		{1.4, 2.4}, // 0.1 of 1 s overlapped: not counted
		{2.5, 4.5}, // 1.5 of 2 s overlapped: 100 − 100·0.5 = 50 bytes in 1.5 s → 33.3/s
	}
	rate, n := overlapRate(reads, writes, size, alone)
	assert.Equal(t, 3, n)
	assert.InDelta(t, 50, rate, 1e-9, "median of 33.3, 50, 100")
	// The part alone at the rate alone moves more than the transfer: left out.
	rate, n = overlapRate([]span{{0, 2}}, []span{{1, 2}}, size, 200)
	assert.Zero(t, n)
	assert.Zero(t, rate)
	// An even count keeps the upper median.
	rate, n = overlapRate([]span{{0, 1}, {0, 2}}, []span{{0, 2}}, size, alone)
	assert.Equal(t, 2, n)
	assert.InDelta(t, 100, rate, 1e-9, "50/s and 100/s: the upper")
	_, n = overlapRate([]span{{1, 1}}, []span{{0, 2}}, size, alone)
	assert.Zero(t, n, "a transfer of no time is not a rate")
}

func TestReadShare(t *testing.T) {
	assert.InDelta(t, 0.75, readShare(900, 300), 1e-12)
	assert.Zero(t, readShare(0, 0))
}

// TestWriteUntilStopsByItselfAndReportsErrors runs writeUntil in synctest
// bubbles: their clock is fake, so a write that "takes" 1 ms and the
// deadlines are exact, and synctest.Wait returns once the writer goroutine
// has nothing left to do but wait.
func TestWriteUntilStopsByItselfAndReportsErrors(t *testing.T) {
	t.Run("deadline", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var calls atomic.Int64
			wait, failed := writeUntil(time.Now().Add(20*time.Millisecond), func(int) error {
				calls.Add(1)
				time.Sleep(time.Millisecond) // the write (fake time)
				return nil
			})
			// Never stopped: the goroutine ends at the deadline by itself,
			// after the writes that began before it.
			time.Sleep(time.Hour)
			synctest.Wait()
			assert.Equal(t, int64(20), calls.Load(), "one write a millisecond for 20 ms, then none")
			assert.False(t, failed())
			assert.NoError(t, wait())
			assert.NoError(t, wait(), "a second wait returns at once")
		})
	})
	t.Run("error", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			boom := errors.New("boom")
			var seen []int
			wait, failed := writeUntil(time.Now().Add(time.Hour), func(i int) error {
				seen = append(seen, i)
				if i == 2 {
					return boom
				}
				return nil
			})
			synctest.Wait() // the writer has failed and ended: no time passed
			assert.True(t, failed())
			assert.ErrorIs(t, wait(), boom)
			assert.ErrorIs(t, wait(), boom, "every call the same")
			assert.Equal(t, []int{0, 1, 2}, seen, "the writes stop at the first error")
		})
	})
	t.Run("stopped early", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// wait ends the loop long before its deadline, after the write
			// in flight.
			start := time.Now()
			var calls atomic.Int64
			wait, _ := writeUntil(start.Add(time.Hour), func(int) error {
				calls.Add(1)
				time.Sleep(time.Millisecond)
				return nil
			})
			time.Sleep(5 * time.Millisecond)
			assert.NoError(t, wait())
			assert.LessOrEqual(t, time.Since(start), 6*time.Millisecond)
			assert.LessOrEqual(t, calls.Load(), int64(6))
		})
	})
}

// TestDiskDriftAndPatternTiny runs disk-drift and disk-pattern for real
// with their parameters cut down to seconds.
func TestDiskDriftAndPatternTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("O_DIRECT transfers for seconds")
	}
	mb, secs, bin, rounds, stream := DiskFileMB, DiskDriftSeconds, DiskDriftBin, DiskPatternRounds, DiskPatternStream
	t.Cleanup(func() {
		DiskFileMB, DiskDriftSeconds, DiskDriftBin, DiskPatternRounds, DiskPatternStream = mb, secs, bin, rounds, stream
	})
	DiskFileMB, DiskDriftSeconds, DiskDriftBin, DiskPatternRounds, DiskPatternStream = 1, 2, 500*time.Millisecond, 1, 500*time.Millisecond

	r, err := DiskDrift()
	require.NoError(t, err)
	require.Len(t, r.Rows, 4, "2 s in 0.5-s bins")
	for _, row := range r.Rows {
		require.Len(t, row, len(r.Header))
		reads, _ := strconv.ParseFloat(row[1], 64)
		writes, _ := strconv.ParseFloat(row[2], 64)
		both, _ := strconv.ParseFloat(row[3], 64)
		assert.InDelta(t, reads+writes, both, 1, "together is reads plus writes (rounded)")
	}
	require.Len(t, r.Charts, 1)
	assert.Len(t, r.Charts[0].Series[0].X, 4)
	assert.Contains(t, r.Notes[0], "below the fastest")

	r, err = DiskPattern()
	require.NoError(t, err)
	require.Len(t, r.Rows, 2, "one round × two patterns")
	assert.Equal(t, "back to back", r.Rows[0][1])
	assert.Equal(t, "engine's pattern", r.Rows[1][1])
	require.Len(t, r.Charts, 1)
	assert.Len(t, r.Charts[0].Series, 2)
}

func TestDiskParametersRejected(t *testing.T) {
	secs := DiskDriftSeconds
	t.Cleanup(func() { DiskDriftSeconds = secs })
	DiskDriftSeconds = 1 // less than one 5-s bin
	_, err := DiskDrift()
	assert.ErrorContains(t, err, "at least one bin")
}
