package devices

import (
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPresets(t *testing.T) {
	names := PresetNames()
	require.Equal(t, []string{"betty-rtx6000", "ge2-paper", "h100-nvme", "h200-nvme", "legend-a100", "p3.2xlarge", "pbg-paper"}, names)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, err := Preset(name)
			require.NoError(t, err)
			assert.Equal(t, name, p.Name)
			require.NoError(t, p.Validate())
			if name == "pbg-paper" {
				// PyTorch-BigGraph's machine trains on the CPU and is the
				// one preset with a network.
				assert.Zero(t, p.GPU.Count)
				assert.Positive(t, p.Network.Bandwidth)
			} else {
				assert.Positive(t, p.GPU.Count)
			}

			y, err := p.YAML()
			require.NoError(t, err)
			back, err := Parse(y, "round-trip")
			require.NoError(t, err, "%s", y)
			assert.Equal(t, p, back)

			r, err := Resolve(name)
			require.NoError(t, err)
			assert.Equal(t, p, r)
		})
	}

	p, err := Preset("p3.2xlarge")
	require.NoError(t, err)
	assert.Equal(t, Bandwidth(400e6), p.Disk.Read)
	assert.Equal(t, Bandwidth(400e6), p.Disk.Write)
	assert.False(t, p.Disk.FullDuplex)
	assert.InDelta(t, 500e6, float64(p.Disk.Combined), 1)
	assert.True(t, p.DiskReadWriteShared())
	assert.Equal(t, 8, p.CPU.Workers)
	assert.Equal(t, Bytes(61<<30), p.CPU.Memory)
	assert.Equal(t, Bytes(16e9), p.GPU.Memory)
	assert.Equal(t, FLOPRate(7e12), p.GPU.FLOPS)
	assert.Equal(t, EdgeRate(1.462e6), p.CPU.BatchEdges)
	assert.Equal(t, Bandwidth(6.08e9), p.CPU.GatherBW)
	assert.Equal(t, Duration(time.Millisecond), p.Disk.Latency)
	assert.Zero(t, p.SSDToGPU)

	l, err := Preset("legend-a100")
	require.NoError(t, err)
	assert.Equal(t, Direct{Read: 3e9, Write: 2e9}, l.SSDToGPU)
	assert.Equal(t, PCIe{H2D: 10e9, D2H: 10e9}, l.PCIe)
	assert.True(t, l.DiskReadWriteShared())

	_, err = Preset("p4")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown preset "p4"`)
	assert.Contains(t, err.Error(), "legend-a100")
}

// TestPresetComments checks that every value line of a preset carries a
// comment (inline or on the lines above) citing a source or saying
// "assumption".
func TestPresetComments(t *testing.T) {
	for _, name := range PresetNames() {
		data, err := presetFS.ReadFile("presets/" + name + ".yaml")
		require.NoError(t, err)
		commented := false
		for i, line := range strings.Split(string(data), "\n") {
			trim := strings.TrimSpace(line)
			switch {
			case strings.HasPrefix(trim, "#"):
				commented = true
			case trim == "" || strings.HasSuffix(trim, ":"):
			default:
				key, _, _ := strings.Cut(trim, ":")
				if key != "name" && key != "description" {
					assert.True(t, commented || strings.Contains(line, "#"), "%s line %d has no comment: %s", name, i+1, line)
				}
				commented = false
			}
		}
	}
}

func TestParseBandwidth(t *testing.T) {
	good := []struct {
		in   string
		want Bandwidth
	}{
		{"400 MB/s", 400e6},
		{"400MB/s", 400e6},
		{"  3 GB/s ", 3e9},
		{"12 GiB/s", 12 << 30},
		{"500 kB/s", 500e3},
		{"1 TB/s", 1e12},
		{"2 KiB/s", 2048},
		{"1.5e3 MB/s", 1.5e9},
		{"1.5E3MB/s", 1.5e9},
		{"+7 B/s", 7},
		{".5 GB/s", 0.5e9},
		{"0", 0},
		{"0.0", 0},
		{"-0", 0},
		{"0 MB/s", 0},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBandwidth(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseBandwidth(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	bad := []struct{ in, msg string }{
		{"400 MB", `"400 MB" is a size; want a bandwidth such as "400 MB/s"`},
		{"61 GiB", `"61 GiB" is a size; want a bandwidth such as "61 GiB/s"`},
		{"400", `missing unit in "400"`},
		{"1e9", `missing unit in "1e9"`},
		{"-400 MB/s", `negative bandwidth "-400 MB/s"`},
		{"NaN MB/s", "not a finite number"},
		{"nan", "not a finite number"},
		{"-Inf GB/s", "not a finite number"},
		{"1e999 GB/s", "too large"},
		{"7 TFLOP/s", "is a FLOP rate; want a bandwidth"},
		{"5M edges/s", "is an edge rate"},
		{"400 Mbps", `unknown unit "Mbps"`},
		{"400 KB/s", `unknown unit "KB/s"`},
		{"400 MB/s/s", "unknown unit"},
		{"fast", "does not start with a number"},
		{"", "empty value"},
		{"0x10 MB/s", "unknown unit"},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.in, func(t *testing.T) {
			got, err := ParseBandwidth(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
			assert.Zero(t, got)
		})
	}
}

func TestParseBytes(t *testing.T) {
	good := []struct {
		in   string
		want Bytes
	}{
		{"16 GB", 16e9},
		{"61 GiB", 61 << 30},
		{"512 MiB", 512 << 20},
		{"512MiB", 512 << 20},
		{"1.5 GiB", 3 << 29},
		{"0.1 GB", 1e8},
		{"7 B", 7},
		{"1 PB", 1e15},
		{"8 PiB", 8 << 50},
		{"9223372036854775807 B", math.MaxInt64},
		{"0", 0},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseBytes(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseBytes(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	bad := []struct{ in, msg string }{
		{"16 GB/s", `"16 GB/s" is a bandwidth; want a size such as "16 GB"`},
		{"16", `missing unit in "16"; want a size such as "16 GB"`},
		{"-1 GB", `negative size "-1 GB"`},
		{"1.5 B", "not a whole number of bytes"},
		{"9223372036854775808 B", "too large"},
		{"8 EiB", "unknown unit"},
		{"10000 PiB", "too large"},
		{"Inf GB", "not a finite number"},
		{"16 Gb", "unknown unit"},
		{"lots", "does not start with a number"},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.in, func(t *testing.T) {
			_, err := ParseBytes(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestParseRates(t *testing.T) {
	flops := []struct {
		in   string
		want FLOPRate
	}{
		{"7 TFLOP/s", 7e12},
		{"7 TFLOPS", 7e12},
		{"7TFLOPS", 7e12},
		{"19.5 TFLOP/s", 19.5e12},
		{"1 PFLOP/s", 1e15},
		{"500 GFLOP/s", 500e9},
		{"3e9 FLOP/s", 3e9},
		{"0", 0},
	}
	for _, tc := range flops {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseFLOPRate(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseFLOPRate(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	edges := []struct {
		in   string
		want EdgeRate
	}{
		{"1.462M edges/s", 1.462e6},
		{"50M edges/s", 50e6},
		{"50 M edges/s", 50e6},
		{"50Medges/s", 50e6},
		{"200 edges/s", 200},
		{"5edges/s", 5},
		{"2.5k edges/s", 2500},
		{"0", 0},
	}
	for _, tc := range edges {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseEdgeRate(tc.in)
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
			back, err := ParseEdgeRate(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	assert.Equal(t, "1.462M edges/s", EdgeRate(1.462e6).String())
	assert.Equal(t, "7 TFLOP/s", FLOPRate(7e12).String())

	bad := []struct {
		in, msg string
		edge    bool
	}{
		{"7 TFLOP/s", `"7 TFLOP/s" is a FLOP rate; want an edge rate such as "7T edges/s"`, true},
		{"50M edges/s", `"50M edges/s" is an edge rate; want a FLOP rate such as "50 MFLOP/s"`, false},
		{"50M", "missing unit", true},
		{"7", `missing unit in "7"; want a FLOP rate such as "7 TFLOP/s"`, false},
		{"7 TiFLOP/s", "unknown unit", false},
		{"7 Tflops", "unknown unit", false},
		{"-5M edges/s", `negative edge rate "-5M edges/s"`, true},
		{"NaN FLOPS", "not a finite number", false},
		{"3 GB/s", "is a bandwidth", true},
		{"50M edge/s", "unknown unit", true},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.in, func(t *testing.T) {
			var err error
			if tc.edge {
				_, err = ParseEdgeRate(tc.in)
			} else {
				_, err = ParseFLOPRate(tc.in)
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestParseDuration(t *testing.T) {
	good := []struct {
		in   string
		want time.Duration
	}{
		{"1ms", time.Millisecond},
		{"100us", 100 * time.Microsecond},
		{"100µs", 100 * time.Microsecond},
		{"1.5s", 1500 * time.Millisecond},
		{"0", 0},
	}
	for _, tc := range good {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseDuration(tc.in)
			require.NoError(t, err)
			assert.Equal(t, Duration(tc.want), got)
			back, err := ParseDuration(got.String())
			require.NoError(t, err)
			assert.Equal(t, got, back)
		})
	}
	assert.Equal(t, "100us", Duration(100*time.Microsecond).String())
	bad := []struct{ in, msg string }{
		{"5", `missing unit in duration "5"`},
		{"-1ms", `negative duration "-1ms"`},
		{"1 ms", "invalid duration"},
		{"400 MB/s", `"400 MB/s" is a bandwidth; want a duration`},
		{"soon", "invalid duration"},
	}
	for _, tc := range bad {
		t.Run("bad/"+tc.in, func(t *testing.T) {
			_, err := ParseDuration(tc.in)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.msg)
		})
	}
}

func TestString(t *testing.T) {
	tests := []struct {
		got  string
		want string
	}{
		{Bandwidth(400e6).String(), "400 MB/s"},
		{Bandwidth(12 << 30).String(), "12 GiB/s"},
		{Bandwidth(6.08e9).String(), "6.08 GB/s"},
		{Bandwidth(0.5).String(), "0.5 B/s"},
		{Bandwidth(-400e6).String(), "-400 MB/s"},
		{Bandwidth(0).String(), "0"},
		{Bytes(61 << 30).String(), "61 GiB"},
		{Bytes(16e9).String(), "16 GB"},
		{Bytes(3 << 29).String(), "1.5 GiB"},
		{Bytes(1023).String(), "1.023 kB"},
		{Bytes(7).String(), "7 B"},
		{Bytes(math.MaxInt64).String(), "9223372036854775807 B"},
		{FLOPRate(9e12).String(), "9 TFLOP/s"},
		{EdgeRate(5e6).String(), "5M edges/s"},
	}
	for _, tc := range tests {
		assert.Equal(t, tc.want, tc.got)
	}
}

func TestJSON(t *testing.T) {
	p, err := Preset("p3.2xlarge")
	require.NoError(t, err)
	data, err := json.Marshal(p)
	require.NoError(t, err)
	var m struct{ Disk, CPU, GPU map[string]any }
	require.NoError(t, json.Unmarshal(data, &m))
	assert.Equal(t, 400e6, m.Disk["read_bytes_per_s"])
	assert.Equal(t, 0.001, m.Disk["latency_s"])
	assert.Equal(t, float64(61<<30), m.CPU["memory_bytes"])
	assert.Equal(t, 7e12, m.GPU["flops"])
	assert.Equal(t, 1.462e6, m.CPU["batch_edges_per_s"])

	var back Profile
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, p, back)
	var d Duration
	assert.Error(t, json.Unmarshal([]byte(`-1`), &d))
	assert.Error(t, json.Unmarshal([]byte(`"1ms"`), &d))
}

// minimal is a valid profile without a GPU; bad profiles are variations.
const minimal = `name: tiny
disk: {read: 400 MB/s, write: 400 MB/s}
cpu: {workers: 2, memory: 8 GiB, batch_edges: 1M edges/s, gather_bandwidth: 1 GB/s}
`

func TestParseGood(t *testing.T) {
	p, err := Parse([]byte(minimal), "tiny.yaml")
	require.NoError(t, err)
	assert.Equal(t, Profile{
		Name: "tiny",
		Disk: Disk{Read: 400e6, Write: 400e6},
		CPU:  CPU{Workers: 2, Memory: 8 << 30, BatchEdges: 1e6, GatherBW: 1e9},
	}, p)
	assert.True(t, p.DiskReadWriteShared())

	// Anchors, nulls and quoted values are fine.
	p, err = Parse([]byte(`name: "x"
description: ~
disk: {read: &bw "1 GB/s", write: *bw, latency: 100us, full_duplex: true}
pcie: &link {h2d: 10 GB/s, d2h: 10 GB/s}
ssd_to_gpu:
gpu: {count: 1, memory: 40 GB, flops: 9 TFLOPS, memory_bandwidth: 1555 GB/s}
cpu: {workers: 2, memory: 8 GiB, batch_edges: 1M edges/s, gather_bandwidth: 1 GB/s}
`), "x.yaml")
	require.NoError(t, err)
	assert.Equal(t, Bandwidth(1e9), p.Disk.Write)
	assert.Equal(t, FLOPRate(9e12), p.GPU.FLOPS)
}

func TestParseBad(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"missing name", strings.Replace(minimal, "name: tiny", "", 1), "missing required field name"},
		{"missing workers", strings.Replace(minimal, "workers: 2, ", "", 1), "missing required field cpu.workers"},
		{"missing disk", strings.Replace(minimal, "disk: {read: 400 MB/s, write: 400 MB/s}", "", 1), "missing required field disk.read"},
		{"missing write", strings.Replace(minimal, ", write: 400 MB/s", "", 1), "missing required field disk.write"},
		{"zero workers", strings.Replace(minimal, "workers: 2", "workers: 0", 1), "cpu.workers"},
		{"negative workers", strings.Replace(minimal, "workers: 2", "workers: -2", 1), "cpu.workers: must be at least 1, got -2"},
		{"fractional workers", strings.Replace(minimal, "workers: 2", "workers: 2.5", 1), `cpu.workers: want a whole number, got "2.5"`},
		{"unknown field", minimal + "colour: red\n", "colour: unknown field"},
		{"unknown nested field", strings.Replace(minimal, "read: 400 MB/s", "read: 400 MB/s, iops: 5", 1), "disk.iops: unknown field (disk has read, write, latency, full_duplex, combined, read_share, keep_shared_rate, throttle)"},
		{"duplicate field", minimal + "name: again\n", "name: defined twice"},
		{"negative bandwidth", strings.Replace(minimal, "read: 400 MB/s", "read: -400 MB/s", 1), `disk.read: negative bandwidth "-400 MB/s"`},
		{"size for a bandwidth", strings.Replace(minimal, "read: 400 MB/s", "read: 400 MB", 1), `disk.read: "400 MB" is a size; want a bandwidth such as "400 MB/s"`},
		{"bare number", strings.Replace(minimal, "read: 400 MB/s", "read: 400000000", 1), "disk.read: missing unit"},
		{"NaN", strings.Replace(minimal, "read: 400 MB/s", "read: .nan", 1), `disk.read: ".nan" is not a finite number`},
		{"flops for edges", strings.Replace(minimal, "batch_edges: 1M edges/s", "batch_edges: 1 TFLOP/s", 1), "cpu.batch_edges: \"1 TFLOP/s\" is a FLOP rate"},
		{"mapping for a bandwidth", strings.Replace(minimal, "read: 400 MB/s", "read: {value: 400}", 1), "disk.read: want a bandwidth such as \"400 MB/s\", got a mapping"},
		{"scalar for a section", strings.Replace(minimal, "disk: {read: 400 MB/s, write: 400 MB/s}", "disk: fast", 1), `disk: want a mapping with read, write, latency, full_duplex, combined, read_share, keep_shared_rate, throttle, got "fast"`},
		{"bad bool", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, full_duplex: maybe", 1), `disk.full_duplex: want true or false, got "maybe"`},
		{"read share above 1", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, combined: 500 MB/s, read_share: 1.5", 1), "disk.read_share: 1.5 is not a share strictly between 0 and 1"},
		{"negative throttle window", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, throttle: {read: 100 MB/s, window: -1s}", 1), "disk.throttle.window: negative duration"},
		{"throttle rate not a rate", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, throttle: {read: fast}", 1), "disk.throttle.read"},
		{"read share without combined", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, read_share: 0.7", 1), "disk.read_share: only with disk.combined"},
		{"keep_shared_rate without combined", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, keep_shared_rate: true", 1), "disk.keep_shared_rate: only with disk.combined"},
		{"negative latency", strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, latency: -1ms", 1), `disk.latency: negative duration "-1ms"`},
		{"gpu without flops", minimal + "gpu: {count: 1, memory: 16 GB, memory_bandwidth: 900 GB/s}\npcie: {h2d: 12 GB/s, d2h: 12 GB/s}\n", "missing required field gpu.flops (needed when gpu.count > 0)"},
		{"gpu without pcie", minimal + "gpu: {count: 1, memory: 16 GB, flops: 7 TFLOPS, memory_bandwidth: 900 GB/s}\n", "missing required field pcie.h2d"},
		{"negative gpu count", minimal + "gpu: {count: -1}\n", "gpu.count: negative count -1"},
		{"ssd_to_gpu read only", minimal + "ssd_to_gpu: {read: 3 GB/s}\n", `ssd_to_gpu.write: missing while ssd_to_gpu.read is "3 GB/s"`},
		{"ssd_to_gpu write only", minimal + "ssd_to_gpu: {write: 2 GB/s}\n", "ssd_to_gpu.read: missing"},
		{"empty file", "", "empty profile"},
		{"only comments", "# nothing here\n", "empty profile"},
		{"null document", "~\n", "empty profile"},
		{"not YAML", "name: [unclosed\n", "not valid YAML"},
		{"tab indentation", "name: x\ndisk:\n\tread: 1\n", "not valid YAML"},
		{"list instead of map", "- name: tiny\n- disk: {}\n", "want a mapping of profile fields (name, description, disk, pcie, ssd_to_gpu, gpu, cpu, network, gnn, spread), got a list"},
		{"two documents", minimal + "---\n" + minimal, "more than one YAML document"},
		{"multi-line value", strings.Replace(minimal, "read: 400 MB/s", "read: \"400 MB/s\\nmore\"", 1), `disk.read: unknown unit "MB/s\nmore" in "400 MB/s\nmore"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml), "myprof.yaml")
			require.Error(t, err)
			msg := err.Error()
			assert.NotContains(t, msg, "\n")
			assert.True(t, strings.HasPrefix(msg, "myprof.yaml: "), msg)
			assert.Contains(t, msg, tc.want)
		})
	}
}

func TestValidate(t *testing.T) {
	p, err := Preset("p3.2xlarge")
	require.NoError(t, err)
	tests := []struct {
		name   string
		modify func(*Profile)
		want   string
	}{
		{"NaN", func(p *Profile) { p.Disk.Read = Bandwidth(math.NaN()) }, `disk.read: bandwidth "NaN B/s" is not a finite number`},
		{"Inf", func(p *Profile) { p.GPU.FLOPS = FLOPRate(math.Inf(1)) }, "gpu.flops: FLOP rate"},
		{"negative size", func(p *Profile) { p.CPU.Memory = -1 }, `cpu.memory: negative size "-1 B"`},
		{"negative pcie", func(p *Profile) { p.PCIe.D2H = -1e9 }, `pcie.d2h: negative bandwidth "-1 GB/s"`},
		{"blank name", func(p *Profile) { p.Name = "  " }, "missing required field name"},
		{"no gpu memory", func(p *Profile) { p.GPU.Memory = 0 }, "missing required field gpu.memory"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			q := p
			tc.modify(&q)
			err := q.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			_, err = q.YAML()
			assert.Error(t, err)
		})
	}
	// Without a GPU, the GPU fields and the PCIe link are optional.
	q := p
	q.GPU, q.PCIe = GPU{}, PCIe{}
	assert.NoError(t, q.Validate())
}

func TestLoadAndResolve(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tiny.yaml")
	require.NoError(t, os.WriteFile(path, []byte(minimal), 0o644))

	p, err := Load(path)
	require.NoError(t, err)
	assert.Equal(t, "tiny", p.Name)

	r, err := Resolve(path)
	require.NoError(t, err)
	assert.Equal(t, p, r)

	r, err = Resolve("p3.2xlarge")
	require.NoError(t, err)
	assert.Equal(t, "p3.2xlarge", r.Name)

	_, err = Resolve("p9.huge")
	require.Error(t, err)
	assert.Equal(t, `unknown device "p9.huge" (want a preset: betty-rtx6000, ge2-paper, h100-nvme, h200-nvme, legend-a100, p3.2xlarge, pbg-paper, or a YAML file)`, err.Error())

	missing := filepath.Join(dir, "missing.yaml")
	_, err = Load(missing)
	require.Error(t, err)
	assert.True(t, os.IsNotExist(err) || strings.Contains(err.Error(), "no such file"))
	assert.True(t, strings.HasPrefix(err.Error(), missing+": "), err.Error())

	bad := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(bad, []byte(minimal+"colour: red\n"), 0o644))
	_, err = Resolve(bad)
	require.Error(t, err)
	assert.Equal(t, bad+": colour: unknown field (a profile has name, description, disk, pcie, ssd_to_gpu, gpu, cpu, network, gnn, spread)", err.Error())

	_, err = Load(dir)
	assert.Error(t, err)
}

func FuzzParse(f *testing.F) {
	for _, name := range PresetNames() {
		data, err := presetFS.ReadFile("presets/" + name + ".yaml")
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte(minimal))
	f.Add([]byte("name: x\ndisk: {read: 1e-300 B/s, write: 1.5e300 TB/s}\ncpu: {workers: 1, memory: 1 B, batch_edges: 5e-324 edges/s, gather_bandwidth: 9.99 PiB/s}\n"))
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte(minimal + spreadYAML))
	f.Add([]byte(minimal + "spread: {disk.read: [1 GB/s]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse(data, "fuzz")
		if err != nil {
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") || !strings.HasPrefix(msg, "fuzz: ") {
				t.Fatalf("error is not one line starting with the source: %q", msg)
			}
			return
		}
		if err := p.Validate(); err != nil {
			t.Fatalf("Parse accepted an invalid profile: %v", err)
		}
		y, err := p.YAML()
		if err != nil {
			t.Fatalf("YAML: %v", err)
		}
		back, err := Parse(y, "round-trip")
		if err != nil {
			t.Fatalf("YAML output does not parse: %v\n%s", err, y)
		}
		if !reflect.DeepEqual(back, p) {
			t.Fatalf("round trip changed the profile:\n%+v\n%+v\n%s", p, back, y)
		}
	})
}

// TestTestdataVariants keeps the disk variants that REPRODUCE.md compares
// loadable: the same machine with a shared and with a full-duplex disk.
func TestTestdataVariants(t *testing.T) {
	for _, name := range []string{"p3.2xlarge-shared", "p3.2xlarge-duplex"} {
		p, err := Load(filepath.Join("testdata", name+".yaml"))
		require.NoError(t, err, name)
		assert.Equal(t, name, p.Name)
		assert.Zero(t, p.Disk.Combined)
	}
}

// TestParseErrorChain checks that rewording the YAML parser's error for
// the user keeps it in the chain.
func TestParseErrorChain(t *testing.T) {
	_, err := Parse([]byte("name: [unclosed\n"), "p.yaml")
	require.Error(t, err)
	assert.Equal(t, "p.yaml: not valid YAML: line 1: did not find expected ',' or ']'", err.Error())
	inner := errors.Unwrap(errors.Unwrap(err))
	require.NotNil(t, inner)
	assert.Equal(t, "yaml: line 1: did not find expected ',' or ']'", inner.Error())
}

func TestThrottleParsesAndHolds(t *testing.T) {
	p, err := Parse([]byte(strings.Replace(minimal, "write: 400 MB/s", "write: 400 MB/s, throttle: {read: 100 MB/s, write: 50 MB/s, window: 100ms}", 1)), "held.yaml")
	require.NoError(t, err)
	assert.Equal(t, Throttle{Read: 100e6, Write: 50e6, Window: Duration(100 * time.Millisecond)}, p.Disk.Throttle)
	rate, slice := p.Disk.Throttle.Limits()
	assert.Equal(t, [2]float64{100e6, 50e6}, rate)
	assert.InDelta(t, 0.1, slice, 1e-12)
}

func TestBytesApprox(t *testing.T) {
	for _, c := range []struct {
		b    Bytes
		want string
	}{
		{0, "0 B"}, {512, "512 B"}, {1500, "1.5 kB"}, {41_200_000, "41.2 MB"}, {2e9, "2.0 GB"}, {1_234_567_890_123, "1234.6 GB"},
	} {
		assert.Equal(t, c.want, c.b.Approx(), "%d bytes", int64(c.b))
	}
}

// TestScaleCompute: every compute rate, an ordering's own included, is
// scaled; the disk is not; the profile scaled from is left as it was.
func TestScaleCompute(t *testing.T) {
	p := Profile{Disk: Disk{Read: 1e9, Write: 1e9}, CPU: CPU{BatchEdges: 4e6,
		Train: CPUTrain{Dot: TrainCost{Edges: 1e6, Orderings: map[string]EdgeRate{"beta": 0.5e6}},
			DistMult: TrainCost{Edges: 2e6, RowBW: 1e9, FLOPS: 1e11, Pairwise: 3e10}}},
		GPU: GPU{FLOPS: 1e13}}
	q := p.ScaleCompute(2)
	assert.Equal(t, TrainCost{Edges: 2e6, Orderings: map[string]EdgeRate{"beta": 1e6}}, q.CPU.Train.Dot)
	assert.Equal(t, TrainCost{Edges: 4e6, RowBW: 2e9, FLOPS: 2e11, Pairwise: 6e10}, q.CPU.Train.DistMult)
	assert.Equal(t, EdgeRate(8e6), q.CPU.BatchEdges)
	assert.Equal(t, FLOPRate(2e13), q.GPU.FLOPS)
	assert.Equal(t, p.Disk, q.Disk)
	assert.Equal(t, EdgeRate(0.5e6), p.CPU.Train.Dot.Orderings["beta"])
	a, _ := p.ForOrdering("beta", "dot")
	b, _ := q.ForOrdering("beta", "dot")
	assert.Equal(t, 2*a.CPU.Train.Dot.Edges, b.CPU.Train.Dot.Edges, "an ordering's own rate scales with the rest")
}
