package plots

import (
	"math"
	"strconv"
	"strings"
)

// A time unit of the human outputs: its name and seconds, and the value
// (rounded as printed) it is used below.
type timeUnit struct {
	name  string
	secs  float64
	below float64
}

// timeUnits are the units a time prints in, smallest first: the one place
// that decides them.
var timeUnits = []timeUnit{
	{"ms", 1e-3, 1000},
	{"s", 1, 60},
	{"min", 60, 60},
	{"h", 3600, math.Inf(1)},
}

// durationDigits are the significant digits a time prints with.
const durationDigits = 3

// Duration writes seconds for a human table or line in the unit that
// fits its size — ms below a second, s below a minute, min below an hour,
// h above — with three significant digits: "850 ms", "12.3 s", "4.27 min",
// "1.52 h"; zero is "0 s" and a time under a microsecond "<0.001 ms".
// Machine outputs (JSON, CSV) keep seconds.
func Duration(seconds float64) string {
	if seconds < 0 {
		return "-" + Duration(-seconds)
	}
	if seconds == 0 {
		return "0 s"
	}
	if math.IsNaN(seconds) || math.IsInf(seconds, 0) {
		return strconv.FormatFloat(seconds, 'f', -1, 64) + " s"
	}
	u, dec := unitOf(seconds)
	if dec < 0 {
		return "<0.001 ms"
	}
	return strconv.FormatFloat(seconds/u.secs, 'f', dec, 64) + " " + u.name
}

// DurationRange writes a time and its range in the time's unit and
// decimals: "4.27 min (3.90–4.61)".
func DurationRange(seconds, low, high float64) string {
	u, dec := timeUnit{}, -1
	if seconds > 0 && !math.IsInf(seconds, 0) {
		u, dec = unitOf(seconds)
	}
	if dec < 0 { // zero, too small, or not a number: each in its own unit
		return Duration(seconds) + " (" + Duration(low) + "–" + Duration(high) + ")"
	}
	f := func(x float64) string { return strconv.FormatFloat(x/u.secs, 'f', dec, 64) }
	return f(seconds) + " " + u.name + " (" + f(low) + "–" + f(high) + ")"
}

// DurationUnit is the unit for an axis or a column of times up to
// seconds: its name and how many seconds it holds ("min", 60).
func DurationUnit(seconds float64) (name string, secs float64) {
	if !(seconds > 0) || math.IsInf(seconds, 0) {
		return "s", 1
	}
	u, _ := unitOf(seconds)
	return u.name, u.secs
}

// unitOf picks the unit of a positive time and the decimals that give it
// durationDigits significant digits; the unit is chosen on the value as
// rounded, so 59.96 s is "1.00 min", not "60.0 s". Negative decimals: the
// time is too small to print in ms.
func unitOf(seconds float64) (timeUnit, int) {
	for _, u := range timeUnits {
		v := seconds / u.secs
		if v < 1e-3 {
			return u, -1 // below a microsecond: the smallest unit's limit
		}
		dec := sigDecimals(v)
		r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'f', dec, 64), 64)
		if r < u.below {
			// Rounding may have carried into one more digit (9.996 → 10.00).
			return u, sigDecimals(r)
		}
		seconds = r * u.secs // on, as rounded: 59.96 s is 60.0 s, 1.00 min
	}
	panic("unreachable: the last unit has no bound")
}

// sigDecimals gives v durationDigits significant digits (none for v ≥ 100).
func sigDecimals(v float64) int {
	if v <= 0 {
		return 0
	}
	return max(durationDigits-1-int(math.Floor(math.Log10(v))), 0)
}

// isDuration reports whether s is a time as Duration or DurationRange
// writes it (for the alignment of a table's columns).
func isDuration(s string) bool {
	s, _, _ = strings.Cut(s, " (")
	num, unit, ok := strings.Cut(strings.TrimPrefix(s, "<"), " ")
	if !ok {
		return false
	}
	for _, u := range timeUnits {
		if unit == u.name {
			_, err := strconv.ParseFloat(num, 64)
			return err == nil
		}
	}
	return false
}
