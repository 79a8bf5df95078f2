// Package useritem generates a two-type user–item graph with planted
// structure (issue 44's typed quality experiment): users and items fall
// into latent communities; a user buys mostly items of its own community
// and some of a second one, follows mostly users of its community, and
// items are "similar" to items of their community. Item and user
// popularity are skewed (Zipf-like weights), user activity heavy-tailed.
// Everything follows from the seed.
//
// The graph is written as realrun's typed input: train.tsv, valid.tsv and
// test.tsv ("src<TAB>rel<TAB>dst", node names per type: u123 is a user,
// i45 an item) and schema.yaml (PyTorch-BigGraph's vocabulary: users
// partitioned into P parts, items unpartitioned).
package useritem

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"

	"github.com/tierflow/tierflow/internal/atomicfile"
)

// Relation names and the entity types they join.
const (
	Bought  = "bought"  // user → item
	Follows = "follows" // user → user
	Similar = "similar" // item → item
)

// Config is the graph's shape. Zero fields take Default's.
type Config struct {
	Users, Items int
	Communities  int
	// P is the user type's partition count in schema.yaml (items are
	// unpartitioned).
	P int
	// BoughtPerUser, FollowsPerUser and SimilarPerItem are the mean
	// out-degrees of the relations (before duplicates are dropped);
	// SimilarPerItem < 0 leaves the similar relation out.
	BoughtPerUser, FollowsPerUser, SimilarPerItem float64
	// Own is the share of a user's purchases and follows within its own
	// community, Second the share of purchases in its second community;
	// the rest go anywhere (by popularity).
	Own, Second float64
	// Zipf is the exponent of the popularity weights (rank^-Zipf).
	Zipf float64
	// Valid and Test are the held-out edges (drawn uniformly, then those
	// with a node that no training edge has go back to training).
	Valid, Test int
	Seed        uint64
}

// Default is the experiment's graph: 30,000 users, 3,000 items in 30
// communities, about 350,000 edges.
var Default = Config{
	Users: 30000, Items: 3000, Communities: 30, P: 4,
	BoughtPerUser: 8, FollowsPerUser: 3, SimilarPerItem: 5,
	Own: 0.75, Second: 0.15, Zipf: 0.8,
	Valid: 4000, Test: 4000, Seed: 1,
}

func (c Config) withDefaults() Config {
	d := Default
	set := func(v *int, def int) {
		if *v == 0 {
			*v = def
		}
	}
	setF := func(v *float64, def float64) {
		if *v == 0 {
			*v = def
		}
	}
	set(&c.Users, d.Users)
	set(&c.Items, d.Items)
	set(&c.Communities, d.Communities)
	set(&c.P, d.P)
	set(&c.Valid, d.Valid)
	set(&c.Test, d.Test)
	setF(&c.BoughtPerUser, d.BoughtPerUser)
	setF(&c.FollowsPerUser, d.FollowsPerUser)
	setF(&c.SimilarPerItem, d.SimilarPerItem)
	setF(&c.Own, d.Own)
	setF(&c.Second, d.Second)
	setF(&c.Zipf, d.Zipf)
	return c
}

// Check refuses a shape that cannot be generated.
func (c Config) Check() error {
	c = c.withDefaults()
	switch {
	case c.Users < 2 || c.Items < 2:
		return fmt.Errorf("users and items: want at least 2 each, got %d and %d", c.Users, c.Items)
	case c.Communities < 1 || c.Communities > c.Users || c.Communities > c.Items:
		return fmt.Errorf("communities: want 1 to min(users, items), got %d", c.Communities)
	case c.P < 1:
		return fmt.Errorf("p: want at least 1, got %d", c.P)
	case c.BoughtPerUser < 0 || c.FollowsPerUser < 0:
		return fmt.Errorf("degrees: want non-negative means")
	case c.Own < 0 || c.Second < 0 || c.Own+c.Second > 1:
		return fmt.Errorf("own %g and second %g: want shares that sum to at most 1", c.Own, c.Second)
	case c.Valid < 0 || c.Test < 0:
		return fmt.Errorf("valid and test: want non-negative counts")
	}
	return nil
}

// Edge is one edge by type-local node index: Src of the relation's lhs
// type, Dst of its rhs type.
type Edge struct {
	Src int32
	Rel string
	Dst int32
}

// Graph is a generated graph and its split.
type Graph struct {
	Config             Config
	UserCommunity      []int32
	ItemCommunity      []int32
	Train, Valid, Test []Edge
}

// Line is an edge as the files write it.
func (e Edge) Line() string {
	src, dst := "u", "i"
	switch e.Rel {
	case Follows:
		dst = "u"
	case Similar:
		src = "i"
	}
	return fmt.Sprintf("%s%d\t%s\t%s%d", src, e.Src, e.Rel, dst, e.Dst)
}

// sampler draws indexes with probability proportional to weights.
type sampler struct {
	idx []int32
	cum []float64
}

func newSampler(idx []int32, w func(int32) float64) sampler {
	s := sampler{idx: idx, cum: make([]float64, len(idx))}
	var t float64
	for i, x := range idx {
		t += w(x)
		s.cum[i] = t
	}
	return s
}

func (s sampler) draw(rng *rand.Rand) int32 {
	u := rng.Float64() * s.cum[len(s.cum)-1]
	return s.idx[sort.SearchFloat64s(s.cum, u)]
}

// degree is a heavy-tailed count of mean about mean: a log-normal draw
// (σ = 1) rounded, at least 1 when mean > 0.
func degree(rng *rand.Rand, mean float64) int {
	if mean <= 0 {
		return 0
	}
	const sigma = 1.0
	mu := math.Log(mean) - sigma*sigma/2
	n := int(math.Round(math.Exp(mu + sigma*rng.NormFloat64())))
	return max(1, n)
}

// Generate draws the graph of c (defaults filled in).
func Generate(c Config) (*Graph, error) {
	c = c.withDefaults()
	if err := c.Check(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(c.Seed, 0x75736572)) // "user"
	g := &Graph{Config: c, UserCommunity: make([]int32, c.Users), ItemCommunity: make([]int32, c.Items)}
	k := c.Communities
	// Communities of roughly equal size, assigned at random; popularity
	// ranks a random permutation.
	for u := range g.UserCommunity {
		g.UserCommunity[u] = int32(rng.IntN(k))
	}
	for i := range g.ItemCommunity {
		g.ItemCommunity[i] = int32(rng.IntN(k))
	}
	// Every community has at least one user and one item.
	for q := range k {
		g.UserCommunity[q] = int32(q)
		g.ItemCommunity[q] = int32(q)
	}
	zipf := func(n int) []float64 {
		w := make([]float64, n)
		for r, x := range rng.Perm(n) {
			w[x] = math.Pow(float64(r+1), -c.Zipf)
		}
		return w
	}
	itemPop, userPop := zipf(c.Items), zipf(c.Users)
	members := func(comm []int32) [][]int32 {
		m := make([][]int32, k)
		for x, q := range comm {
			m[q] = append(m[q], int32(x))
		}
		return m
	}
	itemsOf, usersOf := members(g.ItemCommunity), members(g.UserCommunity)
	all := func(n int) []int32 {
		a := make([]int32, n)
		for i := range a {
			a[i] = int32(i)
		}
		return a
	}
	iw := func(x int32) float64 { return itemPop[x] }
	uw := func(x int32) float64 { return userPop[x] }
	itemIn, userIn := make([]sampler, k), make([]sampler, k)
	for q := range k {
		itemIn[q] = newSampler(itemsOf[q], iw)
		userIn[q] = newSampler(usersOf[q], uw)
	}
	anyItem, anyUser := newSampler(all(c.Items), iw), newSampler(all(c.Users), uw)

	var edges []Edge
	seen := map[Edge]bool{}
	add := func(e Edge) {
		if !seen[e] {
			seen[e] = true
			edges = append(edges, e)
		}
	}
	for u := range int32(c.Users) {
		own := g.UserCommunity[u]
		second := int32(rng.IntN(k))
		for range degree(rng, c.BoughtPerUser) {
			x := rng.Float64()
			var it int32
			switch {
			case x < c.Own:
				it = itemIn[own].draw(rng)
			case x < c.Own+c.Second:
				it = itemIn[second].draw(rng)
			default:
				it = anyItem.draw(rng)
			}
			add(Edge{u, Bought, it})
		}
		for range degree(rng, c.FollowsPerUser) {
			var v int32
			if rng.Float64() < c.Own {
				v = userIn[own].draw(rng)
			} else {
				v = anyUser.draw(rng)
			}
			if v != u {
				add(Edge{u, Follows, v})
			}
		}
	}
	if c.SimilarPerItem > 0 {
		for i := range int32(c.Items) {
			for range degree(rng, c.SimilarPerItem) {
				var j int32
				if rng.Float64() < 0.9 {
					j = itemIn[g.ItemCommunity[i]].draw(rng)
				} else {
					j = anyItem.draw(rng)
				}
				if j != i {
					add(Edge{i, Similar, j})
				}
			}
		}
	}
	rng.Shuffle(len(edges), func(i, j int) { edges[i], edges[j] = edges[j], edges[i] })
	g.split(edges)
	return g, nil
}

// split holds out the first Test then Valid edges of the shuffled list and
// moves back to training every held-out edge with a node (of its type)
// that no training edge has.
func (g *Graph) split(edges []Edge) {
	nt := min(g.Config.Test, len(edges)/4)
	nv := min(g.Config.Valid, len(edges)/4)
	test, valid, train := edges[:nt], edges[nt:nt+nv], edges[nt+nv:]
	users := make([]bool, g.Config.Users)
	items := make([]bool, g.Config.Items)
	mark := func(e Edge) {
		src, dst := users, items
		switch e.Rel {
		case Follows:
			dst = users
		case Similar:
			src = items
		}
		src[e.Src], dst[e.Dst] = true, true
	}
	known := func(e Edge) bool {
		src, dst := users, items
		switch e.Rel {
		case Follows:
			dst = users
		case Similar:
			src = items
		}
		return src[e.Src] && dst[e.Dst]
	}
	g.Train = slices.Clone(train)
	for _, e := range g.Train {
		mark(e)
	}
	// Edges moved back to training can make other held-out edges known:
	// repeat until nothing moves.
	held := [2][]Edge{slices.Clone(test), slices.Clone(valid)}
	for moved := true; moved; {
		moved = false
		for h := range held {
			kept := held[h][:0]
			for _, e := range held[h] {
				if known(e) {
					kept = append(kept, e)
					continue
				}
				g.Train = append(g.Train, e)
				mark(e)
				moved = true
			}
			held[h] = kept
		}
	}
	g.Test, g.Valid = held[0], held[1]
}

// Schema is schema.yaml's text for p user partitions.
func Schema(p int, similar bool) string {
	s := fmt.Sprintf(`# A user–item graph (internal/useritem): users partitioned, items resident.
entities:
  user: {partitions: %d}
  item: {partitions: 1}
relations:
  - {name: %s, lhs: user, rhs: item}
  - {name: %s, lhs: user, rhs: user}
`, p, Bought, Follows)
	if similar {
		s += fmt.Sprintf("  - {name: %s, lhs: item, rhs: item}\n", Similar)
	}
	return s
}

// Write writes train.tsv, valid.tsv, test.tsv and schema.yaml into dir
// (created if missing).
func (g *Graph) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name  string
		edges []Edge
	}{{"train.tsv", g.Train}, {"valid.tsv", g.Valid}, {"test.tsv", g.Test}} {
		err := atomicfile.Write(filepath.Join(dir, f.name), func(w io.Writer) error {
			bw := bufio.NewWriter(w)
			for _, e := range f.edges {
				if _, err := fmt.Fprintln(bw, e.Line()); err != nil {
					return err
				}
			}
			return bw.Flush()
		})
		if err != nil {
			return err
		}
	}
	schema := Schema(g.Config.P, g.Config.SimilarPerItem > 0)
	return atomicfile.Write(filepath.Join(dir, "schema.yaml"), func(w io.Writer) error {
		_, err := io.WriteString(w, schema)
		return err
	})
}

// Counts are the edges of each relation in es.
func Counts(es []Edge) map[string]int {
	m := map[string]int{}
	for _, e := range es {
		m[e.Rel]++
	}
	return m
}

// Summary is one line about g.
func (g *Graph) Summary() string {
	c := g.Config
	n := Counts(g.Train)
	return fmt.Sprintf("%d users (%d partitions), %d items (resident), %d communities; train %d edges (bought %d, follows %d, similar %d), valid %d, test %d",
		c.Users, c.P, c.Items, c.Communities, len(g.Train), n[Bought], n[Follows], n[Similar], len(g.Valid), len(g.Test))
}
