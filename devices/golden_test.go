package devices

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// golden compares v, as indented JSON, with testdata/name (rewritten with
// -update).
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	require.NoError(t, err)
	compare(t, name, append(got, '\n'))
}

// goldenLines compares rows, one JSON object a line, with testdata/name.
func goldenLines[T any](t *testing.T, name string, rows []T) {
	t.Helper()
	var got []byte
	for _, r := range rows {
		line, err := json.Marshal(r)
		require.NoError(t, err)
		got = append(append(got, line...), '\n')
	}
	compare(t, name, got)
}

func compare(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got))
}

// TestPresetsGolden pins every value of every built-in preset and of the
// testdata variants, and the YAML they are written back as.
func TestPresetsGolden(t *testing.T) {
	type entry struct {
		Profile Profile `json:"profile"`
		YAML    string  `json:"yaml"`
	}
	all := map[string]entry{}
	add := func(key string, p Profile, err error) {
		require.NoError(t, err, key)
		y, err := p.YAML()
		require.NoError(t, err, key)
		all[key] = entry{p, string(y)}
	}
	for _, name := range PresetNames() {
		p, err := Preset(name)
		add(name, p, err)
	}
	for _, name := range []string{"p3.2xlarge-shared", "p3.2xlarge-duplex"} {
		p, err := Load(filepath.Join("testdata", name+".yaml"))
		add("testdata/"+name, p, err)
	}
	golden(t, "presets.golden.json", all)
}

// unitInputs are values written in profiles, good and bad, for
// TestUnitsGolden.
var unitInputs = []string{
	"0", "0.0", "-0", "+0", "0 MB/s", "0 B", "0s", "00", "0e5", "0x0",
	"400 MB/s", "400MB/s", "  3 GB/s ", "12 GiB/s", "500 kB/s", "1 TB/s", "2 KiB/s", "1 PiB/s", "3 TiB/s",
	"1.5e3 MB/s", "1.5E3MB/s", "1e-3 GB/s", "1e+3 B/s", "+7 B/s", ".5 GB/s", "5. GB/s", "1.5 Mi B/s", "2 M\tB/s",
	"400 MB", "61 GiB", "400", "1e9", "-400 MB/s", "NaN MB/s", "nan", "-Inf GB/s", "+inf", "infinity", ".nan",
	"1e999 GB/s", "1e-400 B/s", "7 TFLOP/s", "5M edges/s", "400 Mbps", "400 KB/s", "400 MB/s/s", "fast", "",
	"   ", "0x10 MB/s", "400 mB/s", "400 MB/S", "5 EB", "1 P", "50Mi", "50 Ki", "k", "MB/s", "-", "+.", ".",
	"1e", "1e+", "5edges/s", "5e", "1ee3 B", "1.2.3 MB/s", "4 00 MB/s", "400 MB/s\nmore", "1_000 B",
	"16 GB", "61 GiB", "512 MiB", "512MiB", "1.5 GiB", "0.1 GB", "7 B", "1 PB", "8 PiB", "1.5 B", "0.5 B",
	"9223372036854775807 B", "9223372036854775808 B", "-9223372036854775808 B", "9223372036854775807.0 B",
	"8 EiB", "10000 PiB", "8191 PiB", "8192 PiB", "Inf GB", "16 Gb", "lots", "16 GB/s", "16", "-1 GB", "1e-9 GB",
	"1.0000000001 GB", "0.3 kB", "1.1 GiB", "9.2e18 B", "9.3e18 B", "4611686018427387904 B", "3 KiB",
	"7 TFLOPS", "7TFLOPS", "19.5 TFLOP/s", "1 PFLOP/s", "500 GFLOP/s", "3e9 FLOP/s", "7 TiFLOP/s", "7 Tflops",
	"NaN FLOPS", "7 T FLOP/s", "7", "50M", "50G", "7 FLOP", "15.6 TFLOP/s",
	"1.462M edges/s", "50M edges/s", "50 M edges/s", "50Medges/s", "200 edges/s", "2.5k edges/s", "-5M edges/s",
	"50M edge/s", "50Mi edges/s", "3 GB/s", "1 edges/s",
	"1ms", "100us", "100µs", "1.5s", "-1ms", "1 ms", "5", "soon", "1h2m3.5s", "0.5ns", "9999999h",
	"1.7976931348623157e308 B/s", "4.9e-324 B/s", "5e-324 edges/s", "1.5e300 TB/s", "9.99 PiB/s", "1e-300 B/s",
	"0.1 MB/s", "0.3 GB/s", "6.08 GB/s", "1.462 GB/s", "123456789 B/s", "1023 B", "1025 B", "1.5 TiB/s",
}

// result is what a parser made of an input: the value (as a float and
// written back) or the error.
type result struct {
	Value  string `json:"value,omitempty"`
	String string `json:"string,omitempty"`
	Error  string `json:"error,omitempty"`
}

func resultOf[T interface{ String() string }](v T, f float64, err error) result {
	if err != nil {
		return result{Error: err.Error()}
	}
	return result{Value: strconv.FormatFloat(f, 'g', -1, 64), String: v.String()}
}

// TestUnitsGolden pins what every parser makes of unitInputs: values,
// their String forms and the exact error messages.
func TestUnitsGolden(t *testing.T) {
	type row struct {
		In        string `json:"in"`
		Bandwidth result `json:"bandwidth"`
		Bytes     result `json:"bytes"`
		FLOPRate  result `json:"flop_rate"`
		EdgeRate  result `json:"edge_rate"`
		Duration  result `json:"duration"`
	}
	rows := make([]row, len(unitInputs))
	for i, in := range unitInputs {
		bw, bwErr := ParseBandwidth(in)
		b, bErr := ParseBytes(in)
		fr, frErr := ParseFLOPRate(in)
		er, erErr := ParseEdgeRate(in)
		d, dErr := ParseDuration(in)
		rows[i] = row{
			In:        in,
			Bandwidth: resultOf(bw, float64(bw), bwErr),
			Bytes:     resultOf(b, float64(b), bErr),
			FLOPRate:  resultOf(fr, float64(fr), frErr),
			EdgeRate:  resultOf(er, float64(er), erErr),
			Duration:  resultOf(d, float64(d), dErr),
		}
		if bErr == nil {
			rows[i].Bytes.Value = strconv.FormatInt(int64(b), 10)
		}
	}
	goldenLines(t, "units.golden.jsonl", rows)
}

// TestStringGolden pins how values are written: the prefix family and
// size each String method picks.
func TestStringGolden(t *testing.T) {
	var vals []float64
	for _, m := range []float64{1, 1.5, 1.023, 6.08, 999, 1023, 1.462, 1.0 / 3} {
		for e := -3; e <= 19; e++ {
			v := m * math.Pow(10, float64(e))
			vals = append(vals, v, -v, m*math.Pow(2, float64(3*e)))
		}
	}
	vals = append(vals, 0, math.MaxInt64, math.MinInt64, math.Inf(1), math.NaN(), math.MaxFloat64, math.SmallestNonzeroFloat64)
	type row struct {
		Value     float64 `json:"value"`
		Bandwidth string  `json:"bandwidth"`
		Bytes     string  `json:"bytes"`
		FLOPRate  string  `json:"flop_rate"`
		EdgeRate  string  `json:"edge_rate"`
		Duration  string  `json:"duration"`
	}
	var rows []row
	for _, v := range vals {
		r := row{Bandwidth: Bandwidth(v).String(), FLOPRate: FLOPRate(v).String(), EdgeRate: EdgeRate(v).String()}
		if !math.IsNaN(v) && !math.IsInf(v, 0) && math.Abs(v) < math.MaxInt64 {
			r.Value = v
			r.Bytes = Bytes(v).String()
			r.Duration = Duration(v).String()
		}
		rows = append(rows, r)
	}
	goldenLines(t, "strings.golden.jsonl", rows)
}
