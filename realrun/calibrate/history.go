package calibrate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"time"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/internal/atomicfile"
	"github.com/tierflow/tierflow/internal/stats"
)

// History is a machine's rates as measured at different times: every
// calibration (and any other measurement of the same rates) adds an
// entry. A calibration's own spread covers its minutes; the History's
// drift covers the hours between calibrations, which on a shared machine
// is where most of the variation is (the disk measured 1.0–1.7 GB/s
// within a quarter of an hour here). Widen gives a profile that drift.
type History struct {
	Entries []HistoryEntry `json:"entries"`
}

// HistoryEntry is one measurement: when, the series it belongs to (what
// makes two measurements of a rate comparable: the transfer size of the
// disk's, the training shape of the engine's), and the rates, by their
// spread keys (devices.SpreadKeys), in base units.
type HistoryEntry struct {
	Time   time.Time          `json:"time"`
	Series string             `json:"series"`
	Rates  map[string]float64 `json:"rates"`
}

// DiskSeries and EngineSeries name the series of the disk's rates at
// transfers of partBytes and of the engine's at shape.
func DiskSeries(partBytes int64) string { return fmt.Sprintf("disk %d", partBytes) }

// EngineSeries is the series of the CPU engine's rate at shape.
func EngineSeries(shape devices.TrainShape) string {
	return fmt.Sprintf("engine %s d=%d batch=%d negatives=%d chunk=%d workers=%d rows=%d", shape.Model, shape.Dim, shape.Batch, shape.Negatives, shape.Chunk, shape.Workers, shape.Rows)
}

// Add records p's rates measured at time at: the disk's read, write and
// combined rates and the checksum rate in the series of partBytes, and
// the CPU engine's edge rates (the spread keys cpu.train.*) in the series
// of p's recorded shape. Rates p does not set are left out.
func (h *History) Add(at time.Time, partBytes int64, p devices.Profile) {
	disk := map[string]float64{} // under a kernel limit the limit, not the device, sets them
	for k, v := range map[string]float64{"disk.read": float64(p.Disk.Read), "disk.write": float64(p.Disk.Write),
		"disk.combined": float64(p.Disk.Combined), "cpu.checksum": float64(p.CPU.Checksum)} {
		if v > 0 && p.Disk.Throttle.Read == 0 && p.Disk.Throttle.Write == 0 {
			disk[k] = v
		}
	}
	if len(disk) > 0 {
		h.Entries = append(h.Entries, HistoryEntry{Time: at, Series: DiskSeries(partBytes), Rates: disk})
	}
	engine := map[string]float64{}
	for _, m := range p.CPU.Train.Measured() {
		tc, _ := p.CPU.Train.For(m)
		if tc.Edges > 0 {
			engine[p.CPU.Train.SpreadKey(m)] = float64(tc.Edges)
		}
	}
	if len(engine) > 0 && p.CPU.TrainShape != nil {
		h.Entries = append(h.Entries, HistoryEntry{Time: at, Series: EngineSeries(*p.CPU.TrainShape), Rates: engine})
	}
}

// Since is h with the entries at or after t only.
func (h History) Since(t time.Time) History {
	var out History
	for _, e := range h.Entries {
		if !e.Time.Before(t) {
			out.Entries = append(out.Entries, e)
		}
	}
	return out
}

// Drift is, for each rate measured at least twice in one series, how far
// its measurements strayed from their series' median: the slowest and
// the fastest over the median, the widest over all series (a Range of
// ratios, Low ≤ 1 ≤ High). Entries is how many of h's measurements it is
// over (those in a series measured more than once).
func (h History) Drift() (drift map[string]devices.Range, entries int) {
	bySeries := map[string]map[string][]float64{}
	count := map[string]int{}
	for _, e := range h.Entries {
		if bySeries[e.Series] == nil {
			bySeries[e.Series] = map[string][]float64{}
		}
		count[e.Series]++
		for k, v := range e.Rates {
			if v > 0 {
				bySeries[e.Series][k] = append(bySeries[e.Series][k], v)
			}
		}
	}
	drift = map[string]devices.Range{}
	for series, rates := range bySeries {
		if count[series] >= 2 {
			entries += count[series]
		}
		for k, xs := range rates {
			if len(xs) < 2 {
				continue
			}
			med := stats.Median(xs)
			lo, hi := slices.Min(xs)/med, slices.Max(xs)/med
			if r, ok := drift[k]; ok {
				lo, hi = min(lo, r.Low), max(hi, r.High)
			}
			drift[k] = devices.Range{Low: lo, High: hi}
		}
	}
	return drift, entries
}

// Widen widens p's spread by h's drift: each rate p sets and h drifted
// in gets a range holding both its own and its value times the drift's
// extremes. It returns the keys widened.
func (h History) Widen(p *devices.Profile) ([]string, error) {
	drift, _ := h.Drift()
	var widened []string
	for _, key := range devices.SpreadKeys() {
		d, ok := drift[key]
		if !ok {
			continue
		}
		v, ok := p.Rate(key)
		if !ok || v <= 0 {
			continue
		}
		lo, hi := min(v*d.Low, v), max(v*d.High, v)
		if r, ok := p.Spread.Of(key); ok {
			lo, hi = min(lo, r.Low), max(hi, r.High)
		}
		if err := p.SetSpread(key, lo, hi); err != nil {
			return widened, fmt.Errorf("history: %w", err)
		}
		widened = append(widened, key)
	}
	if len(widened) > 0 && p.Spread.Samples < 2 {
		p.Spread.Samples = 2
	}
	return widened, nil
}

// ReadHistory reads a history file; a file that does not exist is an
// empty History.
func ReadHistory(path string) (History, error) {
	var h History
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return h, nil
	}
	if err != nil {
		return h, fmt.Errorf("history %s: %w", path, err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("history %s: %w", path, err)
	}
	return h, nil
}

// Write writes h to path whole or not at all.
func (h History) Write(path string) error {
	b, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteBytes(path, append(b, '\n')); err != nil {
		return fmt.Errorf("history %s: %w", path, err)
	}
	return nil
}

// AddToHistory records the calibration in the history file path (created
// when missing, written whole or not at all) as measured at now, and
// widens its profile's spread by the drift of the history's measurements
// from since on (Calibration.Drift says by how much): a profile
// calibrated on a machine that has been measured before predicts with
// the range its rates covered over those hours, not only its own
// minutes.
func (c *Calibration) AddToHistory(path string, now, since time.Time) error {
	h, err := ReadHistory(path)
	if err != nil {
		return err
	}
	h.Add(now, c.FileBytes, c.Profile)
	if err := h.Write(path); err != nil {
		return err
	}
	recent := h.Since(since)
	if _, err := recent.Widen(&c.Profile); err != nil {
		return err
	}
	c.Drift, c.DriftEntries = recent.Drift()
	c.DriftSince = since
	return nil
}
