// Command gpureport turns what the GPU bundle's run.sh wrote (and the
// extra --compare-sim runs beside it) into REPRODUCE's tables: the
// throughput shapes against the GPU's measured ceilings, the chunk
// step's launches, the quality runs, every data-bound comparison pooled
// per buffer mode and shape (median, range and error per ordering, the
// first epoch of each process marked), which pairs of orderings the
// simulator ranks as measured, and Marius Figure 10's ratios.
//
//	go run ./cmd/internal/gpureport results/gpu/h100-graphs
//
// JSON files may be gzipped (name.json.gz).
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/tierflow/tierflow/validate"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gpureport DIR (an output folder of gpu-bundle/run.sh)")
		os.Exit(2)
	}
	if err := report(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "gpureport:", err)
		os.Exit(1)
	}
}

// readJSON decodes path, or path.gz when path is absent.
func readJSON(path string, v any) error {
	f, err := os.Open(path)
	var r io.Reader = f
	if os.IsNotExist(err) {
		if f, err = os.Open(path + ".gz"); err == nil {
			var gz *gzip.Reader
			if gz, err = gzip.NewReader(f); err == nil {
				r = gz
			}
		}
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if err := json.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// glob is the JSON files (gzipped or not) matching pattern, by name.
func glob(pattern string) []string {
	a, _ := filepath.Glob(pattern)
	b, _ := filepath.Glob(pattern + ".gz")
	for _, p := range b {
		a = append(a, strings.TrimSuffix(p, ".gz"))
	}
	sort.Strings(a)
	return slices.Compact(a)
}

func report(w io.Writer, dir string) error {
	var ceil map[string]any
	if err := readJSON(filepath.Join(dir, "ceilings.json"), &ceil); err != nil {
		return err
	}
	num := func(k string) float64 { v, _ := ceil[k].(float64); return v }
	fmt.Fprintf(w, "## Ceilings (%v)\n\n", ceil["gpu"])
	fmt.Fprintln(w, "| product | FP32 TFLOP/s | TF32 TFLOP/s |\n| --- | ---: | ---: |")
	for _, k := range []struct{ name, key string }{{"8192³", "sgemm"}, {"50 × (1000×100 · 100×1000)", "sgemm_batched"},
		{"one chunk's three stacked products (1.2 GFLOP)", "chunk"}, {"the same, 9 chunks batched", "piece"}} {
		fmt.Fprintf(w, "| %s | %.1f | %.1f |\n", k.name, num(k.key+"_fp32_flops")/1e12, num(k.key+"_tf32_flops")/1e12)
	}
	fmt.Fprintf(w, "\ncopies: device-to-device %.0f GB/s, H2D %.1f GB/s, D2H %.1f GB/s\n\n", num("d2d_bytes_per_s")/1e9, num("h2d_bytes_per_s")/1e9, num("d2h_bytes_per_s")/1e9)
	if err := throughput(w, dir, num); err != nil {
		return err
	}
	kernels(w, filepath.Join(dir, "profile", "kernels.txt"))
	if err := quality(w, dir); err != nil {
		return err
	}
	return compares(w, dir)
}

// run is the part of realrun --json that the tables read.
type run struct {
	Model     string `json:"model"`
	Dim       int    `json:"dim"`
	Negatives int    `json:"negatives"`
	Epochs    []struct {
		EdgesPerSecond float64 `json:"edges_per_second"`
		EpochSeconds   float64 `json:"epoch_seconds"`
		StallSeconds   float64 `json:"stall_seconds"`
		GPUUtilization float64 `json:"gpu_utilization"`
		MRR            float64 `json:"mrr"`
		Test           *struct {
			MRR float64 `json:"mrr"`
		} `json:"test"`
		GPU *struct {
			GEMM string `json:"gemm"`
		} `json:"gpu"`
	} `json:"epochs"`
}

func throughput(w io.Writer, dir string, ceil func(string) float64) error {
	fmt.Fprintln(w, "## Throughput (one epoch each; TFLOP/s at 12·m·d FLOP an edge; of the ceiling: of cuBLAS's rate at the batched shape, 50 × (1000×100 · 100×1000), in the same precision)")
	fmt.Fprintln(w, "\n| shape | edges/s | TFLOP/s | of the ceiling | epoch s | stall s | GPU busy |\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, path := range glob(filepath.Join(dir, "throughput", "*.json")) {
		var r run
		if err := readJSON(path, &r); err != nil {
			return err
		}
		if len(r.Epochs) == 0 {
			continue
		}
		e := r.Epochs[len(r.Epochs)-1]
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		flops := 12 * float64(r.Negatives) * float64(r.Dim) * e.EdgesPerSecond
		if r.Model == "complex" {
			flops *= 2
		}
		tf32 := e.GPU != nil && strings.Contains(e.GPU.GEMM, "TF32")
		c := ceil("sgemm_batched_fp32_flops")
		if tf32 {
			c = ceil("sgemm_batched_tf32_flops")
		}
		frac := "—"
		if c > 0 {
			frac = fmt.Sprintf("%.0f%%", 100*flops/c)
		}
		fmt.Fprintf(w, "| %s%s | %.0f | %.1f | %s | %.2f | %.2f | %.0f%% |\n", name, map[bool]string{true: " (TF32)", false: ""}[tf32],
			e.EdgesPerSecond, flops/1e12, frac, e.EpochSeconds, e.StallSeconds, 100*e.GPUUtilization)
	}
	fmt.Fprintln(w)
	return nil
}

// kernels copies BenchmarkChunkKernels' lines as a table.
func kernels(w io.Writer, path string) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	fmt.Fprintln(w, "## The chunk step's launches (BenchmarkChunkKernels: 300 back to back; GPU µs between events, host µs to issue)")
	fmt.Fprintln(w, "\n| launch | GPU µs | host µs | edges/s |\n| --- | ---: | ---: | ---: |")
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 4 || !strings.HasPrefix(fs[0], "BenchmarkChunkKernels/") {
			continue
		}
		name := strings.TrimPrefix(fs[0], "BenchmarkChunkKernels/")
		name = name[:strings.LastIndex(name, "-")]
		vals := map[string]string{}
		for i := 1; i+1 < len(fs); i++ {
			vals[fs[i+1]] = fs[i]
		}
		eps := vals["edges/s"]
		if eps == "" {
			eps = "—"
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", name, vals["gpu-us/op"], vals["host-us/op"], eps)
	}
	fmt.Fprintln(w)
}

func quality(w io.Writer, dir string) error {
	type agg struct {
		mrr, secs []float64
	}
	byVariant := map[string]*agg{}
	var names []string
	for _, path := range glob(filepath.Join(dir, "quality", "*.json")) {
		var r run
		if err := readJSON(path, &r); err != nil {
			return err
		}
		if len(r.Epochs) == 0 {
			continue
		}
		base := strings.TrimSuffix(filepath.Base(path), ".json")
		v := base
		if i := strings.LastIndex(base, "-s"); i > 0 {
			v = base[:i]
		}
		a := byVariant[v]
		if a == nil {
			a = &agg{}
			byVariant[v] = a
			names = append(names, v)
		}
		last := r.Epochs[len(r.Epochs)-1]
		mrr := last.MRR
		if last.Test != nil {
			mrr = last.Test.MRR
		}
		var s float64
		for _, e := range r.Epochs {
			s += e.EpochSeconds
		}
		a.mrr, a.secs = append(a.mrr, mrr), append(a.secs, s)
	}
	if len(names) == 0 {
		return nil
	}
	fmt.Fprintln(w, "## Quality (filtered test MRR at the end; seconds of the epochs, eval excluded)")
	fmt.Fprintln(w, "\n| variant | runs | MRR min / median / max | seconds, median |\n| --- | ---: | --- | ---: |")
	for _, v := range names {
		a := byVariant[v]
		sort.Float64s(a.mrr)
		fmt.Fprintf(w, "| %s | %d | %.4f / %.4f / %.4f | %.2f |\n", v, len(a.mrr), a.mrr[0], median(a.mrr), a.mrr[len(a.mrr)-1], median(a.secs))
	}
	fmt.Fprintln(w)
	return nil
}

func median(x []float64) float64 {
	s := append([]float64(nil), x...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// epochRun is one compared epoch: its comparison and whether it was the
// first epoch of its process.
type epochRun struct {
	validate.Comparison
	first bool
}

// group is the comparisons of one buffer mode and shape, in file order.
type group struct {
	key   string
	runs  []epochRun
	files []string
}

func compares(w io.Writer, dir string) error {
	files := append(glob(filepath.Join(dir, "compare-sim", "*.json")), glob(filepath.Join(dir, "extra", "*.json"))...)
	var groups []*group
	find := func(key string) *group {
		for _, g := range groups {
			if g.key == key {
				return g
			}
		}
		g := &group{key: key}
		groups = append(groups, g)
		return g
	}
	for _, path := range files {
		var out validate.CompareOutput
		if err := readJSON(path, &out); err != nil || len(out.Results) == 0 {
			continue
		}
		for i, c := range out.Results {
			m := c.Measured
			key := fmt.Sprintf("%s, %s, d=%d, p=%d", m.System, m.Dataset, m.Dim, m.P)
			g := find(key)
			g.runs = append(g.runs, epochRun{Comparison: c, first: i == 0})
			if !slices.Contains(g.files, filepath.Base(path)) {
				g.files = append(g.files, filepath.Base(path))
			}
		}
	}
	for _, g := range groups {
		writeGroup(w, g)
	}
	return nil
}

func writeGroup(w io.Writer, g *group) {
	fmt.Fprintf(w, "## %s (%s)\n\n", g.key, strings.Join(g.files, ", "))
	fmt.Fprintln(w, "| ordering | c | epochs | measured s, median (min–max) | predicted s | error of the median | errors min … max | read MB | swaps | bytes as the Plan |")
	fmt.Fprintln(w, "| --- | ---: | ---: | --- | ---: | ---: | --- | ---: | ---: | --- |")
	var orders []string
	by := map[string][]epochRun{}
	for _, r := range g.runs {
		if _, ok := by[r.Ordering]; !ok {
			orders = append(orders, r.Ordering)
		}
		by[r.Ordering] = append(by[r.Ordering], r)
	}
	within, steady, steadyWithin, all := 0, 0, 0, 0
	exact := true
	for _, o := range orders {
		rs := by[o]
		var meas, errs []float64
		for _, r := range rs {
			meas = append(meas, r.Measured.EpochSeconds)
			errs = append(errs, r.RelativeError.EpochSeconds)
			exact = exact && r.CountsMatch
			all++
			ok := abs(r.RelativeError.EpochSeconds) <= 0.10
			if ok {
				within++
			}
			if !r.first {
				steady++
				if ok {
					steadyWithin++
				}
			}
		}
		pred := rs[0].Predicted.EpochSeconds
		med := median(meas)
		sort.Float64s(meas)
		sort.Float64s(errs)
		fmt.Fprintf(w, "| %s | %d | %d | %.3f (%.3f–%.3f) | %.3f | %+.1f%% | %+.1f%% … %+.1f%% | %.0f | %d | %v |\n", o, rs[0].Measured.C, len(rs), med, meas[0], meas[len(meas)-1],
			pred, 100*(pred/med-1), 100*errs[0], 100*errs[len(errs)-1], float64(rs[0].Measured.ReadBytes)/1e6, rs[0].Measured.Swaps, boolWord(allMatch(rs)))
	}
	fmt.Fprintf(w, "\n* %d of %d epochs within 10%% of their prediction; %d of %d after the first epoch of each process (the first ones: %s).\n",
		within, all, steadyWithin, steady, firsts(g.runs))
	fmt.Fprintf(w, "* Loads, swaps, writes and bytes as the Plan's in every epoch: %s.\n", boolWord(exact))
	// Pairs whose measured ranges (after each process's first epoch) do
	// not overlap: does the prediction order them the same way?
	var distinct, agree int
	var notes []string
	for i, a := range orders {
		for _, b := range orders[i+1:] {
			la, ha := span(by[a])
			lb, hb := span(by[b])
			if ha < lb || hb < la {
				distinct++
				pa, pb := by[a][0].Predicted.EpochSeconds, by[b][0].Predicted.EpochSeconds
				if (ha < lb) == (pa < pb) {
					agree++
				} else {
					notes = append(notes, fmt.Sprintf("%s–%s", a, b))
				}
			}
		}
	}
	fmt.Fprintf(w, "* Pairs of orderings whose measured ranges do not overlap (each process's first epoch left out): %d; ranked the same way by the prediction: %d", distinct, agree)
	if len(notes) > 0 {
		fmt.Fprintf(w, " (not: %s)", strings.Join(notes, ", "))
	}
	fmt.Fprintln(w, ".")
	if _, ok := by["beta"]; ok && len(orders) > 1 {
		bm, bp := steadyMedian(by["beta"]), by["beta"][0].Predicted.EpochSeconds
		bl, bh := span(by["beta"])
		bio := float64(by["beta"][0].Measured.ReadBytes + by["beta"][0].Measured.WriteBytes)
		for _, o := range orders {
			if o == "beta" {
				continue
			}
			l, h := span(by[o])
			io := float64(by[o][0].Measured.ReadBytes+by[o][0].Measured.WriteBytes) / bio
			fmt.Fprintf(w, "* %s ÷ BETA: I/O %.2f×; epoch measured %.2f× (%.2f–%.2f over the ranges), predicted %.2f×.\n", o, io,
				steadyMedian(by[o])/bm, l/bh, h/bl, by[o][0].Predicted.EpochSeconds/bp)
		}
	}
	fmt.Fprintln(w)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

func boolWord(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func allMatch(rs []epochRun) bool {
	for _, r := range rs {
		if !r.CountsMatch {
			return false
		}
	}
	return true
}

// span is the min and max measured epoch of rs, each process's first
// epoch left out where others remain.
func span(rs []epochRun) (lo, hi float64) {
	lo, hi = 1e300, -1e300
	for _, r := range steadyRuns(rs) {
		lo, hi = min(lo, r.Measured.EpochSeconds), max(hi, r.Measured.EpochSeconds)
	}
	return lo, hi
}

func steadyRuns(rs []epochRun) []epochRun {
	var out []epochRun
	for _, r := range rs {
		if !r.first {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return rs
	}
	return out
}

func steadyMedian(rs []epochRun) float64 {
	var x []float64
	for _, r := range steadyRuns(rs) {
		x = append(x, r.Measured.EpochSeconds)
	}
	return median(x)
}

func firsts(rs []epochRun) string {
	var s []string
	for _, r := range rs {
		if r.first {
			s = append(s, fmt.Sprintf("%s %+.1f%%", r.Ordering, 100*r.RelativeError.EpochSeconds))
		}
	}
	return strings.Join(s, ", ")
}
