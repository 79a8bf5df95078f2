package orderings

import "errors"

// Skipped is an ordering that is not defined for the requested (p, c),
// with what it needs.
type Skipped struct {
	Ordering string `json:"ordering"`
	Reason   string `json:"reason"`
}

// Select builds the named orderings' Plans for (p, c) under policy and
// seed, in the order named. An ordering not defined for (p, c) is no
// error: it is listed under skipped with the reason (COVER needs p = 4^k
// and c = 4, Legend c = 3). This is the one rule by which simulate,
// simulate sweep, realrun --compare-sim and the validation leave
// orderings out; any other error is returned.
func Select(names []string, p, c int, policy Policy, seed int64) (plans []*Plan, skipped []Skipped, err error) {
	for _, name := range names {
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
