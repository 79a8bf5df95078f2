package orderings

import (
	"errors"
	"fmt"
	"strings"
)

// Skipped is an ordering that is not defined for the requested (p, c),
// with what it needs.
type Skipped struct {
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// Select builds the named orderings' Plans for (p, c) under policy and
// seed, in the order named, each once (a name given twice runs once). An
// ordering not defined for (p, c) is no
// error: it is listed under skipped with the reason (COVER needs p = 4^k
// and c = 4, Legend c = 3). This is the one rule by which simulate,
// simulate sweep, realrun --compare-sim and the validation leave
// orderings out; any other error is returned.
func Select(names []string, p, c int, policy Policy, seed int64) (plans []*Plan, skipped []Skipped, err error) {
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		pl, err := Build(name, p, c, policy, seed)
		var na *NotApplicableError
		switch {
		case errors.As(err, &na):
			skipped = append(skipped, Skipped{Ordering: name, Reason: na.Reason})
		case err != nil:
			return nil, nil, err
		default:
			plans = append(plans, pl)
		}
	}
	return plans, skipped, nil
}

// NoneValidError says that not one of the orderings asked for is defined
// at (p, c), with what each needs.
type NoneValidError struct {
	P, C    int
	Skipped []Skipped
}

func (e *NoneValidError) Error() string {
	reasons := make([]string, len(e.Skipped))
	for i, s := range e.Skipped {
		reasons[i] = s.Ordering + " " + s.Reason
	}
	return fmt.Sprintf("none of the orderings is defined at p = %d, c = %d: %s", e.P, e.C, strings.Join(reasons, "; "))
}

// SelectSome is Select for a list that must leave something to run: when
// every named ordering is skipped the error is a *NoneValidError naming
// why each was.
func SelectSome(names []string, p, c int, policy Policy, seed int64) ([]*Plan, []Skipped, error) {
	plans, skipped, err := Select(names, p, c, policy, seed)
	if err == nil && len(plans) == 0 && len(names) > 0 {
		err = &NoneValidError{P: p, C: c, Skipped: skipped}
	}
	return plans, skipped, err
}
