package devices

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Spread is the measured range of some of a profile's rates: the slowest
// and the fastest of repeated measurements of each, keyed by the rate's
// field path in the profile (SpreadKeys). In YAML:
//
//	spread:              # slowest and fastest of repeated measurements
//	  samples: 6         # optional: the measurements each range is over
//	  disk.read: [884 MB/s, 2.16 GB/s]
//	  cpu.train.dot.edges: [618k edges/s, 947k edges/s]
//
// Each bound is written in its field's unit. The profile's own value is
// the one predictions use (a calibration's median); it must lie within
// its range. The zero Spread is none: a profile without one predicts one
// number, as the presets do.
type Spread struct {
	// Samples is how many measurements the ranges are over (0: not
	// said); when several rates were measured a different number of
	// times, the fewest.
	Samples int
	ranges  map[string]Range
}

// Range is the slowest (Low) and fastest (High) of a rate's measurements,
// in its base unit (bytes/s, edges/s, FLOP/s).
type Range struct{ Low, High float64 }

// rateField is one rate a spread may be given for.
type rateField struct {
	key  string
	unit *unit
	ptr  func(p *Profile) *float64
}

// spreadFields are the rates a profile's spread may cover, in the order
// of the profile's fields (and of the YAML written). Network rates are
// left out: only the one-machine epoch predicts with a spread.
var spreadFields = []rateField{
	{"disk.read", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.Disk.Read) }},
	{"disk.write", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.Disk.Write) }},
	{"disk.combined", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.Disk.Combined) }},
	{"pcie.h2d", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.PCIe.H2D) }},
	{"pcie.d2h", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.PCIe.D2H) }},
	{"ssd_to_gpu.read", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.SSDToGPU.Read) }},
	{"ssd_to_gpu.write", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.SSDToGPU.Write) }},
	{"gpu.flops", flopRate, func(p *Profile) *float64 { return (*float64)(&p.GPU.FLOPS) }},
	{"gpu.memory_bandwidth", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.GPU.MemoryBW) }},
	{"gpu.batch_edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.GPU.BatchEdges) }},
	{"cpu.batch_edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.BatchEdges) }},
	{"cpu.gather_bandwidth", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.CPU.GatherBW) }},
	{"cpu.train.dot.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.Dot.Edges) }},
	{"cpu.train.distmult.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.DistMult.Edges) }},
	{"cpu.train.complex.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.ComplEx.Edges) }},
	{"cpu.train.transe-l1.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.TransEL1.Edges) }},
	{"cpu.train.transe-l2.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.TransEL2.Edges) }},
	{"cpu.train.rotate.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.RotatE.Edges) }},
	{"cpu.train.pair.edges", edgeRate, func(p *Profile) *float64 { return (*float64)(&p.CPU.Train.Pair.Edges) }},
	{"cpu.checksum", bandwidth, func(p *Profile) *float64 { return (*float64)(&p.CPU.Checksum) }},
}

// SpreadKeys are the rates a spread may be given for: the field paths of
// the disk's read, write and combined rates, PCIe, SSD-to-GPU, the GPU's
// and the CPU's compute rates, the CPU engine's edge rates and the
// checksum rate.
func SpreadKeys() []string {
	keys := make([]string, len(spreadFields))
	for i, f := range spreadFields {
		keys[i] = f.key
	}
	return keys
}

func lookupField(key string) (rateField, bool) {
	i := slices.IndexFunc(spreadFields, func(f rateField) bool { return f.key == key })
	if i < 0 {
		return rateField{}, false
	}
	return spreadFields[i], true
}

// unknownKey is the error for a key no spread may have.
func unknownKey(key string) error {
	return fmt.Errorf("spread.%s: unknown rate (a spread may give samples, %s)", key, strings.Join(SpreadKeys(), ", "))
}

// IsZero reports whether s gives no range.
func (s Spread) IsZero() bool { return len(s.ranges) == 0 && s.Samples == 0 }

// Keys are the rates s gives a range for, in SpreadKeys' order.
func (s Spread) Keys() []string {
	var keys []string
	for _, f := range spreadFields {
		if _, ok := s.ranges[f.key]; ok {
			keys = append(keys, f.key)
		}
	}
	return keys
}

// Of returns the range of the rate key, if s gives one.
func (s Spread) Of(key string) (Range, bool) {
	r, ok := s.ranges[key]
	return r, ok
}

// Rate is p's value of the rate key (a SpreadKeys field path), if key
// names one.
func (p Profile) Rate(key string) (float64, bool) {
	f, ok := lookupField(key)
	if !ok {
		return 0, false
	}
	return *f.ptr(&p), true
}

// HasSpread reports whether p gives a measured range for any rate.
func (p Profile) HasSpread() bool { return len(p.Spread.ranges) > 0 }

// Extent is the slowest and the fastest of samples (a rate's repeated
// measurements), the range SetSpread takes; 0, 0 for none.
func Extent(samples []float64) (low, high float64) {
	if len(samples) == 0 {
		return 0, 0
	}
	return slices.Min(samples), slices.Max(samples)
}

// SetSpread records [low, high] as the measured range of the rate key (a
// SpreadKeys field path, such as "disk.read" or "cpu.train.dot.edges"),
// in its base unit. The bounds must be finite, positive and ordered, and
// the profile's own value must be set and lie within them. p's spread is
// copied before it changes, so a copy of p keeps its own.
func (p *Profile) SetSpread(key string, low, high float64) error {
	f, ok := lookupField(key)
	if !ok {
		return unknownKey(key)
	}
	if err := checkRange(p, f, Range{low, high}); err != nil {
		return err
	}
	p.Spread.ranges = maps.Clone(p.Spread.ranges)
	if p.Spread.ranges == nil {
		p.Spread.ranges = map[string]Range{}
	}
	p.Spread.ranges[key] = Range{low, high}
	return nil
}

// SetSpreadSamples records the range of samples, a rate's repeated
// measurements (Extent), as the spread of key (SetSpread), and counts
// them in Spread.Samples (the fewest over the rates). The profile's value
// of key must already be set (to their median, say).
func (p *Profile) SetSpreadSamples(key string, samples []float64) error {
	if len(samples) < 2 {
		return fmt.Errorf("spread.%s: %d measurements give no range (want at least 2)", key, len(samples))
	}
	low, high := Extent(samples)
	if err := p.SetSpread(key, low, high); err != nil {
		return err
	}
	if p.Spread.Samples == 0 || len(samples) < p.Spread.Samples {
		p.Spread.Samples = len(samples)
	}
	return nil
}

// ClearSpread drops the ranges of the named rates (all of them when none
// is named), as when a rate is replaced by a value measured otherwise.
func (p *Profile) ClearSpread(keys ...string) {
	if len(keys) == 0 {
		p.Spread = Spread{}
		return
	}
	p.Spread.ranges = maps.Clone(p.Spread.ranges)
	for _, k := range keys {
		delete(p.Spread.ranges, k)
	}
	if len(p.Spread.ranges) == 0 {
		p.Spread = Spread{}
	}
}

// CarrySpread returns p with from's spread carried over: each of its
// ranges scaled by p's rate over from's, so that a rate measured again
// (p's) keeps the relative spread measured with from's. A rate p does not
// set loses its range; where p's rates are from's, it is from's spread.
func (p Profile) CarrySpread(from Profile) Profile {
	p.Spread = Spread{Samples: from.Spread.Samples}
	for _, key := range from.Spread.Keys() {
		f, _ := lookupField(key)
		r := from.Spread.ranges[key]
		was, now := *f.ptr(&from), *f.ptr(&p)
		if was <= 0 || now <= 0 {
			continue
		}
		s := now / was
		lo, hi := min(r.Low*s, now), max(r.High*s, now) // rounding must not leave now outside
		if p.Spread.ranges == nil {
			p.Spread.ranges = map[string]Range{}
		}
		p.Spread.ranges[key] = Range{lo, hi}
	}
	if len(p.Spread.ranges) == 0 {
		p.Spread = Spread{}
	}
	return p
}

// Extremes returns p with every rate that has a spread at the fast end of
// its range (fast) and at the slow end (slow); rates without a spread
// keep their value, and neither result has a spread. A combined disk rate
// is then held within [max(read, write), read + write], as Validate
// requires. Without a spread both are p. Since an epoch takes no longer
// when any rate is faster, the epochs on slow and fast bound the epoch on
// every combination of rates within their ranges.
func (p Profile) Extremes() (fast, slow Profile) {
	fast, slow = p, p
	fast.Spread, slow.Spread = Spread{}, Spread{}
	if !p.HasSpread() {
		return p, p
	}
	for _, key := range p.Spread.Keys() {
		f, _ := lookupField(key)
		r := p.Spread.ranges[key]
		*f.ptr(&fast), *f.ptr(&slow) = r.High, r.Low
	}
	for _, q := range []*Profile{&fast, &slow} {
		if d := &q.Disk; d.Combined > 0 {
			d.Combined = min(max(d.Combined, max(d.Read, d.Write)), d.Read+d.Write)
		}
	}
	return fast, slow
}

// checkRange checks a range of the rate f on p: finite, positive,
// ordered, and holding p's value.
func checkRange(p *Profile, f rateField, r Range) error {
	str := func(v float64) string { return f.unit.formatRate(v) }
	for _, v := range []float64{r.Low, r.High} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			return fmt.Errorf("spread.%s: %s is not a positive finite %s", f.key, str(v), f.unit.noun)
		}
	}
	if r.Low > r.High {
		return fmt.Errorf("spread.%s: [%s, %s] is not a range: the slowest comes first", f.key, str(r.Low), str(r.High))
	}
	v := *f.ptr(p)
	switch {
	case v <= 0:
		return fmt.Errorf("spread.%s: %s is not set; a spread is of a rate the profile gives", f.key, f.key)
	case v < r.Low || v > r.High:
		return fmt.Errorf("spread.%s: %s %s is outside its spread [%s, %s]", f.key, f.key, str(v), str(r.Low), str(r.High))
	}
	return nil
}

// checkSpread checks every range of p's spread (Validate).
func checkSpread(p Profile) error {
	if s := p.Spread.Samples; s < 0 || s == 1 {
		return fmt.Errorf("spread.samples: %d; want the number of measurements (at least 2), or leave it out", s)
	}
	for _, key := range p.Spread.Keys() {
		f, _ := lookupField(key)
		if err := checkRange(&p, f, p.Spread.ranges[key]); err != nil {
			return err
		}
	}
	for key := range p.Spread.ranges {
		if _, ok := lookupField(key); !ok {
			return unknownKey(key)
		}
	}
	return nil
}

// decodeSpread reads the spread mapping n (path "spread") strictly: known
// keys, each once, each a list of two rates in its field's unit.
func decodeSpread(n *yaml.Node, s *Spread, path string) error {
	*s = Spread{}
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("%s: want a mapping of rates to [slowest, fastest], such as disk.read: [884 MB/s, 2.16 GB/s]; got %s", path, describe(n))
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, val := deref(n.Content[i]), deref(n.Content[i+1])
		if key.Kind != yaml.ScalarNode {
			return fmt.Errorf("%s: line %d: want a rate's field path, got %s", path, key.Line, describe(key))
		}
		kp := path + "." + key.Value
		if line, dup := seen[key.Value]; dup {
			return fmt.Errorf("%s: defined twice (lines %d and %d)", kp, line, key.Line)
		}
		seen[key.Value] = key.Line
		if key.Value == "samples" {
			if err := decodeTagged(val, "!!int", "a whole number", &s.Samples); err != nil {
				return fmt.Errorf("%s: %w", kp, err)
			}
			continue
		}
		f, ok := lookupField(key.Value)
		if !ok {
			return unknownKey(key.Value)
		}
		ex := f.unit.example("", "")
		if val.Kind != yaml.SequenceNode || len(val.Content) != 2 {
			return fmt.Errorf("%s: want [slowest, fastest], each %s; got %s", kp, ex, describeRange(val))
		}
		var r [2]float64
		for j, b := range val.Content {
			b = deref(b)
			if b.Kind != yaml.ScalarNode {
				return fmt.Errorf("%s: want [slowest, fastest], each %s; got %s", kp, ex, describe(b))
			}
			q, err := parseAs(b.Value, f.unit)
			if err != nil {
				return fmt.Errorf("%s: %w", kp, err)
			}
			r[j] = q.value
		}
		if s.ranges == nil {
			s.ranges = map[string]Range{}
		}
		s.ranges[key.Value] = Range{r[0], r[1]}
	}
	return nil
}

// describeRange names what a range's node is, for "got ..." in errors.
func describeRange(n *yaml.Node) string {
	if n.Kind == yaml.SequenceNode {
		return fmt.Sprintf("a list of %d", len(n.Content))
	}
	return describe(n)
}

// MarshalYAML writes s as Parse reads it: samples first, then each range
// as a flow list [slowest, fastest] in its field's unit.
func (s Spread) MarshalYAML() (any, error) {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	if s.Samples > 0 {
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "samples"},
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.Itoa(s.Samples)})
	}
	for _, key := range s.Keys() {
		f, _ := lookupField(key)
		r := s.ranges[key]
		m.Content = append(m.Content,
			&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
			&yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Content: []*yaml.Node{
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.unit.formatRate(r.Low)},
				{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.unit.formatRate(r.High)},
			}})
	}
	return m, nil
}

// MarshalJSON writes s as {"samples": 6, "disk.read": [low, high], …} in
// base units (samples left out when not said).
func (s Spread) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	sep := ""
	if s.Samples > 0 {
		fmt.Fprintf(&b, `"samples":%d`, s.Samples)
		sep = ","
	}
	for _, key := range s.Keys() {
		r := s.ranges[key]
		k, _ := json.Marshal(key)
		lo, err := json.Marshal(r.Low)
		if err != nil {
			return nil, err
		}
		hi, err := json.Marshal(r.High)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "%s%s:[%s,%s]", sep, k, lo, hi)
		sep = ","
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// UnmarshalJSON reads what MarshalJSON writes; unknown keys are errors.
func (s *Spread) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return fmt.Errorf("spread: %w", err)
	}
	out := Spread{}
	for key, v := range raw {
		if key == "samples" {
			if err := json.Unmarshal(v, &out.Samples); err != nil {
				return fmt.Errorf("spread.samples: %w", err)
			}
			continue
		}
		if _, ok := lookupField(key); !ok {
			return unknownKey(key)
		}
		var r [2]float64
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("spread.%s: want [slowest, fastest]: %w", key, err)
		}
		if out.ranges == nil {
			out.ranges = map[string]Range{}
		}
		out.ranges[key] = Range{r[0], r[1]}
	}
	*s = out
	return nil
}
