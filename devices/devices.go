// Package devices describes the hardware an epoch runs on — disk, PCIe,
// SSD-to-GPU, GPU and CPU capacities and rates — as profiles read from
// built-in presets or YAML files.
package devices

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/tierflow/tierflow/workload"
)

// Profile is one machine.
type Profile struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description" json:"description"`
	Disk        Disk   `yaml:"disk" json:"disk"`
	PCIe        PCIe   `yaml:"pcie" json:"pcie"`
	SSDToGPU    Direct `yaml:"ssd_to_gpu" json:"ssd_to_gpu"` // zero = no direct path
	GPU         GPU    `yaml:"gpu" json:"gpu"`
	CPU         CPU    `yaml:"cpu" json:"cpu"`
	// Network joins several such machines (PyTorch-BigGraph's distributed
	// mode); zero: a machine on its own.
	Network Network `yaml:"network,omitempty" json:"network,omitzero"`
	// GNN is the cost of a GNN training step (zero: the GPU's rates).
	GNN GNN `yaml:"gnn,omitempty" json:"gnn,omitzero"`
	// Spread is the measured range of some of these rates over repeated
	// measurements (zero: none; a prediction is then one number).
	Spread Spread `yaml:"spread,omitempty" json:"spread,omitzero"`
}

// Network is the interconnect between machines of one profile and the
// shared filesystem they read edges from.
type Network struct {
	// Bandwidth is what one machine sends, and receives, at once (full
	// duplex), as its transport achieves it (PBG §5.1: ~1 GB/s with the
	// TCP backend on 50 Gb/s Ethernet).
	Bandwidth Bandwidth `yaml:"bandwidth" json:"bandwidth_bytes_per_s"`
	// Latency is paid once per transfer.
	Latency Duration `yaml:"latency" json:"latency_s"`
	// SharedFS is the aggregate read (and write) bandwidth of the shared
	// filesystem holding the edges, over all machines together.
	SharedFS Bandwidth `yaml:"shared_fs" json:"shared_fs_bytes_per_s"`
	// SyncInterval is how often, at most, a trainer's background thread
	// exchanges the shared (unpartitioned) parameters with the parameter
	// server: a round moves them out and back, then waits out the rest of
	// the interval (PBG §4.2: continuous synchronisation, throttled).
	SyncInterval Duration `yaml:"sync_interval" json:"sync_interval_s"`
}

// Disk is the storage that holds the partitions, reached through the CPU.
type Disk struct {
	Read    Bandwidth `yaml:"read" json:"read_bytes_per_s"`
	Write   Bandwidth `yaml:"write" json:"write_bytes_per_s"`
	Latency Duration  `yaml:"latency" json:"latency_s"` // per request
	// FullDuplex true: reads and writes have separate bandwidth; false: they
	// interfere — by Combined if set, else by splitting the device's time.
	FullDuplex bool `yaml:"full_duplex" json:"full_duplex"`
	// Combined, when set (full_duplex false), is the total bandwidth of
	// reads and writes running at once; each direction alone keeps its own
	// figure. Between max(read, write) and read + write.
	Combined Bandwidth `yaml:"combined,omitempty" json:"combined_bytes_per_s,omitempty"`
	// ReadShare, when set (with Combined), is the share of the combined
	// bandwidth reads get while writes run too (a device that favours
	// reads, as this virtual disk's scheduler does, above 0.5); zero means
	// a fair split, 0.5. Each direction still keeps at most its own figure.
	ReadShare float64 `yaml:"read_share,omitempty" json:"read_share,omitempty"`
	// KeepSharedRate, when set (with Combined), says that a transfer that
	// has run beside the other direction keeps the rate it had then to its
	// end, rather than speeding up to its own figure once the other
	// direction is done. This virtual disk does so: a 13.8 MB O_DIRECT
	// write issued with a read of the same size moved its part after the
	// read had ended at 550 MB/s, the same write alone at 1,241 MB/s. A
	// calibration sets it with the rates it measured in the engine's own
	// pairs (each transfer's bytes over its whole time), so that the model
	// moves a pair as the calibration saw it move. Under a Throttle the
	// kernel's slices pace the transfers instead, and it is not applied.
	KeepSharedRate bool `yaml:"keep_shared_rate,omitempty" json:"keep_shared_rate,omitempty"`
	// Throttle, when set, holds the disk below its own speed as a kernel
	// cgroup limit does; Read, Write and Combined stay the disk's own.
	Throttle Throttle `yaml:"throttle,omitempty" json:"throttle,omitzero"`
}

// Throttle is a kernel bandwidth limit over a disk (Linux blk-throttle:
// cgroup v1 blkio.throttle.*_bps_device, v2 io.max). The kernel does not
// pace each request at the limit: it grants a group its allowance a time
// slice at a time — rate × slice bytes at the start of each slice of a
// busy stretch — so I/O passes at the disk's own speed until the slice's
// allowance is spent and then waits for the next slice; the sustained
// rate is the limit. Measured here with O_DIRECT reads after idle under a
// 300 MB/s limit: up to 24 MB took ~20 ms (the raw disk), 32 MB 120 ms,
// 48 MB 133 ms, 64 MB 220 ms, 128 MB 430 ms — 30 MB at once, the next
// 30 MB at 100 ms, and so on.
type Throttle struct {
	Read  Bandwidth `yaml:"read,omitempty" json:"read_bytes_per_s,omitempty"`
	Write Bandwidth `yaml:"write,omitempty" json:"write_bytes_per_s,omitempty"`
	// Window is the kernel's slice (100 ms on rotational devices, 20 ms
	// on others); 0 paces every byte at the limit.
	Window Duration `yaml:"window,omitempty" json:"window_s,omitempty"`
}

// Limits are t's rates by direction (read, write) in bytes/s (0: no
// limit) and its slice in seconds.
func (t Throttle) Limits() (rate [2]float64, slice float64) {
	return [2]float64{float64(t.Read), float64(t.Write)}, float64(t.Window) / 1e9
}

// PCIe is the host-to-device link.
type PCIe struct {
	H2D Bandwidth `yaml:"h2d" json:"h2d_bytes_per_s"`
	D2H Bandwidth `yaml:"d2h" json:"d2h_bytes_per_s"`
}

// Direct is a path that bypasses host memory (GPUDirect Storage, Legend's
// GPU-side NVMe driver).
type Direct struct {
	Read  Bandwidth `yaml:"read" json:"read_bytes_per_s"`
	Write Bandwidth `yaml:"write" json:"write_bytes_per_s"`
}

// GPU is the accelerator; Count 0 means none.
type GPU struct {
	Name     string    `yaml:"name" json:"name"`
	Count    int       `yaml:"count" json:"count"`
	Memory   Bytes     `yaml:"memory" json:"memory_bytes"`
	FLOPS    FLOPRate  `yaml:"flops" json:"flops"` // effective fp32 FLOP/s
	MemoryBW Bandwidth `yaml:"memory_bandwidth" json:"memory_bandwidth_bytes_per_s"`
	// BatchEdges is GPU-side batch construction (Legend and GE2 build
	// batches on the GPU).
	BatchEdges EdgeRate `yaml:"batch_edges" json:"batch_edges_per_s"`
}

// CPU is the host.
type CPU struct {
	Workers int   `yaml:"workers" json:"workers"`
	Memory  Bytes `yaml:"memory" json:"memory_bytes"`
	// BatchEdges is the whole machine's batch construction rate.
	BatchEdges EdgeRate `yaml:"batch_edges" json:"batch_edges_per_s"`
	// GatherBW is the whole machine's embedding gather/update bandwidth.
	GatherBW Bandwidth `yaml:"gather_bandwidth" json:"gather_bandwidth_bytes_per_s"`
	// Train is the cost of tierflow's own CPU training engine, per score
	// function, as `realrun calibrate` measures it (zero: not measured).
	Train CPUTrain `yaml:"train,omitempty" json:"train"`
	// Interference is how the CPU engine and partition I/O slow each
	// other on this machine (zero: not at all, as for the papers' GPU
	// machines, where training does not run on the CPU).
	Interference Interference `yaml:"interference,omitempty" json:"interference"`
	// Checksum is the rate at which tierflow's CPU engine checksums a
	// partition (CRC-32C) on its loader's thread after reading it and on
	// its writer's thread before writing it, as `realrun calibrate`
	// measures it on freshly read buffers (zero: no checksums, as for the
	// papers' systems).
	Checksum Bandwidth `yaml:"checksum,omitempty" json:"checksum_bytes_per_s"`
	// TrainShape is the training shape Train was measured at (nil: not
	// recorded, as for the presets and older calibrations).
	TrainShape *TrainShape `yaml:"train_shape,omitempty" json:"train_shape,omitempty"`
}

// Interference is measured by realrun's calibration: the CPU engine's
// training rate with and without a concurrent O_DIRECT read/write stream,
// and the stream's bandwidth with and without training running. On a
// machine of few cores the two take CPU time and memory bandwidth from
// each other.
type Interference struct {
	// Compute is how much longer training takes while partitions are read
	// or written (0.3: 30% longer).
	Compute float64 `yaml:"compute,omitempty" json:"compute"`
	// IO is how much longer transfers take while the engine trains.
	IO float64 `yaml:"io,omitempty" json:"io"`
}

// CPUTrain holds the CPU engine's training cost per score function: one
// field per named model (cpu.train.dot, ..., cpu.train.rotate) and one
// PyTorch-BigGraph operator+comparator pair, named by PairModel
// (cpu.train.pair_model: linear+dot, cpu.train.pair: its cost) — a
// calibration measures one model, and `realrun calibrate --model M`
// writes M's field alone.
type CPUTrain struct {
	Dot      TrainCost `yaml:"dot,omitempty" json:"dot"`
	DistMult TrainCost `yaml:"distmult,omitempty" json:"distmult"`
	ComplEx  TrainCost `yaml:"complex,omitempty" json:"complex"`
	TransEL1 TrainCost `yaml:"transe-l1,omitempty" json:"transe-l1,omitzero"`
	TransEL2 TrainCost `yaml:"transe-l2,omitempty" json:"transe-l2,omitzero"`
	RotatE   TrainCost `yaml:"rotate,omitempty" json:"rotate,omitzero"`
	// PairModel names the PBG pair Pair is the cost of ("" with Pair
	// unset).
	PairModel string    `yaml:"pair_model,omitempty" json:"pair_model,omitempty"`
	Pair      TrainCost `yaml:"pair,omitempty" json:"pair,omitzero"`
}

// TrainCost models the whole machine's time for a chunk of n edges that
// share m negatives at dimension d under the cost rule of its model
// (workload.ChunkCost): n ÷ Edges + bytes ÷ RowBW + FLOPs ÷ FLOPS +
// pairwise operations ÷ Pairwise (gathering and updating rows, the score
// products and elementwise work of the forward and backward pass, and
// the pairwise comparators' element operations, which are not GEMM
// FLOPs). A rate measured at one training shape (CPU.TrainShape) sets
// Edges alone: rows and FLOPs are folded into it, and RowBW, FLOPS and
// Pairwise are 0 (no separate term). Pairwise is optional beside the
// three others: 0 prices pairwise operations at PairwiseShare of FLOPS
// (PairwiseRate).
type TrainCost struct {
	Edges    EdgeRate  `yaml:"edges,omitempty" json:"edges_per_s"`
	RowBW    Bandwidth `yaml:"row_bandwidth,omitempty" json:"row_bandwidth_bytes_per_s"`
	FLOPS    FLOPRate  `yaml:"flops,omitempty" json:"flops"`
	Pairwise FLOPRate  `yaml:"pairwise,omitempty" json:"pairwise_ops_per_s,omitempty"`
	// Orderings are edge rates measured on one ordering's own bucket
	// sequence (realrun calibrate replays the ordering's Plan: each bucket
	// in turn on partitions loaded as the Plan loads them), by ordering
	// name. Consecutive buckets that share rows find them in the caches;
	// an ordering that moves on to other rows sooner trains slower, and a
	// bench that trains the same few buckets over and over trains faster
	// than any epoch does. A simulation of an ordering listed here scales
	// Edges by its rate over Edges (Profile.ForOrdering); others use
	// Edges. Only with Edges alone (Folded).
	Orderings map[string]EdgeRate `yaml:"orderings,omitempty" json:"orderings_edges_per_s,omitempty"`
}

// PairwiseShare is the pairwise comparators' element operations per
// second as a share of the GEMM's FLOP rate, for a TrainCost that gives no
// pairwise rate of its own: the CPU engine's AVX-512 kernels (one core,
// CPU time, n = 100, m = 200, d = 100; BenchmarkChunkGrad) ran dot's
// 12·m·d FLOPs an edge at 80 GFLOP/s and TransE-L1's and RotatE's
// pairwise operations (workload.ModelCost.PairOps) at 26 and 35 G/s:
// about a third.
const PairwiseShare = 1.0 / 3

// PairwiseRate is t's rate of pairwise operations: Pairwise, or
// PairwiseShare of FLOPS when t gives none.
func (t TrainCost) PairwiseRate() float64 {
	if t.Pairwise > 0 {
		return float64(t.Pairwise)
	}
	return PairwiseShare * float64(t.FLOPS)
}

// IsZero reports whether t gives no cost at all.
func (t TrainCost) IsZero() bool {
	return t.Edges == 0 && t.RowBW == 0 && t.FLOPS == 0 && t.Pairwise == 0 && len(t.Orderings) == 0
}

// Folded reports whether t is an edge rate alone (measured at one shape:
// rows and FLOPs folded into it).
func (t TrainCost) Folded() bool { return t.Edges > 0 && t.RowBW == 0 && t.FLOPS == 0 }

// TrainModels are the models CPUTrain has a field for, in its order
// (the PBG pair's is PairModel).
var TrainModels = []string{"dot", "distmult", "complex", "transe-l1", "transe-l2", "rotate"}

// field is the field of the named model, or the pair's when model is
// PairModel; nil for none.
func (t *CPUTrain) field(model string) *TrainCost {
	switch model {
	case "dot":
		return &t.Dot
	case "distmult":
		return &t.DistMult
	case "complex":
		return &t.ComplEx
	case "transe-l1":
		return &t.TransEL1
	case "transe-l2":
		return &t.TransEL2
	case "rotate":
		return &t.RotatE
	case "":
		return nil
	}
	if model == t.PairModel {
		return &t.Pair
	}
	return nil
}

// For returns the cost of the named score function (a named model, or
// the PBG pair PairModel), if the profile gives one.
func (t CPUTrain) For(model string) (TrainCost, bool) {
	f := t.field(model)
	if f == nil {
		return TrainCost{}, false
	}
	return *f, f.Edges > 0
}

// Set sets the cost of model: its field for a named model, else Pair
// and PairModel (a profile holds one pair's cost; another pair's
// replaces it).
func (t *CPUTrain) Set(model string, c TrainCost) {
	if f := t.field(model); f != nil {
		*f = c
		return
	}
	t.PairModel, t.Pair = model, c
}

// SpreadKey is the spread key of model's edge rate (SpreadKeys):
// cpu.train.<model>.edges, or cpu.train.pair.edges for the PBG pair
// PairModel.
func (t CPUTrain) SpreadKey(model string) string {
	if model == t.PairModel && model != "" {
		return "cpu.train.pair.edges"
	}
	return "cpu.train." + model + ".edges"
}

// Costs are pointers to every cost t holds (each named model's and the
// pair's), for a caller that changes them all alike.
func (t *CPUTrain) Costs() []*TrainCost {
	return []*TrainCost{&t.Dot, &t.DistMult, &t.ComplEx, &t.TransEL1, &t.TransEL2, &t.RotatE, &t.Pair}
}

// Measured lists the models t gives a cost for, in TrainModels' order
// and the pair last.
func (t CPUTrain) Measured() []string {
	var out []string
	for _, m := range append(slices.Clone(TrainModels), t.PairModel) {
		if _, ok := t.For(m); ok {
			out = append(out, m)
		}
	}
	return out
}

// DiskReadWriteShared reports whether disk reads and writes share one
// bandwidth (the read figure).
func (p Profile) DiskReadWriteShared() bool { return !p.Disk.FullDuplex }

// maxProfileBytes bounds what Load reads: profiles are a few kilobytes.
const maxProfileBytes = 1 << 20

// Parse reads a YAML profile and validates it. Unknown fields, wrong units
// and invalid values are errors of one line that start with source and name
// the field path.
func Parse(data []byte, source string) (Profile, error) {
	if source == "" {
		source = "profile"
	}
	p, err := parse(data)
	if err != nil {
		if msg := err.Error(); strings.ContainsAny(msg, "\r\n") {
			err = reworded{oneLine(msg), err}
		}
		return Profile{}, fmt.Errorf("%s: %w", oneLine(source), err)
	}
	return p, nil
}

// reworded is err under another message; errors.Is and As still see err.
type reworded struct {
	msg string
	err error
}

func (r reworded) Error() string { return r.msg }
func (r reworded) Unwrap() error { return r.err }

// notYAML reports a syntax error of the YAML parser.
func notYAML(err error) error {
	return reworded{"not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: "), err}
}

func parse(data []byte) (Profile, error) {
	// yaml.v3's KnownFields(true) only applies to its own struct decoding;
	// Profile.UnmarshalYAML is as strict and reports the field path.
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return Profile{}, errors.New("empty profile")
		}
		return Profile{}, notYAML(err)
	}
	var next yaml.Node
	if err := dec.Decode(&next); !errors.Is(err, io.EOF) {
		if err != nil {
			return Profile{}, notYAML(err)
		}
		return Profile{}, errors.New("more than one YAML document (want one profile)")
	}
	root := &doc
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		root = doc.Content[0]
	}
	if isNull(deref(root)) {
		return Profile{}, errors.New("empty profile")
	}
	var p Profile
	if err := p.UnmarshalYAML(root); err != nil {
		return Profile{}, err
	}
	return p, p.Validate()
}

// Load reads and validates the profile in the file at path.
func Load(path string) (Profile, error) {
	f, err := os.Open(path)
	if err != nil {
		return Profile{}, fmt.Errorf("%s: cannot read profile: %w", path, unwrapPath(err))
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxProfileBytes+1))
	if err != nil {
		return Profile{}, fmt.Errorf("%s: cannot read profile: %w", path, unwrapPath(err))
	}
	if len(data) > maxProfileBytes {
		return Profile{}, fmt.Errorf("%s: larger than %d bytes; not a device profile", path, maxProfileBytes)
	}
	return Parse(data, path)
}

// unwrapPath drops the *fs.PathError wrapper, whose message repeats the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// YAML writes p as YAML that Parse reads back to p. It refuses an invalid
// profile.
func (p Profile) YAML() ([]byte, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(p); err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("profile %q: %w", p.Name, err)
	}
	return buf.Bytes(), nil
}

// UnmarshalYAML decodes a profile strictly: unknown or repeated fields,
// values of the wrong shape and values with the wrong unit are errors that
// name the field path. It does not validate; Parse does.
func (p *Profile) UnmarshalYAML(n *yaml.Node) error {
	var q Profile
	if err := decodeValue(n, reflect.ValueOf(&q).Elem(), ""); err != nil {
		return err
	}
	*p = q
	return nil
}

// decodeValue decodes n into v; path is v's field path ("" for the root).
func decodeValue(n *yaml.Node, v reflect.Value, path string) error {
	n = deref(n)
	if s, ok := v.Addr().Interface().(*Spread); ok {
		return decodeSpread(n, s, path)
	}
	if v.Kind() == reflect.Struct {
		return decodeStruct(n, v, path)
	}
	if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct && !isNull(n) {
		v.Set(reflect.New(v.Type().Elem())) // an optional section (cpu.train_shape)
		return decodeStruct(n, v.Elem(), path)
	}
	if isNull(n) {
		v.SetZero()
		return nil
	}
	if v.Kind() == reflect.Map && v.Type().Key().Kind() == reflect.String {
		return decodeMap(n, v, path)
	}
	var err error
	switch p := v.Addr().Interface().(type) {
	case yaml.Unmarshaler:
		err = p.UnmarshalYAML(n)
	case *string:
		err = decodeScalar(n, "a string", func(s string) (string, error) { return s, nil }, p)
	case *bool:
		err = decodeTagged(n, "!!bool", "true or false", p)
	case *int:
		err = decodeTagged(n, "!!int", "a whole number", p)
	case *int64:
		err = decodeTagged(n, "!!int", "a whole number", p)
	case *float64:
		err = decodeScalar(n, "a number", func(s string) (v float64, err error) {
			if t := n.ShortTag(); t != "!!float" && t != "!!int" || n.Decode(&v) != nil {
				err = fmt.Errorf("want a number, got %q", s)
			}
			return v, err
		}, p)
	default:
		err = fmt.Errorf("cannot decode into %s", v.Type()) // not reached: every field type is handled
	}
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// decodeMap decodes a mapping of names to values into the map v (a
// name given twice is an error), each value as its field path
// path.name.
func decodeMap(n *yaml.Node, v reflect.Value, path string) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of names to values", path)
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		name := n.Content[i].Value
		key := reflect.ValueOf(name).Convert(v.Type().Key())
		if m.MapIndex(key).IsValid() {
			return fmt.Errorf("%s.%s: given twice", path, name)
		}
		e := reflect.New(v.Type().Elem()).Elem()
		if err := decodeValue(n.Content[i+1], e, path+"."+name); err != nil {
			return err
		}
		m.SetMapIndex(key, e)
	}
	v.Set(m)
	return nil
}

// decodeTagged decodes a scalar of the given YAML tag into *dst.
func decodeTagged[T any](n *yaml.Node, tag, want string, dst *T) error {
	return decodeScalar(n, want, func(s string) (v T, err error) {
		if n.ShortTag() != tag || n.Decode(&v) != nil {
			err = fmt.Errorf("want %s, got %q", want, s)
		}
		return v, err
	}, dst)
}

// decodeStruct decodes a mapping into the struct v, field by yaml tag.
func decodeStruct(n *yaml.Node, v reflect.Value, path string) error {
	names := make([]string, v.NumField())
	for i := range names {
		names[i], _, _ = strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
	}
	list, within := strings.Join(names, ", "), cmp.Or(path, "a profile")
	switch {
	case isNull(n):
		v.SetZero()
		return nil
	case n.Kind != yaml.MappingNode && path == "":
		return fmt.Errorf("want a mapping of profile fields (%s), got %s", list, describe(n))
	case n.Kind != yaml.MappingNode:
		return fmt.Errorf("%s: want a mapping with %s, got %s", path, list, describe(n))
	}
	seen := make(map[string]int, len(names))
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := deref(n.Content[i]), n.Content[i+1]
		if key.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: line %d: want a field name, got %s", within, key.Line, describe(key))
		}
		fp := strings.TrimPrefix(path+"."+key.Value, ".")
		if line, dup := seen[key.Value]; dup {
			return fmt.Errorf("%s: defined twice (lines %d and %d)", fp, line, key.Line)
		}
		seen[key.Value] = key.Line
		idx := slices.Index(names, key.Value)
		if idx < 0 {
			return fmt.Errorf("%s: unknown field (%s has %s)", fp, within, list)
		}
		if err := decodeValue(val, v.Field(idx), fp); err != nil {
			return err
		}
	}
	return nil
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// describe names what n is, for "got ..." in errors.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// oneLine folds a message onto one line.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// Validate checks that p describes a usable machine: a name, a disk, at
// least one CPU worker with memory and rates, and — when there is a GPU —
// its memory, compute and PCIe link. Values are finite and non-negative,
// an SSD-to-GPU path has both directions or neither, and a spread's
// ranges are of known rates the profile sets and hold their values. The
// error names the first offending field.
func (p Profile) Validate() error {
	if strings.TrimSpace(p.Name) == "" {
		return errors.New("missing required field name")
	}
	gpu := p.GPU.Count > 0
	const needGPU = "needed when gpu.count > 0"
	checks := []error{
		checkFloat("disk.read", p.Disk.Read, "bandwidth", "must be > 0"),
		checkFloat("disk.write", p.Disk.Write, "bandwidth", "must be > 0"),
		checkDuration("disk.latency", p.Disk.Latency),
		checkFloat("disk.combined", p.Disk.Combined, "bandwidth", ""),
		checkCombined(p.Disk),
		checkReadShare(p.Disk),
		checkKeepSharedRate(p.Disk),
		checkFloat("disk.throttle.read", p.Disk.Throttle.Read, "bandwidth", ""),
		checkFloat("disk.throttle.write", p.Disk.Throttle.Write, "bandwidth", ""),
		checkDuration("disk.throttle.window", p.Disk.Throttle.Window),
		checkFloat("pcie.h2d", p.PCIe.H2D, "bandwidth", when(gpu, needGPU)),
		checkFloat("pcie.d2h", p.PCIe.D2H, "bandwidth", when(gpu, needGPU)),
		checkFloat("ssd_to_gpu.read", p.SSDToGPU.Read, "bandwidth", ""),
		checkFloat("ssd_to_gpu.write", p.SSDToGPU.Write, "bandwidth", ""),
		checkDirect(p.SSDToGPU),
		checkCount(p.GPU.Count),
		checkBytes("gpu.memory", p.GPU.Memory, when(gpu, needGPU)),
		checkFloat("gpu.flops", p.GPU.FLOPS, "FLOP rate", when(gpu, needGPU)),
		checkFloat("gpu.memory_bandwidth", p.GPU.MemoryBW, "bandwidth", when(gpu, needGPU)),
		checkFloat("gpu.batch_edges", p.GPU.BatchEdges, "edge rate", ""),
		checkWorkers(p.CPU.Workers),
		checkBytes("cpu.memory", p.CPU.Memory, "must be > 0"),
		checkFloat("cpu.batch_edges", p.CPU.BatchEdges, "edge rate", "must be > 0"),
		checkFloat("cpu.gather_bandwidth", p.CPU.GatherBW, "bandwidth", "must be > 0"),
		checkTrain("cpu.train.dot", p.CPU.Train.Dot),
		checkTrain("cpu.train.distmult", p.CPU.Train.DistMult),
		checkTrain("cpu.train.complex", p.CPU.Train.ComplEx),
		checkTrain("cpu.train.transe-l1", p.CPU.Train.TransEL1),
		checkTrain("cpu.train.transe-l2", p.CPU.Train.TransEL2),
		checkTrain("cpu.train.rotate", p.CPU.Train.RotatE),
		checkTrain("cpu.train.pair", p.CPU.Train.Pair),
		checkPair(p.CPU.Train),
		checkShape("cpu.train_shape", p.CPU.TrainShape),
		checkSlowdown("cpu.interference.compute", p.CPU.Interference.Compute),
		checkSlowdown("cpu.interference.io", p.CPU.Interference.IO),
		checkFloat("cpu.checksum", p.CPU.Checksum, "bandwidth", ""),
		checkFloat("network.bandwidth", p.Network.Bandwidth, "bandwidth", ""),
		checkDuration("network.latency", p.Network.Latency),
		checkFloat("network.shared_fs", p.Network.SharedFS, "bandwidth", when(p.Network.Bandwidth > 0, "needed when network.bandwidth > 0")),
		checkDuration("network.sync_interval", p.Network.SyncInterval),
		checkGNN(p),
		checkSpread(p),
	}
	for _, err := range checks {
		if err != nil {
			return err
		}
	}
	return nil
}

// checkSlowdown checks an interference factor: a finite fraction ≥ 0.
func checkSlowdown(path string, x float64) error {
	if !(x >= 0) || math.IsInf(x, 0) {
		return fmt.Errorf("%s: must be a number ≥ 0 (0.25: a quarter slower), got %v", path, x)
	}
	return nil
}

// checkTrain checks that a training cost is absent, complete, or an edge
// rate alone (rows and FLOPs folded into it); a pairwise rate goes with
// the three others.
func checkTrain(path string, t TrainCost) error {
	for _, err := range []error{
		checkFloat(path+".edges", t.Edges, "edge rate", ""),
		checkFloat(path+".row_bandwidth", t.RowBW, "bandwidth", ""),
		checkFloat(path+".flops", t.FLOPS, "FLOP rate", ""),
		checkFloat(path+".pairwise", t.Pairwise, "FLOP rate", ""),
	} {
		if err != nil {
			return err
		}
	}
	set := 0
	for _, v := range []float64{float64(t.Edges), float64(t.RowBW), float64(t.FLOPS)} {
		if v > 0 {
			set++
		}
	}
	if set != 0 && set != 3 && !t.Folded() {
		return fmt.Errorf("%s: give edges alone (rows and FLOPs folded into it), or edges, row_bandwidth and flops together", path)
	}
	if t.Pairwise > 0 && set != 3 {
		return fmt.Errorf("%s.pairwise: goes with edges, row_bandwidth and flops (an edge rate alone folds the pairwise work into it)", path)
	}
	if len(t.Orderings) > 0 && !t.Folded() {
		return fmt.Errorf("%s.orderings: goes with an edge rate alone (edges), measured at one shape", path)
	}
	for _, name := range slices.Sorted(maps.Keys(t.Orderings)) {
		if err := checkFloat(path+".orderings."+name, t.Orderings[name], "edge rate", ""); err != nil {
			return err
		}
		if t.Orderings[name] <= 0 {
			return fmt.Errorf("%s.orderings.%s: must be a positive edge rate", path, name)
		}
	}
	return nil
}

// ForOrdering is p as a simulation of the named ordering trained by the
// CPU engine with score function model sees it: where the model's cost
// gives the ordering a rate of its own (TrainCost.Orderings), its edge
// rate is scaled by that rate over Edges, and so is the range of the
// rate's measured spread; every cost's Orderings are dropped, so that
// applying it again changes nothing. scaled reports whether the rate
// changed.
func (p Profile) ForOrdering(ordering, model string) (out Profile, scaled bool) {
	out = p
	out.CPU.Train = p.CPU.Train.withoutOrderings()
	base := p.CPU.Train.field(model)
	if base == nil || base.Edges <= 0 {
		return out, false
	}
	r, ok := base.Orderings[ordering]
	if !ok || r <= 0 {
		return out, false
	}
	ratio := float64(r) / float64(base.Edges)
	f := out.CPU.Train.field(model)
	f.Edges = EdgeRate(float64(f.Edges) * ratio)
	key := p.CPU.Train.SpreadKey(model)
	if rg, ok := out.Spread.Of(key); ok {
		out.Spread.ranges = maps.Clone(out.Spread.ranges)
		out.Spread.ranges[key] = Range{rg.Low * ratio, rg.High * ratio}
	}
	return out, true
}

// Scaled is t with every rate r times as fast: edges, rows, FLOPs,
// pairwise operations and each ordering's own edge rate (a new map).
func (t TrainCost) Scaled(r float64) TrainCost {
	t.Edges = EdgeRate(float64(t.Edges) * r)
	t.RowBW = Bandwidth(float64(t.RowBW) * r)
	t.FLOPS = FLOPRate(float64(t.FLOPS) * r)
	t.Pairwise = FLOPRate(float64(t.Pairwise) * r)
	if t.Orderings != nil {
		was := t.Orderings
		t.Orderings = make(map[string]EdgeRate, len(was))
		for name, e := range was {
			t.Orderings[name] = EdgeRate(float64(e) * r)
		}
	}
	return t
}

// ScaleCompute is p with its engines' compute r times as fast: every CPU
// training cost (TrainCost.Scaled), the CPU's batch feeding and the GPU's
// FLOP rate. Disk, network, memory bandwidth and checksums keep their
// rates; so does the spread (a range measured of the rate as given).
func (p Profile) ScaleCompute(r float64) Profile {
	for _, tc := range p.CPU.Train.Costs() {
		*tc = tc.Scaled(r)
	}
	p.CPU.BatchEdges = EdgeRate(float64(p.CPU.BatchEdges) * r)
	p.GPU.FLOPS = FLOPRate(float64(p.GPU.FLOPS) * r)
	return p
}

// withoutOrderings is t with no cost's Orderings.
func (t CPUTrain) withoutOrderings() CPUTrain {
	for _, c := range t.Costs() {
		c.Orderings = nil
	}
	return t
}

// checkPair checks the PBG pair's cost: a pair_model that is a PBG
// operator+comparator pair (not a named model, which has its own field),
// with a cost, or neither.
func checkPair(t CPUTrain) error {
	switch {
	case t.PairModel == "" && !t.Pair.IsZero():
		return errors.New("cpu.train.pair: needs cpu.train.pair_model, the PBG operator+comparator it is the cost of (linear+dot)")
	case t.PairModel == "":
		return nil
	case slices.Contains(TrainModels, t.PairModel):
		return fmt.Errorf("cpu.train.pair_model: %s has its own field, cpu.train.%s", t.PairModel, t.PairModel)
	case !workload.Model(t.PairModel).Valid():
		return fmt.Errorf("cpu.train.pair_model: %q is not a PBG operator+comparator pair (such as linear+dot)", t.PairModel)
	case t.Pair.Edges <= 0:
		return fmt.Errorf("cpu.train.pair: the cost of %s needs at least edges", t.PairModel)
	}
	return nil
}

// checkCombined checks that a combined read+write bandwidth, if set, goes
// with an interfering disk and lies between max(read, write) and their sum.
func checkCombined(d Disk) error {
	if d.Combined == 0 {
		return nil
	}
	if d.FullDuplex {
		return errors.New("disk.combined: only for a disk whose reads and writes interfere; set full_duplex: false")
	}
	lo, hi := max(d.Read, d.Write), d.Read+d.Write
	if d.Combined < lo || d.Combined > hi {
		return fmt.Errorf("disk.combined: %s is outside [%s, %s] (max(read, write) to read + write)", d.Combined, lo, hi)
	}
	return nil
}

// checkKeepSharedRate checks that keep_shared_rate comes with the
// combined rate it keeps.
func checkKeepSharedRate(d Disk) error {
	if d.KeepSharedRate && (d.Combined <= 0 || d.FullDuplex) {
		return errors.New("disk.keep_shared_rate: only with disk.combined and full_duplex false (the rate it keeps is a share of it)")
	}
	return nil
}

// checkReadShare checks that a read share, if set, is a share strictly
// between 0 and 1 of a combined bandwidth.
func checkReadShare(d Disk) error {
	if d.ReadShare == 0 {
		return nil
	}
	if math.IsNaN(d.ReadShare) || d.ReadShare <= 0 || d.ReadShare >= 1 {
		return fmt.Errorf("disk.read_share: %g is not a share strictly between 0 and 1", d.ReadShare)
	}
	if d.Combined == 0 {
		return errors.New("disk.read_share: only with disk.combined (how reads and writes split it)")
	}
	return nil
}

// when returns why if cond, else "" (not required).
func when(cond bool, why string) string {
	if cond {
		return why
	}
	return ""
}

// checkFloat checks a float quantity; required, when not empty, says why
// zero is not allowed.
func checkFloat[T interface {
	~float64
	String() string
}](path string, v T, noun, required string) error {
	f := float64(v)
	switch {
	case math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("%s: %s %q is not a finite number", path, noun, v.String())
	case f < 0:
		return fmt.Errorf("%s: negative %s %q", path, noun, v.String())
	case f == 0 && required != "":
		return fmt.Errorf("missing required field %s (%s)", path, required)
	}
	return nil
}

func checkBytes(path string, b Bytes, required string) error {
	switch {
	case b < 0:
		return fmt.Errorf("%s: negative size %q", path, b.String())
	case b == 0 && required != "":
		return fmt.Errorf("missing required field %s (%s)", path, required)
	}
	return nil
}

func checkDuration(path string, d Duration) error {
	if d < 0 {
		return fmt.Errorf("%s: negative duration %q", path, d.String())
	}
	return nil
}

func checkDirect(d Direct) error {
	switch {
	case d.Read > 0 && d.Write == 0:
		return fmt.Errorf("ssd_to_gpu.write: missing while ssd_to_gpu.read is %q (set both or neither)", d.Read.String())
	case d.Write > 0 && d.Read == 0:
		return fmt.Errorf("ssd_to_gpu.read: missing while ssd_to_gpu.write is %q (set both or neither)", d.Write.String())
	}
	return nil
}

func checkCount(n int) error {
	if n < 0 {
		return fmt.Errorf("gpu.count: negative count %d (0 means no GPU)", n)
	}
	return nil
}

func checkWorkers(n int) error {
	switch {
	case n == 0:
		return errors.New("missing required field cpu.workers (must be at least 1)")
	case n < 0:
		return fmt.Errorf("cpu.workers: must be at least 1, got %d", n)
	}
	return nil
}
