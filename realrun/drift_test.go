package realrun

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/store"
)

// TestDiskDrift is a measurement, not a check, and runs only when
// TIERFLOW_DISK_SERIES gives a duration in seconds (REPRODUCE.md,
// validation): it keeps a steady O_DIRECT stream of partition-sized reads
// and writes at once, as a data-bound epoch does, and logs the bytes
// moved per 5-second bin, to show how much and how fast this machine's
// disk drifts on the time scale of one epoch. TIERFLOW_DISK_SERIES_MB
// sets the file size (default 27 MB, the d=256 validation partitions).
func TestDiskDrift(t *testing.T) {
	secs, _ := strconv.Atoi(os.Getenv("TIERFLOW_DISK_SERIES"))
	if secs <= 0 {
		t.Skip("set TIERFLOW_DISK_SERIES to a number of seconds")
	}
	mb, _ := strconv.Atoi(os.Getenv("TIERFLOW_DISK_SERIES_MB"))
	if mb <= 0 {
		mb = 27
	}
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "partitions"), 0o755))
	st := &store.Store{Dir: dir, M: store.Manifest{PartitionBytes: int64(mb) << 20}}
	rb, err := st.NewBuffer()
	require.NoError(t, err)
	defer rb.Free()
	wb, err := st.NewBuffer()
	require.NoError(t, err)
	defer wb.Free()
	const files = 16
	for i := 0; i < 2*files; i++ {
		_, err := st.WritePartition(i, wb)
		require.NoError(t, err)
	}
	const bin = 5 * time.Second
	bins := make([]atomic.Int64, secs/int(bin.Seconds())+2)
	start := time.Now()
	add := func(n int64) {
		if k := int(time.Since(start) / bin); k < len(bins) {
			bins[k].Add(n)
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			n, err := st.WritePartition(files+i%files, wb)
			if err != nil {
				werr = err
				return
			}
			add(n)
		}
	}()
	for i := 0; time.Since(start) < time.Duration(secs)*time.Second; i++ {
		n, err := st.ReadPartition(i%files, rb)
		require.NoError(t, err)
		add(n)
	}
	close(stop)
	wg.Wait()
	require.NoError(t, werr)
	lo, hi := 0.0, 0.0
	for k := 0; k < secs/int(bin.Seconds()); k++ {
		rate := float64(bins[k].Load()) / bin.Seconds()
		if k == 0 || rate < lo {
			lo = rate
		}
		hi = max(hi, rate)
		t.Logf("t = %3.0f s: reads and writes at once %.0f MB/s", (time.Duration(k) * bin).Seconds(), rate/1e6)
	}
	t.Logf("range %.0f–%.0f MB/s: the slowest bin is %.0f%% below the fastest", lo/1e6, hi/1e6, 100*(1-lo/hi))
}
