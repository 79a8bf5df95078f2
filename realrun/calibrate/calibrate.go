package calibrate

import (
	"bufio"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/diskcap"
	"github.com/tierflow/tierflow/realrun/store"
)

// Calibration is what `realrun calibrate` measured, with the profile it
// derives. It never looks at a training run's timings: the disk figures
// come from partition-sized O_DIRECT transfers of scratch files and the
// compute figures from the CPU engine training buckets at one training
// shape — the graph's own where its work directory exists, else
// synthetic ones (ShapeProfile, MeasureCompute).
type Calibration struct {
	Profile devices.Profile `json:"profile"`
	// Disk
	ReadBW, WriteBW float64 `json:"-"`
	BothBW          float64 `json:"-"`
	// BothReadBW and BothWriteBW are the read and write rates while both
	// streams of the both-at-once pass ran (the pass of median total).
	BothReadBW, BothWriteBW float64 `json:"-"`
	// Paired is the disk driven as the buffer manager drives it in a
	// swap (PairedDisk): a read, then the evicted partition's write.
	// Where it measured both, ReadBW, WriteBW and ChecksumBW are its
	// rates and Samples.Read, Write and Checksum its quarters (the
	// profile's rates and spread), and Passes keeps the passes'.
	Paired *PairedDisk `json:"paired,omitempty"`
	// Passes are the rates of the passes of reads alone and writes alone
	// and of the checksums after the reads, with their samples, where the
	// paired measurement replaced them (nil otherwise).
	Passes         *Passes `json:"passes,omitempty"`
	LatencySeconds float64 `json:"-"`
	CopyBW         float64 `json:"-"`
	// ChecksumBW is the CRC-32C rate on partitions just read with
	// O_DIRECT (cold in the caches, as the loader and writer see them):
	// the pairs' loader and writer together where adoptPaired took them,
	// else the checksum after each read of the reads pass.
	ChecksumBW float64 `json:"-"`
	// Limit is the kernel limit the process ran under (diskcap.Apply):
	// the disk figures above are the disk's own, measured outside it
	// (diskcap.Unlimited), and the profile's disk is them held to it.
	Limit diskcap.Limits `json:"-"`
	// Compute is the CPU engine's measured rate at Shape: median, spread,
	// rounds, time and what it trained on; nil for a disk-only
	// calibration.
	Compute *ComputeRate `json:"compute,omitempty"`
	// Orderings are the CPU engine's rates on each ordering's own bucket
	// sequence (MeasureOrderings, AddOrderings), keyed by ordering; the
	// profile's cpu.train.<model>.orderings.
	Orderings map[string]ComputeRate `json:"orderings,omitempty"`
	// InterferenceOn says what the engine trained while the interference
	// with I/O was measured ("": the bench's buckets; AddOrderings
	// measures it again on the first ordering's bucket sequence).
	InterferenceOn string `json:"interference_on,omitempty"`
	// Shape is the training shape the CPU engine was measured at (the
	// profile's cpu.train_shape); nil for a disk-only calibration.
	Shape *devices.TrainShape `json:"train_shape,omitempty"`
	// FMAPeak is this machine's fused multiply-add ceiling in FLOP/s over
	// the shape's workers (0: not measured, e.g. without the SIMD
	// kernels): the bound the engine's effective FLOP rate is read
	// against (EffectiveFLOPS).
	FMAPeak float64 `json:"fma_peak_flops,omitempty"`
	// FMACores are the cores FMAPeak counts: the shape's workers, at
	// most this machine's CPUs.
	FMACores int `json:"fma_cores,omitempty"`
	// GPU is the GPU's calibration (pinned H2D/D2H at partition size, its
	// memory and the CUDA engine's rates at the run's shape), written into the
	// profile's pcie and gpu; nil when there is none, NoGPU says why.
	GPU   *GPUCalibration `json:"gpu,omitempty"`
	NoGPU string          `json:"no_gpu,omitempty"`
	// Samples are the repeated measurements the medians above were taken
	// from, in bytes/s: they give the profile's spread (SetSpread).
	Samples DiskSamples `json:"samples"`
	// FileBytes and Files are the disk measurement's scratch files: each
	// pass moves Files files of FileBytes in each direction.
	FileBytes int64 `json:"file_bytes"`
	Files     int   `json:"files"`
	// Written is what the writes wrote (Written): this machine's disk
	// writes a partition's floats faster than random bytes.
	Written string `json:"written,omitempty"`
	// Took is how long each part of the calibration ran.
	Took Took `json:"took_seconds"`
	// Probe, when the calibration was completed by probes of the run's
	// orderings (validate.Probe), is what they measured and applied.
	Probe *ProbeResult `json:"probe,omitempty"`
	// Drift, when the calibration joined a History (AddToHistory), is how
	// far each rate strayed in it (ratios to its series' median), over
	// DriftEntries measurements since DriftSince; the profile's spread
	// holds it.
	Drift        map[string]devices.Range `json:"drift,omitempty"`
	DriftEntries int                      `json:"drift_measurements,omitempty"`
	DriftSince   time.Time                `json:"drift_since,omitzero"`
}

// Passes are the disk's passes of reads alone and writes alone and the
// checksums after the reads: their median rates and each pass's.
type Passes struct {
	ReadBW     float64     `json:"read_bytes_per_s"`
	WriteBW    float64     `json:"write_bytes_per_s"`
	ChecksumBW float64     `json:"checksum_bytes_per_s"`
	Samples    DiskSamples `json:"samples"`
}

// adoptPaired makes the paired measurement's rates the calibration's
// (Calibration.Paired), keeping the passes' in Passes and adding the
// pairs' quarters to their samples: a run's reads, writes and checksums
// go as they went in the pairs, not as in the passes. (Two calibrations on this machine's virtual disk, 2026-11-29,
// each against the data-bound run after it: the passes ran reads
// 0.96–1.26×, writes 1.10–1.21× and checksums 1.25–1.96× the rates of
// the run's reads, writes and writer's checksums, the pairs 0.88–1.17×,
// 1.06–1.10× and 0.91–1.25×; the run's loader verified at 1.19–1.30×
// the pairs' verify, 0.76–1.02× the passes' checksum.)
func (c *Calibration) adoptPaired() {
	p := c.Paired
	if p == nil || p.ReadBW <= 0 || p.WriteBW <= 0 || p.ChecksumBW <= 0 {
		return
	}
	c.Passes = &Passes{ReadBW: c.ReadBW, WriteBW: c.WriteBW, ChecksumBW: c.ChecksumBW,
		Samples: DiskSamples{Read: c.Samples.Read, Write: c.Samples.Write, Checksum: c.Samples.Checksum}}
	c.ReadBW, c.WriteBW, c.ChecksumBW = p.ReadBW, p.WriteBW, p.ChecksumBW
	// The spread is every measurement of each rate, the pairs' quarters
	// and the passes: the same device moments apart.
	cat := func(x, y []float64) []float64 { return append(slices.Clone(x), y...) }
	c.Samples.Read, c.Samples.Write, c.Samples.Checksum = cat(p.ReadSamples, c.Passes.Samples.Read), cat(p.WriteSamples, c.Passes.Samples.Write), cat(p.ChecksumSamples, c.Passes.Samples.Checksum)
}

// DiskSamples are a disk calibration's passes: the rate of each pass of
// reads alone, writes alone, both at once (the rate both moved while
// they overlapped) and the checksums of what the reads brought in.
type DiskSamples struct {
	Read     []float64 `json:"read"`
	Write    []float64 `json:"write"`
	Both     []float64 `json:"both"`
	Checksum []float64 `json:"checksum"`
}

// Took is how long each part of a calibration ran, in seconds (0: not
// measured).
type Took struct {
	Disk         float64 `json:"disk"`
	Compute      float64 `json:"compute"`
	Interference float64 `json:"interference"`
	GPU          float64 `json:"gpu"`
	// Orderings is the engine on the orderings' own bucket sequences
	// (AddOrderings).
	Orderings float64 `json:"orderings,omitempty"`
	Total     float64 `json:"total"`
}

// CalibrateOptions size the measurements.
type CalibrateOptions struct {
	Dir       string // scratch directory on the disk to measure
	FileBytes int64  // one scratch file (a partition's size)
	Files     int
	Workers   int
	Name      string
	// Paired is the least time the paired measurement runs (0:
	// PairedSeconds).
	Paired time.Duration
}

// Calibrate measures this machine's disk, memory copy and checksum rate
// into a profile without cpu.train: the CPU engine's rate is measured at
// a training shape (ShapeProfile, MeasureCompute), the GPU by CalibrateGPU.
func Calibrate(opt CalibrateOptions) (Calibration, error) {
	var cal Calibration
	if opt.Workers < 1 {
		opt.Workers = runtime.NumCPU()
	}
	if opt.FileBytes < store.Align {
		opt.FileBytes = 64 << 20
	}
	opt.FileBytes = (opt.FileBytes + store.Align - 1) / store.Align * store.Align
	if opt.Files < 2 {
		opt.Files = 4
	}
	t0 := time.Now()
	cal.FileBytes, cal.Files, cal.Written = opt.FileBytes, opt.Files, Written
	if err := calibrateDisk(&cal, opt); err != nil {
		return cal, err
	}
	cal.Took.Disk = time.Since(t0).Seconds()
	cal.CopyBW = measureCopy()
	mem := memTotal()
	cal.Profile = devices.Profile{
		Name:        opt.Name,
		Description: fmt.Sprintf("measured by realrun calibrate on %s (%d CPUs), %s", time.Now().UTC().Format("2006-01-02"), runtime.NumCPU(), opt.Dir),
		Disk:        cal.Disk(),
		CPU: devices.CPU{
			Workers: opt.Workers, Memory: devices.Bytes(mem),
			// The marius model's CPU rates do not describe this engine;
			// they are set from the measured copy bandwidth (and, by
			// ShapeProfile, the engine's edge rate) so the profile also
			// loads for the other systems.
			BatchEdges: 1, GatherBW: devices.Bandwidth(cal.CopyBW),
			Checksum: devices.Bandwidth(cal.ChecksumBW),
		},
	}
	if err := cal.Profile.Validate(); err != nil {
		return cal, fmt.Errorf("calibrated profile: %w", err)
	}
	return cal, nil
}

// BothAtOnce says what the disk did with reads and writes at once, as
// two independent streams: the rate both moved while they overlapped,
// and the reads' share of it. (The engine's own swaps do not overlap
// them: PairedDisk.)
func (c Calibration) BothAtOnce() string {
	both := c.BothReadBW + c.BothWriteBW
	if both <= 0 {
		return fmt.Sprintf("%.0f MB/s", c.BothBW/1e6)
	}
	return fmt.Sprintf("%.0f MB/s (reads %.0f%%)", both/1e6, 100*c.BothReadBW/both)
}

// PairedNote says how the paired measurement ran: "40 pairs of 1506.8
// MB, 60.3 GB in 31.2 s; reads 1.95 GB/s and writes 1.80 GB/s in turn;
// 2.1 GB/s over the first 2 s, 1.9 GB/s steady (no burst)"; "" when not
// measured.
func (c Calibration) PairedNote() string {
	p := c.Paired
	if p == nil {
		return ""
	}
	burst := "no burst"
	if p.Burst {
		burst = fmt.Sprintf("a burst: the first %.0f s ran %.2f× the steady rate; the profile takes the steady half's rates", BurstWindow, p.FirstRate/p.SteadyRate)
	}
	return fmt.Sprintf("%d pairs of %.1f MB, %.1f GB in %.1f s; reads %.2f GB/s and writes %.2f GB/s in turn; %.2f GB/s over the first %.0f s, %.2f GB/s steady (%s)",
		p.Pairs, float64(c.FileBytes)/1e6, float64(p.Bytes)/1e9, p.Seconds, p.ReadBW/1e9, p.WriteBW/1e9, p.FirstRate/1e9, BurstWindow, p.SteadyRate/1e9, burst)
}

// Disk is the disk of the profile the calibration derives: the rates
// alone, the latency, and how reads and writes share the device
// (diskSharing).
func (c Calibration) Disk() devices.Disk {
	combined, share, shared := diskSharing(c)
	return c.Limit.Hold(devices.Disk{
		Read: devices.Bandwidth(c.ReadBW), Write: devices.Bandwidth(c.WriteBW),
		Latency:    devices.Duration(time.Duration(c.LatencySeconds * 1e9)),
		FullDuplex: !shared, Combined: devices.Bandwidth(combined), ReadShare: share,
	})
}

// MeanDisk is the disk measured twice, before and after a run, as one
// calibration: each rate the mean of the two measurements' time per byte
// (the harmonic mean), the latency their mean. A run in between saw the
// device somewhere between the two.
func MeanDisk(a, b Calibration) Calibration {
	h := func(x, y float64) float64 {
		if x <= 0 || y <= 0 {
			return math.Max(x, y)
		}
		return 2 / (1/x + 1/y)
	}
	var paired *PairedDisk
	if a.Paired != nil && b.Paired != nil {
		p := *a.Paired
		p.ReadBW, p.WriteBW = h(a.Paired.ReadBW, b.Paired.ReadBW), h(a.Paired.WriteBW, b.Paired.WriteBW)
		p.ChecksumBW, p.VerifyBW, p.SumBW = h(a.Paired.ChecksumBW, b.Paired.ChecksumBW), h(a.Paired.VerifyBW, b.Paired.VerifyBW), h(a.Paired.SumBW, b.Paired.SumBW)
		p.SteadyRate, p.FirstRate = h(a.Paired.SteadyRate, b.Paired.SteadyRate), h(a.Paired.FirstRate, b.Paired.FirstRate)
		paired = &p
	}
	cat := func(x, y []float64) []float64 { return append(append([]float64(nil), x...), y...) }
	return Calibration{
		Samples: DiskSamples{Read: cat(a.Samples.Read, b.Samples.Read), Write: cat(a.Samples.Write, b.Samples.Write),
			Both: cat(a.Samples.Both, b.Samples.Both), Checksum: cat(a.Samples.Checksum, b.Samples.Checksum)},
		Paired: paired,
		ReadBW: h(a.ReadBW, b.ReadBW), WriteBW: h(a.WriteBW, b.WriteBW),
		BothBW: h(a.BothBW, b.BothBW), BothReadBW: h(a.BothReadBW, b.BothReadBW), BothWriteBW: h(a.BothWriteBW, b.BothWriteBW),
		LatencySeconds: (a.LatencySeconds + b.LatencySeconds) / 2, CopyBW: h(a.CopyBW, b.CopyBW),
		ChecksumBW: h(a.ChecksumBW, b.ChecksumBW), Limit: a.Limit,
	}
}

// diskSharing derives how reads and writes share the disk from the
// calibration's two independent streams: shared when both at once move
// less than 95% of the two alone; then the combined rate is what the two
// moved while both ran (kept between max(read, write) and read + write,
// as the profile requires) and the read share is the reads' part of it.
func diskSharing(cal Calibration) (combined, share float64, shared bool) {
	both := cal.BothReadBW + cal.BothWriteBW
	if both <= 0 { // no overlap measured: the pass's overall rate
		both = cal.BothBW
	}
	if both >= 0.95*(cal.ReadBW+cal.WriteBW) {
		return 0, 0, false
	}
	combined = math.Min(math.Max(both, math.Max(cal.ReadBW, cal.WriteBW)), cal.ReadBW+cal.WriteBW)
	if cal.BothReadBW > 0 && cal.BothWriteBW > 0 {
		share = cal.BothReadBW / (cal.BothReadBW + cal.BothWriteBW)
	}
	return combined, share, true
}

// calibrateDisk measures the disk holding opt.Dir with opt.Files scratch
// files of opt.FileBytes: writes alone, reads alone (each followed by the
// loader's checksum, timed apart), reads and writes at once as two
// independent streams and as the buffer manager pairs them (PairedDisk),
// and the request latency; each rate is the median of three passes (the disk is
// shared). Under a kernel limit it measures the disk outside it and
// records the limit (Calibration.Limit).
func calibrateDisk(cal *Calibration, opt CalibrateOptions) error {
	cal.Limit = diskcap.InForce()
	return diskcap.Unlimited(func() error { return measureDisk(cal, opt) })
}

func measureDisk(cal *Calibration, opt CalibrateOptions) error {
	dir, release, err := scratchDir(opt.Dir, ".tierflow-calibrate-*")
	if err != nil {
		return fmt.Errorf("calibrate: scratch directory in %s: %w", opt.Dir, err)
	}
	defer release()
	b, err := newDiskBench(dir, opt)
	if err != nil {
		return err
	}
	defer b.close()
	for _, step := range []func(*Calibration) error{b.writes, b.reads, b.both, b.paired, b.latency} {
		if err := step(cal); err != nil {
			return err
		}
	}
	cal.adoptPaired()
	return nil
}

// diskBench is a scratch store of 2·n partition-sized files on the disk
// under test and two buffers holding a partition's kind of bytes
// (fillPartitionLike): reads land in buf, the writes alone come from it
// too, and the writes beside reads come from other.
type diskBench struct {
	st         *store.Store
	buf, other *store.Buffer
	rng        *rand.Rand
	n          int
	size       int64
	// pairedSeconds is the least the paired measurement runs.
	pairedSeconds float64
}

func newDiskBench(dir string, opt CalibrateOptions) (*diskBench, error) {
	b := &diskBench{st: &store.Store{Dir: dir, M: store.Manifest{PartitionBytes: opt.FileBytes}}, rng: rand.New(rand.NewPCG(1, 2)), n: opt.Files, size: opt.FileBytes, pairedSeconds: PairedSeconds}
	if opt.Paired > 0 {
		b.pairedSeconds = opt.Paired.Seconds()
	}
	if err := os.Mkdir(filepath.Join(dir, "partitions"), 0o755); err != nil {
		return nil, err
	}
	var err error
	if b.buf, err = b.st.NewBuffer(); err != nil {
		return nil, err
	}
	if b.other, err = b.st.NewBuffer(); err != nil {
		b.buf.Free()
		return nil, err
	}
	// What is written is a partition's kind of bytes, different in the
	// two buffers (fillPartitionLike).
	fillPartitionLike(b.buf, 1)
	fillPartitionLike(b.other, 2)
	// Create the files once so the timed writes overwrite, as partition
	// write-backs do.
	for i := 0; i < 2*b.n; i++ {
		if _, err := b.st.WritePartition(i, b.buf); err != nil {
			b.close()
			return nil, err
		}
	}
	return b, nil
}

func (b *diskBench) close() {
	b.buf.Free()
	b.other.Free()
}

// total is the bytes of one pass over n files.
func (b *diskBench) total() float64 { return float64(b.size) * float64(b.n) }

// median times f three times and returns the median seconds and all
// three.
func median(f func() error) (float64, []float64, error) {
	var xs []float64
	for r := 0; r < 3; r++ {
		t := time.Now()
		if err := f(); err != nil {
			return 0, nil, err
		}
		xs = append(xs, time.Since(t).Seconds())
	}
	all := append([]float64(nil), xs...)
	sort.Float64s(xs)
	return xs[1], all, nil
}

// rates are bytes over each of secs.
func rates(bytes float64, secs []float64) []float64 {
	out := make([]float64, 0, len(secs))
	for _, s := range secs {
		if s > 0 {
			out = append(out, bytes/s)
		}
	}
	return out
}

// writes measures writes alone.
func (b *diskBench) writes(cal *Calibration) error {
	sec, all, err := median(func() error {
		for i := 0; i < b.n; i++ {
			if _, err := b.st.WritePartition(i, b.buf); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	cal.WriteBW = b.total() / sec
	cal.Samples.Write = rates(b.total(), all)
	return nil
}

// reads measures reads alone, each followed by a checksum of the buffer
// it filled (the loader's work); the two are timed apart.
func (b *diskBench) reads(cal *Calibration) error {
	var reads, sums []float64
	if _, _, err := median(func() error {
		var rd, cs time.Duration
		for i := 0; i < b.n; i++ {
			t0 := time.Now()
			if _, err := b.st.ReadPartition(i, b.buf); err != nil {
				return err
			}
			t1 := time.Now()
			store.Checksum(b.buf.Bytes())
			rd, cs = rd+t1.Sub(t0), cs+time.Since(t1)
		}
		reads, sums = append(reads, rd.Seconds()), append(sums, cs.Seconds())
		return nil
	}); err != nil {
		return err
	}
	cal.Samples.Read, cal.Samples.Checksum = rates(b.total(), reads), rates(b.total(), sums)
	sort.Float64s(reads)
	sort.Float64s(sums)
	cal.ReadBW = b.total() / reads[len(reads)/2]
	cal.ChecksumBW = b.total() / sums[len(sums)/2]
	return nil
}

// both measures reads and writes at once: do they add up, or share the
// device, and how does it split them? Each stream notes when each of its
// files is done; the rates while both run come from the bytes each moved
// until the first stream ended (the other's file in flight then counted
// by the time it had spent on it).
func (b *diskBench) both(cal *Calibration) error {
	var overlaps [][2]float64 // read and write bytes/s while both ran, per pass
	sec, _, err := median(func() error {
		start := time.Now()
		var rdone, wdone []float64
		var werr error
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := b.n; i < 2*b.n; i++ {
				if _, err := b.st.WritePartition(i, b.other); err != nil {
					werr = err
					return
				}
				wdone = append(wdone, time.Since(start).Seconds())
			}
		}()
		var rerr error
		for i := 0; i < b.n && rerr == nil; i++ {
			if _, rerr = b.st.ReadPartition(i, b.buf); rerr == nil {
				rdone = append(rdone, time.Since(start).Seconds())
			}
		}
		wg.Wait()
		if err := errors.Join(rerr, werr); err != nil {
			return err
		}
		overlaps = append(overlaps, overlapRates(rdone, wdone, float64(b.size)))
		return nil
	})
	if err != nil {
		return err
	}
	cal.BothBW = 2 * b.total() / sec
	for _, o := range overlaps {
		cal.Samples.Both = append(cal.Samples.Both, o[0]+o[1])
	}
	sort.Slice(overlaps, func(i, j int) bool { return overlaps[i][0]+overlaps[i][1] < overlaps[j][0]+overlaps[j][1] })
	cal.BothReadBW, cal.BothWriteBW = overlaps[len(overlaps)/2][0], overlaps[len(overlaps)/2][1]
	return nil
}

// latency measures the per-request latency: small aligned O_DIRECT reads
// at random offsets.
func (b *diskBench) latency(cal *Calibration) error {
	f, err := store.OpenDirect(b.st.PartitionPath(0), os.O_RDONLY)
	if err != nil {
		return err
	}
	defer f.Close()
	small := b.buf.Bytes()[:store.Align]
	const probes = 200
	t := time.Now()
	for i := 0; i < probes; i++ {
		off := b.rng.Int64N(b.size/store.Align) * store.Align
		if _, err := f.ReadAt(small, off); err != nil {
			return err
		}
	}
	cal.LatencySeconds = time.Since(t).Seconds() / probes
	return nil
}

// overlapRates returns the read and write rates while two streams of
// files of size bytes ran at once, from the times (since both started)
// at which each stream finished each of its files: the bytes each had
// moved when the first of them ended, over that time. The file the other
// stream had in flight then counts by the share of its time spent, at
// that stream's mean pace over its files so far.
func overlapRates(rdone, wdone []float64, size float64) [2]float64 {
	if len(rdone) == 0 || len(wdone) == 0 {
		return [2]float64{}
	}
	end := math.Min(rdone[len(rdone)-1], wdone[len(wdone)-1])
	if end <= 0 {
		return [2]float64{}
	}
	moved := func(done []float64) float64 {
		k := sort.SearchFloat64s(done, end+1e-12) // files finished by end
		b := float64(k) * size
		if k < len(done) {
			prev := 0.0
			if k > 0 {
				prev = done[k-1]
			}
			if d := done[k] - prev; d > 0 {
				b += size * (end - prev) / d
			}
		}
		return b
	}
	return [2]float64{moved(rdone) / end, moved(wdone) / end}
}

func measureCopy() float64 {
	const n = 64 << 20
	a, b := make([]byte, n), make([]byte, n)
	copy(b, a)
	start := time.Now()
	rounds := 0
	for time.Since(start) < 300*time.Millisecond {
		copy(b, a)
		rounds++
	}
	return float64(rounds) * n / time.Since(start).Seconds()
}

func memTotal() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 8 << 30
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			fields := strings.Fields(rest)
			if kb, err := strconv.ParseInt(fields[0], 10, 64); err == nil {
				return kb << 10
			}
		}
	}
	return 8 << 30
}
