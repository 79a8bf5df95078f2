package devices

import (
	"errors"
	"fmt"
	"math"
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

// unitKind is what a unit word measures.
type unitKind int

const (
	kindNone unitKind = iota // a bare number
	kindSize
	kindBandwidth
	kindFLOPRate
	kindEdgeRate
)

// noun names a kind in error messages.
func (k unitKind) noun() string {
	switch k {
	case kindSize:
		return "size"
	case kindBandwidth:
		return "bandwidth"
	case kindFLOPRate:
		return "FLOP rate"
	case kindEdgeRate:
		return "edge rate"
	}
	return "bare number"
}

// example is an example of a value of kind k, for "want ..." hints; num and
// sym (a decimal prefix) shape it after what the user wrote when given.
func (k unitKind) example(num, sym string) string {
	switch k {
	case kindSize:
		if num == "" {
			num, sym = "16", "G"
		}
		return fmt.Sprintf("a size such as %q", num+" "+sym+"B")
	case kindFLOPRate:
		if num == "" || isBinary(sym) {
			num, sym = "7", "T"
		}
		return fmt.Sprintf("a FLOP rate such as %q", num+" "+sym+"FLOP/s")
	case kindEdgeRate:
		if num == "" || isBinary(sym) {
			num, sym = "50", "M"
		}
		return fmt.Sprintf("an edge rate such as %q", num+sym+" edges/s")
	}
	if num == "" {
		num, sym = "400", "M"
	}
	return fmt.Sprintf("a bandwidth such as %q", num+" "+sym+"B/s")
}

// withArticle puts "a" or "an" before noun.
func withArticle(noun string) string {
	if strings.ContainsRune("aeiou", rune(noun[0])) {
		return "an " + noun
	}
	return "a " + noun
}

// defaultSym is the prefix used in the example for a bare number.
func (k unitKind) defaultSym() string {
	switch k {
	case kindSize:
		return "G"
	case kindFLOPRate:
		return "T"
	}
	return "M"
}

type prefix struct {
	sym  string
	mult float64
}

// decimalDesc are the SI prefixes and binaryDesc the IEC ones (sizes and
// bandwidths only), largest first.
var (
	decimalDesc = []prefix{{"P", 1e15}, {"T", 1e12}, {"G", 1e9}, {"M", 1e6}, {"k", 1e3}, {"", 1}}
	binaryDesc  = []prefix{{"Pi", 1 << 50}, {"Ti", 1 << 40}, {"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}}
	// byteUnits is every prefix a size or bandwidth may take.
	byteUnits = append(append([]prefix(nil), decimalDesc...), binaryDesc...)
)

func isBinary(sym string) bool { return strings.HasSuffix(sym, "i") }

// unitWords are the unit words after the prefix.
var unitWords = []struct {
	word     string
	kind     unitKind
	binaryOK bool
}{
	{"B/s", kindBandwidth, true},
	{"B", kindSize, true},
	{"FLOP/s", kindFLOPRate, false},
	{"FLOPS", kindFLOPRate, false},
	{"edges/s", kindEdgeRate, false},
}

// quantity is a parsed "number [prefix]unit".
type quantity struct {
	num   string // the number as written
	sym   string // the prefix as written
	kind  unitKind
	value float64 // in base units (bytes, bytes/s, FLOP/s, edges/s)
}

// scanNumber splits s into a leading decimal number (optional sign, digits,
// optional fraction, optional exponent) and the rest.
func scanNumber(s string) (num, rest string, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	digits := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return "", s, false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j { // an exponent needs digits; "5edges/s" is 5 edges/s
			i = k
		}
	}
	return s[:i], s[i:], true
}

// parseUnit reads "[prefix][ ]word" or nothing; a lone prefix ("50M") is
// a bare number.
func parseUnit(u string) (kind unitKind, p prefix, ok bool) {
	for _, p := range byteUnits {
		if u == p.sym {
			return kindNone, p, true
		}
		if !strings.HasPrefix(u, p.sym) {
			continue
		}
		w := u[len(p.sym):]
		if p.sym != "" {
			w = strings.TrimLeft(w, " \t")
		}
		for _, uw := range unitWords {
			if w == uw.word && (uw.binaryOK || !isBinary(p.sym)) {
				return uw.kind, p, true
			}
		}
	}
	return kindNone, prefix{}, false
}

// parseQuantity reads "number [prefix]unit" of any kind. Negative values
// are returned as such; NaN, infinities and garbage are errors.
func parseQuantity(s string) (quantity, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return quantity{}, errors.New("empty value")
	}
	num, rest, ok := scanNumber(t)
	if !ok {
		low := strings.ToLower(strings.TrimLeft(t, "+-."))
		if strings.HasPrefix(low, "nan") || strings.HasPrefix(low, "inf") {
			return quantity{}, fmt.Errorf("%q is not a finite number", s)
		}
		return quantity{}, fmt.Errorf("%q does not start with a number", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return quantity{}, fmt.Errorf("bad number in %q", s)
	}
	unit := strings.TrimSpace(rest)
	kind, p, ok := parseUnit(unit)
	if !ok {
		return quantity{}, fmt.Errorf("unknown unit %q in %q", unit, s)
	}
	v := f * p.mult
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return quantity{}, fmt.Errorf("%q is too large", s)
	}
	if v == 0 {
		v = 0 // no negative zero
	}
	return quantity{num: num, sym: p.sym, kind: kind, value: v}, nil
}

// parseAs reads s as a non-negative quantity of kind want. A bare number is
// accepted only when it is zero.
func parseAs(s string, want unitKind) (quantity, error) {
	q, err := parseQuantity(s)
	if err != nil {
		return q, fmt.Errorf("%w; want %s", err, want.example("", ""))
	}
	switch {
	case q.kind == want:
	case q.kind == kindNone && q.value == 0:
	case q.kind == kindNone:
		sym := q.sym
		if sym == "" {
			sym = want.defaultSym()
		}
		return q, fmt.Errorf("missing unit in %q; want %s", s, want.example(q.num, sym))
	default:
		return q, fmt.Errorf("%q is %s; want %s", s, withArticle(q.kind.noun()), want.example(q.num, q.sym))
	}
	if q.value < 0 {
		return q, fmt.Errorf("negative %s %q", want.noun(), s)
	}
	return q, nil
}

// ParseBandwidth reads a bandwidth such as "400 MB/s", "12 GiB/s" or "0".
func ParseBandwidth(s string) (Bandwidth, error) {
	q, err := parseAs(s, kindBandwidth)
	if err != nil {
		return 0, err
	}
	return Bandwidth(q.value), nil
}

// ParseFLOPRate reads a compute rate such as "7 TFLOP/s" or "7 TFLOPS".
func ParseFLOPRate(s string) (FLOPRate, error) {
	q, err := parseAs(s, kindFLOPRate)
	if err != nil {
		return 0, err
	}
	return FLOPRate(q.value), nil
}

// ParseEdgeRate reads an edge rate such as "1.462M edges/s".
func ParseEdgeRate(s string) (EdgeRate, error) {
	q, err := parseAs(s, kindEdgeRate)
	if err != nil {
		return 0, err
	}
	return EdgeRate(q.value), nil
}

// ParseBytes reads a size such as "16 GB", "61 GiB" or "0". The size must be
// a whole number of bytes.
func ParseBytes(s string) (Bytes, error) {
	q, err := parseAs(s, kindSize)
	if err != nil {
		return 0, err
	}
	return q.bytes(s)
}

// bytes converts q to a whole number of bytes, exactly when the number was
// written as an integer.
func (q quantity) bytes(s string) (Bytes, error) {
	mult := int64(1)
	for _, p := range byteUnits {
		if p.sym == q.sym {
			mult = int64(p.mult)
		}
	}
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
			if q.kind == kindNone {
				return 0, fmt.Errorf("missing unit in duration %q; want Go syntax such as \"1ms\" or \"100us\"", s)
			}
			return 0, fmt.Errorf("%q is %s; want a duration such as \"1ms\"", s, withArticle(q.kind.noun()))
		}
		return 0, fmt.Errorf("invalid duration %q; want Go syntax such as \"1ms\" or \"100us\"", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("negative duration %q", s)
	}
	return Duration(d), nil
}

// String writes a value in the prefix family (decimal, binary) that gives
// the shorter number, decimal on a tie, with the largest prefix of that
// family that leaves a number ≥ 1 and parses back exactly; bare base units
// are the fallback.

// format writes v (in base units) with render(num, prefix), choosing the
// prefix as described above; exact reports whether a rendering parses back
// to v. It returns "" when nothing does.
func format(v float64, families [][]prefix, render func(num, sym string) string, exact func(s string) bool) string {
	best, bestNum := "", ""
	for _, fam := range families {
		for _, p := range fam {
			x := v / p.mult
			if p.mult != 1 && math.Abs(x) < 1 {
				continue
			}
			num := strconv.FormatFloat(x, 'g', -1, 64)
			s := render(num, p.sym)
			if !exact(s) {
				continue
			}
			if best == "" || len(num) < len(bestNum) {
				best, bestNum = s, num
			}
			break
		}
	}
	return best
}

// formatFloat writes a float quantity; the empty prefix always parses back
// exactly, so the result is never empty.
func formatFloat(v float64, families [][]prefix, render func(num, sym string) string) string {
	if v == 0 {
		return "0"
	}
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return render(strconv.FormatFloat(v, 'g', -1, 64), "")
	}
	return format(v, families, render, func(s string) bool {
		q, err := parseQuantity(s)
		return err == nil && q.value == v
	})
}

// String writes b as "400 MB/s", "12 GiB/s" or "0"; it parses back to b.
func (b Bandwidth) String() string {
	return formatFloat(float64(b), [][]prefix{decimalDesc, binaryDesc}, func(num, sym string) string { return num + " " + sym + "B/s" })
}

// String writes r as "7 TFLOP/s" or "0"; it parses back to r.
func (r FLOPRate) String() string {
	return formatFloat(float64(r), [][]prefix{decimalDesc}, func(num, sym string) string { return num + " " + sym + "FLOP/s" })
}

// String writes r as "50M edges/s" or "0"; it parses back to r.
func (r EdgeRate) String() string {
	return formatFloat(float64(r), [][]prefix{decimalDesc}, func(num, sym string) string { return num + sym + " edges/s" })
}

// String writes b as "16 GB", "61 GiB" or "0"; it parses back to b.
func (b Bytes) String() string {
	if b == 0 {
		return "0"
	}
	s := format(float64(b), [][]prefix{decimalDesc, binaryDesc}, func(num, sym string) string { return num + " " + sym + "B" },
		func(s string) bool {
			q, err := parseQuantity(s)
			if err != nil {
				return false
			}
			n, err := q.bytes(s)
			return err == nil && n == b
		})
	if s == "" { // float64(b) is inexact beyond 2^53
		s = strconv.FormatInt(int64(b), 10) + " B"
	}
	return s
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

// scalarText returns the text of a scalar YAML node, or an error saying
// what was wanted.
func scalarText(n *yaml.Node, want string) (string, error) {
	n = deref(n)
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("want %s, got %s", want, describe(n))
	}
	return n.Value, nil
}

// UnmarshalYAML reads a bandwidth with its unit.
func (b *Bandwidth) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalarText(n, kindBandwidth.example("", ""))
	if err == nil {
		*b, err = ParseBandwidth(s)
	}
	return err
}

// UnmarshalYAML reads a size with its unit.
func (b *Bytes) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalarText(n, kindSize.example("", ""))
	if err == nil {
		*b, err = ParseBytes(s)
	}
	return err
}

// UnmarshalYAML reads a FLOP rate with its unit.
func (r *FLOPRate) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalarText(n, kindFLOPRate.example("", ""))
	if err == nil {
		*r, err = ParseFLOPRate(s)
	}
	return err
}

// UnmarshalYAML reads an edge rate with its unit.
func (r *EdgeRate) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalarText(n, kindEdgeRate.example("", ""))
	if err == nil {
		*r, err = ParseEdgeRate(s)
	}
	return err
}

// UnmarshalYAML reads a duration in Go syntax.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	s, err := scalarText(n, `a duration such as "1ms"`)
	if err == nil {
		*d, err = ParseDuration(s)
	}
	return err
}

// yamlValue is what MarshalYAML emits: a plain 0 for zero, else the text.
func yamlValue(zero bool, s string) any {
	if zero {
		return 0
	}
	return s
}

// MarshalYAML writes b as String does (zero as a plain 0).
func (b Bandwidth) MarshalYAML() (any, error) { return yamlValue(b == 0, b.String()), nil }

// MarshalYAML writes b as String does (zero as a plain 0).
func (b Bytes) MarshalYAML() (any, error) { return yamlValue(b == 0, b.String()), nil }

// MarshalYAML writes r as String does (zero as a plain 0).
func (r FLOPRate) MarshalYAML() (any, error) { return yamlValue(r == 0, r.String()), nil }

// MarshalYAML writes r as String does (zero as a plain 0).
func (r EdgeRate) MarshalYAML() (any, error) { return yamlValue(r == 0, r.String()), nil }

// MarshalYAML writes d as String does.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }
