package devices

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Bandwidth is a transfer rate in bytes per second. In YAML it is written
// with a unit: "400 MB/s", "12 GiB/s", "0".
type Bandwidth float64

// Bytes is a size in bytes. In YAML it is written with a unit: "16 GB",
// "61 GiB", "0".
type Bytes int64

// FLOPRate is a compute rate in floating-point operations per second. In
// YAML it is written "7 TFLOP/s" or "7 TFLOPS".
type FLOPRate float64

// EdgeRate is a rate in edges per second (batch construction). In YAML it is
// written "50M edges/s".
type EdgeRate float64

// Duration is a time.Duration that YAML reads and writes in Go syntax
// ("1ms", "100us") and JSON writes as float seconds.
type Duration time.Duration

// unit is what a unit word measures and how values of it are written.
type unit struct {
	article, noun string // "a", "bandwidth"
	layout        string // a value from its number and prefix
	binary        bool   // takes the IEC prefixes (Ki, Mi, ...) too
	exNum, exSym  string // the example value in "want ..." hints
}

var (
	bandwidth = &unit{"a", "bandwidth", "%s %sB/s", true, "400", "M"}
	size      = &unit{"a", "size", "%s %sB", true, "16", "G"}
	flopRate  = &unit{"a", "FLOP rate", "%s %sFLOP/s", false, "7", "T"}
	edgeRate  = &unit{"an", "edge rate", "%s%s edges/s", false, "50", "M"}
	// unitWords maps the words after a prefix to their unit.
	unitWords = map[string]*unit{"B/s": bandwidth, "B": size, "FLOP/s": flopRate, "FLOPS": flopRate, "edges/s": edgeRate}
)

type prefix struct {
	sym  string
	mult float64
}

// decimalDesc are the SI prefixes and binaryDesc the IEC ones, largest
// first.
var (
	decimalDesc = []prefix{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"", 1}}
	binaryDesc  = []prefix{{"Pi", 1 << 50}, {"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}}
)

// numberRE is a decimal number: sign, fraction and exponent optional
// ("5edges/s" is 5 edges/s: an exponent needs digits). unitRE is what may
// follow: a prefix, a unit word, both, or neither.
var (
	numberRE = regexp.MustCompile(`^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?`)
	unitRE   = regexp.MustCompile(`^(Pi|Ti|Gi|Mi|Ki|P|T|G|M|k)?(?:[ \t]*(B/s|B|FLOP/s|FLOPS|edges/s))?$`)
)

func isBinary(sym string) bool { return strings.HasSuffix(sym, "i") }

// multiplier is the value of a prefix.
func multiplier(sym string) float64 {
	for _, fam := range [][]prefix{decimalDesc, binaryDesc} {
		for _, p := range fam {
			if p.sym == sym {
				return p.mult
			}
		}
	}
	return 1
}

// quantity is a parsed "number [prefix]unit"; unit nil is a bare number.
type quantity struct {
	num, sym string // the number and prefix as written
	unit     *unit
	value    float64 // in base units (bytes, bytes/s, FLOP/s, edges/s)
}

// parseQuantity reads "number [prefix]unit" of any unit. Negative values
// are returned as such; NaN, infinities and garbage are errors.
func parseQuantity(s string) (quantity, error) {
	t := strings.TrimSpace(s)
	num := numberRE.FindString(t)
	switch low := strings.ToLower(strings.TrimLeft(t, "+-.")); {
	case t == "":
		return quantity{}, errors.New("empty value")
	case num == "" && (strings.HasPrefix(low, "nan") || strings.HasPrefix(low, "inf")):
		return quantity{}, fmt.Errorf("%q is not a finite number", s)
	case num == "":
		return quantity{}, fmt.Errorf("%q does not start with a number", s)
	}
	f, _ := strconv.ParseFloat(num, 64) // numberRE admits only valid syntax; ±Inf on overflow
	rest := strings.TrimSpace(t[len(num):])
	m := unitRE.FindStringSubmatch(rest)
	if m == nil || m[2] != "" && !unitWords[m[2]].binary && isBinary(m[1]) {
		return quantity{}, fmt.Errorf("unknown unit %q in %q", rest, s)
	}
	v := f * multiplier(m[1])
	if math.IsInf(v, 0) {
		return quantity{}, fmt.Errorf("%q is too large", s)
	}
	if v == 0 {
		v = 0 // no negative zero
	}
	return quantity{num: num, sym: m[1], unit: unitWords[m[2]], value: v}, nil
}

// example is "a bandwidth such as ..." shaped after num and sym when given.
func (u *unit) example(num, sym string) string {
	if num == "" || isBinary(sym) && !u.binary {
		num, sym = u.exNum, u.exSym
	}
	return fmt.Sprintf("%s %s such as %q", u.article, u.noun, fmt.Sprintf(u.layout, num, sym))
}

// parseAs reads s as a non-negative quantity of unit want. A bare number
// is accepted only when it is zero.
func parseAs(s string, want *unit) (quantity, error) {
	q, err := parseQuantity(s)
	switch {
	case err != nil:
		return q, fmt.Errorf("%w; want %s", err, want.example("", ""))
	case q.unit == nil && q.value != 0:
		return q, fmt.Errorf("missing unit in %q; want %s", s, want.example(q.num, cmp.Or(q.sym, want.exSym)))
	case q.unit != nil && q.unit != want:
		return q, fmt.Errorf("%q is %s %s; want %s", s, q.unit.article, q.unit.noun, want.example(q.num, q.sym))
	case q.value < 0:
		return q, fmt.Errorf("negative %s %q", want.noun, s)
	}
	return q, nil
}

// parseRate reads a non-negative float quantity of unit u.
func parseRate[T ~float64](s string, u *unit) (T, error) {
	q, err := parseAs(s, u)
	if err != nil {
		return 0, err
	}
	return T(q.value), nil
}

// ParseBandwidth reads a bandwidth such as "400 MB/s", "12 GiB/s" or "0".
func ParseBandwidth(s string) (Bandwidth, error) { return parseRate[Bandwidth](s, bandwidth) }

// ParseFLOPRate reads a compute rate such as "7 TFLOP/s" or "7 TFLOPS".
func ParseFLOPRate(s string) (FLOPRate, error) { return parseRate[FLOPRate](s, flopRate) }

// ParseEdgeRate reads an edge rate such as "1.462M edges/s".
func ParseEdgeRate(s string) (EdgeRate, error) { return parseRate[EdgeRate](s, edgeRate) }

// ParseBytes reads a size such as "16 GB", "61 GiB" or "0". The size must be
// a whole number of bytes.
func ParseBytes(s string) (Bytes, error) {
	q, err := parseAs(s, size)
	if err != nil {
		return 0, err
	}
	return q.bytes(s)
}

// bytes converts q to a whole number of bytes, exactly when the number was
// written as an integer.
func (q quantity) bytes(s string) (Bytes, error) {
	mult := int64(multiplier(q.sym))
	if n, err := strconv.ParseInt(strings.TrimPrefix(q.num, "+"), 10, 64); err == nil {
		if n != 0 && (n > math.MaxInt64/mult || n < math.MinInt64/mult) {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return Bytes(n * mult), nil
	}
	v := q.value
	if v >= math.MaxInt64 || v <= math.MinInt64 {
		return 0, fmt.Errorf("%q is too large", s)
	}
	r := math.Round(v)
	if math.Abs(v-r) > math.Max(1e-9, math.Abs(v)*1e-12) {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	return Bytes(r), nil
}

// ParseDuration reads a duration in Go syntax ("1ms", "100us", "0").
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	d, err := time.ParseDuration(t)
	if err != nil {
		if q, qerr := parseQuantity(t); qerr == nil {
			if q.unit == nil {
				return 0, fmt.Errorf("missing unit in duration %q; want Go syntax such as \"1ms\" or \"100us\"", s)
			}
			return 0, fmt.Errorf("%q is %s %s; want a duration such as \"1ms\"", s, q.unit.article, q.unit.noun)
		}
		return 0, fmt.Errorf("invalid duration %q; want Go syntax such as \"1ms\" or \"100us\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return Duration(d), nil
}

// format writes v (in base units) in the prefix family (decimal, binary
// when u takes it) that gives the shorter number, decimal on a tie, with
// the largest prefix of that family that leaves a number ≥ 1 and that
// exact accepts (it parses back to v). It returns "" when nothing does.
func (u *unit) format(v float64, exact func(s string) bool) string {
	families := [][]prefix{decimalDesc}
	if u.binary {
		families = append(families, binaryDesc)
	}
	best, bestNum := "", ""
	for _, fam := range families {
		for _, p := range fam {
			x := v / p.mult
			if p.mult != 1 && math.Abs(x) < 1 {
				continue
			}
			num := strconv.FormatFloat(x, 'g', -1, 64)
			if s := fmt.Sprintf(u.layout, num, p.sym); exact(s) {
				if best == "" || len(num) < len(bestNum) {
					best, bestNum = s, num
				}
				break
			}
		}
	}
	return best
}

// formatRate writes a float quantity; the empty prefix always parses back
// exactly, so the result is never empty.
func (u *unit) formatRate(v float64) string {
	if v == 0 {
		return "0"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Sprintf(u.layout, strconv.FormatFloat(v, 'g', -1, 64), "")
	}
	return u.format(v, func(s string) bool {
		q, err := parseQuantity(s)
		return err == nil && q.value == v
	})
}

// String writes b as "400 MB/s", "12 GiB/s" or "0"; it parses back to b.
func (b Bandwidth) String() string { return bandwidth.formatRate(float64(b)) }

// String writes r as "7 TFLOP/s" or "0"; it parses back to r.
func (r FLOPRate) String() string { return flopRate.formatRate(float64(r)) }

// String writes r as "50M edges/s" or "0"; it parses back to r.
func (r EdgeRate) String() string { return edgeRate.formatRate(float64(r)) }

// String writes b as "16 GB", "61 GiB" or "0"; it parses back to b.
func (b Bytes) String() string {
	if b == 0 {
		return "0"
	}
	s := size.format(float64(b), func(s string) bool {
		q, err := parseQuantity(s)
		if err != nil {
			return false
		}
		n, err := q.bytes(s)
		return err == nil && n == b
	})
	return cmp.Or(s, strconv.FormatInt(int64(b), 10)+" B") // float64(b) is inexact beyond 2^53
}

// Approx writes b for a message, to one decimal in decimal units: "2.3 MB",
// "1.5 GB", "512 B"; it does not parse back to b.
func (b Bytes) Approx() string {
	switch n := float64(b); {
	case n >= 1e9:
		return fmt.Sprintf("%.1f GB", n/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", n/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.1f kB", n/1e3)
	}
	return fmt.Sprintf("%d B", int64(b))
}

// String writes d in Go syntax with "us" for microseconds.
func (d Duration) String() string {
	return strings.ReplaceAll(time.Duration(d).String(), "µs", "us")
}

// MarshalJSON writes d as float seconds.
func (d Duration) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, time.Duration(d).Seconds(), 'g', -1, 64), nil
}

// UnmarshalJSON reads float seconds.
func (d *Duration) UnmarshalJSON(data []byte) error {
	s, err := strconv.ParseFloat(string(data), 64)
	if err != nil {
		return fmt.Errorf("duration: want float seconds, got %s", data)
	}
	ns := math.Round(s * float64(time.Second))
	if math.IsNaN(ns) || ns < 0 || ns > math.MaxInt64 {
		return fmt.Errorf("duration: %s seconds is out of range", data)
	}
	*d = Duration(ns)
	return nil
}

// decodeScalar sets *dst to parse of the text of a scalar node, or says
// what was wanted.
func decodeScalar[T any](n *yaml.Node, want string, parse func(string) (T, error), dst *T) error {
	if n = deref(n); n.Kind != yaml.ScalarNode {
		return fmt.Errorf("want %s, got %s", want, describe(n))
	}
	v, err := parse(n.Value)
	*dst = v
	return err
}

// UnmarshalYAML reads a bandwidth with its unit.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, bandwidth.example("", ""), ParseBandwidth, b)
}

// UnmarshalYAML reads a size with its unit.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, size.example("", ""), ParseBytes, b)
}

// UnmarshalYAML reads a FLOP rate with its unit.
func (r *FLOPRate) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, flopRate.example("", ""), ParseFLOPRate, r)
}

// UnmarshalYAML reads an edge rate with its unit.
func (r *EdgeRate) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, edgeRate.example("", ""), ParseEdgeRate, r)
}

// UnmarshalYAML reads a duration in Go syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	return decodeScalar(n, `a duration such as "1ms"`, ParseDuration, d)
}

// yamlText is what MarshalYAML emits: a plain 0 for "0", else the text.
func yamlText(s string) (any, error) {
	if s == "0" {
		return 0, nil
	}
	return s, nil
}

// MarshalYAML writes b as String does (zero as a plain 0).
func (b Bandwidth) MarshalYAML() (any, error) { return yamlText(b.String()) }

// MarshalYAML writes b as String does (zero as a plain 0).
func (b Bytes) MarshalYAML() (any, error) { return yamlText(b.String()) }

// MarshalYAML writes r as String does (zero as a plain 0).
func (r FLOPRate) MarshalYAML() (any, error) { return yamlText(r.String()) }

// MarshalYAML writes r as String does (zero as a plain 0).
func (r EdgeRate) MarshalYAML() (any, error) { return yamlText(r.String()) }

// MarshalYAML writes d as String does.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
