package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Split says which part of the data set an edge belongs to.
type Split int

// The splits.
const (
	Train Split = iota
	Valid
	Test
)

// The 90/5/5 split the Marius paper uses for all graphs but FB15k (80/10/10).
const (
	DefaultValid = 0.05
	DefaultTest  = 0.05
)

func (s Split) String() string {
	switch s {
	case Train:
		return "train"
	case Valid:
		return "valid"
	case Test:
		return "test"
	}
	return fmt.Sprintf("Split(%d)", int(s))
}

// CheckFractions returns an error unless valid and test are fractions in
// [0, 1] with valid + test ≤ 1. Validate user input with it before calling
// NewSplitter.
func CheckFractions(valid, test float64) error {
	ok := func(x float64) bool { return x >= 0 && x <= 1 } // false for NaN
	if !ok(valid) || !ok(test) || valid+test > 1 {
		return fmt.Errorf("graph: split fractions valid=%v test=%v: want each in [0, 1] and valid+test ≤ 1", valid, test)
	}
	return nil
}

// Splitter assigns edges to splits with independent seeded draws: each edge
// is Valid with probability valid, Test with probability test and Train
// otherwise. The same seed gives the same sequence of splits.
type Splitter struct {
	rng         *rand.Rand
	valid, both float64
}

// NewSplitter returns a Splitter drawing Valid with probability valid and Test
// with probability test (DefaultValid and DefaultTest give 90/5/5). It does
// not fail: fractions that CheckFractions rejects are sanitised (NaN and
// negatives count as 0, values above 1 as 1, and a sum above 1 is scaled down
// to 1), so check user input first.
func NewSplitter(seed int64, valid, test float64) *Splitter {
	clean := func(x float64) float64 {
		if math.IsNaN(x) || x < 0 {
			return 0
		}
		return min(x, 1)
	}
	valid, test = clean(valid), clean(test)
	if s := valid + test; s > 1 {
		valid, test = valid/s, test/s
	}
	return &Splitter{
		rng:   rand.New(rand.NewPCG(uint64(seed), 0x73706c6974)), // "split"
		valid: valid,
		both:  valid + test,
	}
}

// Next returns the split of the next edge.
func (s *Splitter) Next() Split {
	u := s.rng.Float64()
	switch {
	case u < s.valid:
		return Valid
	case u < s.both:
		return Test
	}
	return Train
}
