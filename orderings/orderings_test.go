package orderings

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

func build(t testing.TB, name string, p, c int) *Plan {
	t.Helper()
	pl, err := Build(name, p, c, Belady, 0)
	require.NoError(t, err)
	return pl
}

func TestPaperSmallCases(t *testing.T) {
	tests := []struct {
		name     string
		ordering string
		p, c     int
		swaps    int
	}{
		{"Marius Fig. 6 BETA", "beta", 4, 2, 5},
		{"Marius Fig. 6 Hilbert", "hilbert", 4, 2, 9},
		{"Marius Fig. 5 BETA", "beta", 6, 3, 7},
		{"issue example BETA p=32 c=8", "beta", 32, 8, 78},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := build(t, tt.ordering, tt.p, tt.c)
			assert.Equal(t, tt.swaps, pl.Counts.Swaps)
			assert.Equal(t, tt.swaps+tt.c, pl.Counts.Loads)
			assert.Equal(t, tt.swaps, pl.Counts.Writes)
			assert.Equal(t, tt.c, pl.Counts.FinalWrites)
		})
	}
}

func TestBETAFigure5Sequence(t *testing.T) {
	// Marius Figure 5 (p=6, c=3): fix {0,1} while 2…5 pass through the last
	// slot, replace {0,1} by {2,3}, fix them while 4 passes, then bring in 5.
	want := [][]int{{0, 1, 2}, {0, 1, 3}, {0, 1, 4}, {0, 1, 5}, {2, 1, 5}, {2, 3, 5}, {2, 3, 4}, {5, 3, 4}}
	pl := build(t, "beta", 6, 3)
	assert.Equal(t, want, pl.States)
	// Each state contributes exactly its new buckets (Algorithm 4).
	assert.Equal(t, []Bucket{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {2, 0}, {2, 1}, {2, 2}, {0, 3}, {1, 3}, {3, 0}, {3, 1}, {3, 3}}, pl.Buckets[:14])
}

func TestBounds(t *testing.T) {
	assert.Equal(t, 67, LowerBound(32, 8))
	assert.Equal(t, 78, BETASwaps(32, 8))
	assert.Equal(t, 0, LowerBound(8, 8))
	assert.Equal(t, 0, BETASwaps(8, 8))
	assert.Equal(t, -1, LowerBound(8, 1))
	assert.Equal(t, -1, BETASwaps(8, 1))
	// p=4, c=2: 6 pairs, 1 in the first buffer, one new pair per swap.
	assert.Equal(t, 5, LowerBound(4, 2))
}

// TestBETASwapsMatchesReplay checks Marius equation (3) against the Belady
// replay of the BETA order for every 3 ≤ p ≤ 200 and 2 ≤ c ≤ p.
func TestBETASwapsMatchesReplay(t *testing.T) {
	maxP := 200
	if testing.Short() {
		maxP = 60
	}
	for p := 3; p <= maxP; p++ {
		t.Run(fmt.Sprint(p), func(t *testing.T) {
			t.Parallel()
			for c := 2; c <= p; c++ {
				order, states, err := betaOrder(p, c, 0)
				require.NoError(t, err)
				s, err := Replay(p, c, order, Belady)
				require.NoError(t, err)
				if s.Counts.Swaps != BETASwaps(p, c) || len(states)-1 != BETASwaps(p, c) {
					t.Fatalf("p=%d c=%d: replayed %d swaps, %d states, eq. (3) gives %d", p, c, s.Counts.Swaps, len(states), BETASwaps(p, c))
				}
			}
		})
	}
}

func TestBETASeedKeepsCount(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 42} {
		for _, pc := range [][2]int{{6, 3}, {16, 4}, {32, 8}, {33, 7}} {
			pl, err := Build("beta", pc[0], pc[1], Belady, seed)
			require.NoError(t, err)
			require.NoError(t, pl.Validate())
			assert.Equal(t, BETASwaps(pc[0], pc[1]), pl.Counts.Swaps, "seed %d p=%d c=%d", seed, pc[0], pc[1])
		}
	}
	a, err := Build("beta", 16, 4, Belady, 7)
	require.NoError(t, err)
	b, err := Build("beta", 16, 4, Belady, 7)
	require.NoError(t, err)
	c, err := Build("beta", 16, 4, Belady, 8)
	require.NoError(t, err)
	assert.Equal(t, a.Buckets, b.Buckets, "same seed, same order")
	assert.NotEqual(t, a.Buckets, c.Buckets, "different seed, different order")
}

// TestNoOrderingBeatsLowerBound builds every ordering for many (p, c) under
// every policy, validates the plan and checks the lower bound.
func TestNoOrderingBeatsLowerBound(t *testing.T) {
	var pcs [][2]int
	for p := 2; p <= 24; p++ {
		for c := 2; c <= p; c++ {
			pcs = append(pcs, [2]int{p, c})
		}
	}
	pcs = append(pcs, [2]int{16, 4}, [2]int{64, 4}, [2]int{32, 8}, [2]int{64, 16}, [2]int{40, 3})
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			built := 0
			for _, pc := range pcs {
				for _, pol := range Policies {
					pl, err := Build(name, pc[0], pc[1], pol, 5)
					if errors.Is(err, ErrNotApplicable) {
						continue
					}
					require.NoError(t, err, "p=%d c=%d", pc[0], pc[1])
					require.NoError(t, pl.Validate(), "p=%d c=%d %s", pc[0], pc[1], pol)
					require.GreaterOrEqual(t, pl.Counts.Swaps, LowerBound(pc[0], pc[1]), "p=%d c=%d %s", pc[0], pc[1], pol)
					require.Equal(t, pl.Counts.Swaps, pl.Counts.Writes)
					require.Equal(t, pl.Counts.Loads, pl.Counts.Swaps+pl.Counts.FinalWrites)
					built++
				}
			}
			assert.Positive(t, built)
		})
	}
}

func TestCZeroSwapsWhenEverythingFits(t *testing.T) {
	for _, name := range Names() {
		pl, err := Build(name, 8, 8, Belady, 1)
		if errors.Is(err, ErrNotApplicable) {
			continue
		}
		require.NoError(t, err)
		assert.Zero(t, pl.Counts.Swaps, name)
		assert.Equal(t, 8, pl.Counts.Loads, name)
	}
}

func TestBeladyNeverWorseThanOtherPolicies(t *testing.T) {
	for _, name := range Names() {
		for _, pc := range [][2]int{{16, 4}, {12, 3}, {20, 5}} {
			bel, err := Build(name, pc[0], pc[1], Belady, 3)
			if errors.Is(err, ErrNotApplicable) {
				continue
			}
			require.NoError(t, err)
			for _, pol := range []Policy{LRU, FIFO} {
				other, err := Build(name, pc[0], pc[1], pol, 3)
				require.NoError(t, err)
				assert.LessOrEqual(t, bel.Counts.Swaps, other.Counts.Swaps, "%s p=%d c=%d %s", name, pc[0], pc[1], pol)
			}
		}
	}
}

func TestOrderingShapes(t *testing.T) {
	t.Run("hilbert-symmetric pairs (i,j) with (j,i)", func(t *testing.T) {
		pl := build(t, "hilbert-symmetric", 7, 2)
		for k := 0; k < len(pl.Buckets); k++ {
			b := pl.Buckets[k]
			if b.Src != b.Dst {
				require.Less(t, k+1, len(pl.Buckets))
				require.Equal(t, Bucket{b.Dst, b.Src}, pl.Buckets[k+1])
				k++
			}
		}
	})
	t.Run("hilbert covers a non power of two", func(t *testing.T) {
		pl := build(t, "hilbert", 5, 2)
		assert.Len(t, pl.Buckets, 25)
		assert.Equal(t, Bucket{0, 0}, pl.Buckets[0])
	})
	t.Run("inside-out starts in the last layer", func(t *testing.T) {
		pl := build(t, "inside-out", 3, 2)
		assert.Equal(t, []Bucket{{2, 2}, {1, 2}, {2, 1}, {1, 1}, {0, 1}, {1, 0}, {0, 2}, {2, 0}, {0, 0}}, pl.Buckets)
	})
	t.Run("outside-in starts in layer 0", func(t *testing.T) {
		pl := build(t, "outside-in", 3, 2)
		assert.Equal(t, []Bucket{{0, 0}, {0, 1}, {1, 0}, {0, 2}, {2, 0}, {1, 1}, {1, 2}, {2, 1}, {2, 2}}, pl.Buckets)
	})
	t.Run("cover p=16 has 20 states of 4 sharing every pair once", func(t *testing.T) {
		pl := build(t, "cover", 16, 4)
		require.Len(t, pl.States, 20)
		pairs := map[[2]int]int{}
		for _, st := range pl.States {
			require.Len(t, st, 4)
			for i := 0; i < 4; i++ {
				for j := i + 1; j < 4; j++ {
					pairs[[2]int{min(st[i], st[j]), max(st[i], st[j])}]++
				}
			}
		}
		assert.Len(t, pairs, 120)
		for pr, n := range pairs {
			assert.Equal(t, 1, n, "pair %v", pr)
		}
		shared := 0
		for i := 1; i < len(pl.States); i++ {
			if intersects(pl.States[i], pl.States[i-1]) {
				shared++
			}
		}
		assert.GreaterOrEqual(t, shared, 15, "consecutive states should mostly share a partition")
	})
	t.Run("cover p=64 lines", func(t *testing.T) {
		assert.Len(t, ag4Lines(3), 16*21)
	})
	t.Run("legend six-partition example", func(t *testing.T) {
		// Legend Figure 6 / §4: column 0 with pivot 0, then {1,4,5},
		// {1,3,5}, {2,3,5}, {2,4,5} in the paper's wording.
		pl := build(t, "legend", 6, 3)
		want := [][]int{{0, 1, 2}, {0, 2, 3}, {0, 3, 4}, {0, 4, 5}, {1, 4, 5}, {1, 3, 5}, {2, 3, 5}, {2, 4, 5}}
		require.Len(t, pl.States, len(want))
		for i := range want {
			assert.Equal(t, want[i], sortedCopy(pl.States[i]), "state %d", i)
		}
		// Algorithm 2: the buckets touching partition 1 (evicted next) first.
		first := map[Bucket]bool{}
		for _, b := range pl.Buckets[:5] {
			first[b] = true
		}
		assert.Equal(t, map[Bucket]bool{{0, 1}: true, {1, 0}: true, {1, 1}: true, {1, 2}: true, {2, 1}: true}, first)
		assert.Equal(t, 7, pl.Counts.Swaps)
	})
	t.Run("legend prefetches more than beta", func(t *testing.T) {
		leg := build(t, "legend", 16, 3)
		beta := build(t, "beta", 16, 3)
		assert.Greater(t, leg.Counts.PrefetchableSwaps, beta.Counts.PrefetchableSwaps)
		assert.Greater(t, leg.Counts.PrefetchableSwaps, leg.Counts.Swaps*3/4)
	})
}

func TestNotApplicable(t *testing.T) {
	for _, tc := range []struct {
		name string
		p, c int
	}{{"cover", 16, 3}, {"cover", 12, 4}, {"legend", 16, 4}} {
		_, err := Build(tc.name, tc.p, tc.c, Belady, 0)
		require.Error(t, err)
		assert.ErrorIs(t, err, ErrNotApplicable)
	}
	_, err := Build("beta", 4, 5, Belady, 0)
	assert.ErrorContains(t, err, "exceeds")
	_, err = Build("nope", 4, 2, Belady, 0)
	assert.ErrorContains(t, err, "unknown ordering")
	_, err = ParsePolicy("mru")
	assert.ErrorContains(t, err, "unknown policy")
}

func TestValidateRejects(t *testing.T) {
	good := func() *Plan { return build(t, "beta", 6, 3) }
	tests := []struct {
		name   string
		mutate func(*Plan)
		msg    string
	}{
		{"duplicate bucket", func(p *Plan) { p.Buckets[1] = p.Buckets[0] }, "appears twice"},
		{"missing bucket", func(p *Plan) { p.Buckets = p.Buckets[:len(p.Buckets)-1] }, "buckets, want"},
		{"bucket out of range", func(p *Plan) { p.Buckets[3] = Bucket{6, 0} }, "outside"},
		{"state over capacity", func(p *Plan) { p.States[0] = []int{0, 1, 2, 3} }, "more than c"},
		{"partition not resident", func(p *Plan) { p.Loads = p.Loads[:len(p.Loads)-1] }, "not resident"},
		{"wrong counts", func(p *Plan) { p.Counts.Swaps++ }, "counts"},
		{"wrong issue point", func(p *Plan) { p.Loads[len(p.Loads)-1].IssueAt++ }, "issue_at"},
		{"c too small", func(p *Plan) { p.C = 1 }, "c must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pl := good()
			tt.mutate(pl)
			err := pl.Validate()
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidPlan)
			assert.Contains(t, err.Error(), tt.msg)
		})
	}
}

func TestPlanJSONRoundTripAndGolden(t *testing.T) {
	pl := build(t, "legend", 6, 3)
	var buf bytes.Buffer
	require.NoError(t, pl.WriteJSON(&buf))
	golden := filepath.Join("testdata", "legend_p6_c3.json")
	if *update {
		require.NoError(t, os.WriteFile(golden, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(golden)
	require.NoError(t, err)
	assert.Equal(t, string(want), buf.String(), "run go test ./orderings -update to regenerate")
	back, err := ReadJSON(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	assert.Equal(t, pl, back)
	_, err = ReadJSON(bytes.NewReader([]byte(`{"p":4,"c":2,"buckets":[[0,0]]}`)))
	assert.ErrorIs(t, err, ErrInvalidPlan)
}

// FuzzReplayValidate feeds random bucket sequences to Replay and checks the
// invariants a valid plan must satisfy.
func FuzzReplayValidate(f *testing.F) {
	f.Add(uint64(1), uint8(5), uint8(2), uint8(0))
	f.Add(uint64(7), uint8(16), uint8(4), uint8(1))
	f.Add(uint64(9), uint8(3), uint8(3), uint8(2))
	f.Fuzz(func(t *testing.T, seed uint64, pb, cb, pol uint8) {
		p := int(pb)%24 + 2
		c := int(cb)%(p-1) + 2
		policy := Policies[int(pol)%len(Policies)]
		rng := rand.New(rand.NewPCG(seed, 1))
		order := make([]Bucket, 0, p*p)
		for _, k := range rng.Perm(p * p) {
			order = append(order, Bucket{k / p, k % p})
		}
		s, err := Replay(p, c, order, policy)
		if err != nil {
			t.Fatal(err)
		}
		pl := &Plan{Ordering: "fuzz", Policy: string(policy), P: p, C: c, Buckets: order,
			Loads: s.Loads, FinalResident: s.FinalResident, Counts: s.Counts}
		if err := pl.Validate(); err != nil {
			t.Fatalf("p=%d c=%d %s: %v", p, c, policy, err)
		}
		if s.Counts.Swaps < LowerBound(p, c) {
			t.Fatalf("p=%d c=%d: %d swaps beat the lower bound %d", p, c, s.Counts.Swaps, LowerBound(p, c))
		}
		// A corrupted copy must be rejected, never panic.
		bad := *pl
		bad.Buckets = append([]Bucket(nil), order...)
		i, j := rng.IntN(len(order)), rng.IntN(len(order))
		bad.Buckets[i], bad.Buckets[j] = bad.Buckets[j], bad.Buckets[i]
		bad.Buckets[rng.IntN(len(order))] = Bucket{rng.IntN(p + 1), rng.IntN(p)}
		_ = bad.Validate()
	})
}

// FuzzReadJSON checks that arbitrary bytes never crash the plan loader.
func FuzzReadJSON(f *testing.F) {
	var buf bytes.Buffer
	pl, _ := Build("beta", 4, 2, Belady, 0)
	_ = pl.WriteJSON(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte(`{"p":2,"c":2,"buckets":[[0,0],[0,1],[1,0],[1,1]],"loads":[],"final_resident":[-1,-1]}`))
	f.Add([]byte(`{"p":99999,"c":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		pl, err := ReadJSON(bytes.NewReader(data))
		if err == nil {
			if verr := pl.Validate(); verr != nil {
				t.Fatalf("ReadJSON accepted an invalid plan: %v", verr)
			}
		}
	})
}

// BenchmarkReplayBelady replays BETA at p=1024, c=256 (1,048,576 buckets)
// under Belady; run with go test -bench and compare with benchstat.
func BenchmarkReplayBelady(b *testing.B) {
	for _, name := range []string{"beta", "hilbert", "random"} {
		b.Run(name, func(b *testing.B) {
			order, _, err := registryOrder(name, 1024, 256)
			require.NoError(b, err)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := Replay(1024, 256, order, Belady); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(order))*float64(b.N)/b.Elapsed().Seconds(), "buckets/s")
		})
	}
}

// BenchmarkBuildAll builds every ordering's Plan for p=32, c=8, the work
// behind one `simulate --p 32 --c 8`.
func BenchmarkBuildAll(b *testing.B) {
	for i := 0; i < b.N; i++ {
		for _, name := range Names() {
			if _, err := Build(name, 32, 8, Belady, 0); err != nil && !errors.Is(err, ErrNotApplicable) {
				b.Fatal(err)
			}
		}
	}
}

func registryOrder(name string, p, c int) ([]Bucket, [][]int, error) {
	s, err := Lookup(name)
	if err != nil {
		return nil, nil, err
	}
	return s.Order(p, c, 1)
}
