package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// Preset is the shape of a node-classification benchmark graph (Betty's
// Table 4) and how Generate imitates it.
type Preset struct {
	Name string
	// Nodes and Edges are the sizes at scale 1 as Betty's Table 4 gives
	// them. Generate reads Edges as neighbour-list entries (each
	// undirected edge counted in both directions, DGL's num_edges of the
	// symmetric graph): it draws Edges/2 undirected edges, so that
	// Graph.Edges() ≈ Edges·scale and the mean degree is Edges/Nodes.
	Nodes, Edges int64
	// Features is the feature width, Classes the number of classes (both
	// kept at every scale).
	Features, Classes int
	// DefaultScale is the scale gnngraph and make gnn-graphs use: the
	// graph generates in seconds and a 2-layer GraphSAGE epoch trains in
	// well under a minute on 2 cores.
	DefaultScale float64
	// Sparse features are binary bags of words, like Cora's; otherwise
	// they are dense Gaussian vectors.
	Sparse bool
	// Planetoid splits take 20 training nodes per class, 500 validation
	// and 1,000 test nodes; otherwise TrainFrac and ValidFrac of the
	// nodes are drawn for training and validation and the rest is test,
	// the proportions of the dataset's public split.
	Planetoid            bool
	TrainFrac, ValidFrac float64
	// Homophily is the fraction of each node's drawn edges that stay in
	// its class (the rest go anywhere, its class included).
	Homophily float64
	// Signal is the strength of the class signal in the features: for
	// dense ones, the class mean's scale against unit noise; for sparse
	// ones, the fraction of a node's words drawn from its class's topic.
	Signal float64
	// Words is the mean number of words per node (sparse features).
	Words float64
	// Noise is the fraction of nodes whose label is redrawn uniformly at
	// random, independently of the class their features and edges
	// follow: it caps the accuracy any model reaches near 1-Noise.
	Noise float64
}

// Presets are the datasets of Betty's Table 4 (Cora, PubMed, Reddit,
// ogbn-arxiv, ogbn-products) as Generate imitates them. Class counts are
// the real datasets'; split proportions are their public splits' (Reddit:
// 153,431 / 23,831 / 55,703; arxiv: 90,941 / 29,799 / 48,603; products:
// 196,615 / 39,323 / 2,213,091), drawn at random here.
var Presets = []Preset{
	{Name: "cora", Nodes: 2_708, Edges: 10_556, Features: 1_433, Classes: 7, DefaultScale: 1,
		Sparse: true, Planetoid: true, Homophily: 0.8, Signal: 0.45, Words: 18, Noise: 0.1},
	{Name: "pubmed", Nodes: 19_717, Edges: 44_338, Features: 500, Classes: 3, DefaultScale: 1,
		Sparse: true, Planetoid: true, Homophily: 0.8, Signal: 0.25, Words: 50, Noise: 0.1},
	{Name: "reddit", Nodes: 232_965, Edges: 114_615_892, Features: 602, Classes: 41, DefaultScale: 0.03,
		TrainFrac: 153_431.0 / 232_965, ValidFrac: 23_831.0 / 232_965, Homophily: 0.2, Signal: 0.12, Noise: 0.05},
	{Name: "ogbn-arxiv", Nodes: 169_343, Edges: 2_315_598, Features: 128, Classes: 40, DefaultScale: 0.1,
		TrainFrac: 90_941.0 / 169_343, ValidFrac: 29_799.0 / 169_343, Homophily: 0.5, Signal: 0.23, Noise: 0.15},
	{Name: "ogbn-products", Nodes: 2_449_029, Edges: 61_859_140, Features: 100, Classes: 47, DefaultScale: 0.02,
		TrainFrac: 196_615.0 / 2_449_029, ValidFrac: 39_323.0 / 2_449_029, Homophily: 0.5, Signal: 0.3, Noise: 0.15},
}

// LookupPreset returns the preset of a name (case-insensitive; "arxiv"
// and "products" name the ogbn- graphs too).
func LookupPreset(name string) (Preset, error) {
	var names []string
	for _, p := range Presets {
		if strings.EqualFold(p.Name, name) || strings.EqualFold(strings.TrimPrefix(p.Name, "ogbn-"), name) {
			return p, nil
		}
		names = append(names, p.Name)
	}
	return Preset{}, fmt.Errorf("unknown dataset %s (known: %s)", quote(name), strings.Join(names, ", "))
}

// Seed streams, one per purpose.
const (
	streamClasses = iota + 0x676e6e00 // "gnn\0"
	streamWeights
	streamEdges
	streamFeatures
	streamSplits
	streamNoise
)

func newRand(seed uint64, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// Generate returns a seeded synthetic graph with the shape of a preset
// (Presets) shrunk by scale (0 < scale ≤ 1; 0 takes the preset's
// DefaultScale): round(Nodes·scale) nodes, round(Edges·scale/2)
// undirected edges (mean degree kept; fewer only when the graph is too
// dense to draw that many distinct pairs), the preset's features and
// classes.
//
// The planted structure: every node has a class (class sizes skewed, ∝
// 1/√rank); degrees are skewed (Chung–Lu weights from a Pareto law with
// tail exponent 2.5, capped so that no node expects more than about a
// third of the nodes as neighbours); each edge starts at a node drawn by
// weight and, with probability Homophily, ends at a node of the same
// class, else anywhere (both by weight). Features carry a weak class
// signal in noise: dense ones are Signal·μ_class + N(0, I); sparse ones
// are binary bags of about Words words, each from the class's topic (a
// random set of Features/Classes words) with probability Signal, else
// from a Zipf background over every word. A node's label is its class,
// so both its features and its neighbourhood carry it, and averaging
// features over neighbours sharpens it (a GNN beats an MLP). Every node
// is labelled. Names are "0", "1", …; classes "class00", "class01", ….
func Generate(name string, scale float64, seed uint64) (*Graph, error) {
	p, err := LookupPreset(name)
	if err != nil {
		return nil, fmt.Errorf("data: %w", err)
	}
	return generate(p, scale, seed)
}

// generate is Generate of a preset.
func generate(p Preset, scale float64, seed uint64) (*Graph, error) {
	if scale == 0 {
		scale = p.DefaultScale
	}
	if math.IsNaN(scale) || scale <= 0 || scale > 1 {
		return nil, fmt.Errorf("data: %s: scale %v: want 0 < scale ≤ 1", p.Name, scale)
	}
	n := int(math.Round(float64(p.Nodes) * scale))
	pairs := int64(math.Round(float64(p.Edges) * scale / 2))
	if minN := max(100, 10*p.Classes); n < minN {
		return nil, fmt.Errorf("data: %s: scale %v leaves %d nodes (at least %d needed)", p.Name, scale, n, minN)
	}
	if pairs > int64(n)*int64(n-1)/4 {
		return nil, fmt.Errorf("data: %s: scale %v: %d edges among %d nodes is over half of all pairs", p.Name, scale, pairs, n)
	}
	g := &Graph{F: p.Features}
	g.Names = make([]string, n)
	for v := range g.Names {
		g.Names[v] = strconv.Itoa(v)
	}
	g.Classes = make([]string, p.Classes)
	for c := range g.Classes {
		g.Classes[c] = fmt.Sprintf("class%02d", c)
	}
	g.Y = assignClasses(newRand(seed, streamClasses), n, p.Classes)
	w := degreeWeights(newRand(seed, streamWeights), n, float64(2*pairs)/float64(n))
	src, dst, err := drawEdges(newRand(seed, streamEdges), g.Y, p.Classes, w, pairs, p.Homophily)
	if err != nil {
		return nil, fmt.Errorf("data: %s: %w", p.Name, err)
	}
	g.Ptr, g.Nbr = buildCSR(n, src, dst, false)
	frng := newRand(seed, streamFeatures)
	if p.Sparse {
		g.X = sparseFeatures(frng, g.Y, p)
	} else {
		g.X = denseFeatures(frng, g.Y, p)
	}
	relabel(newRand(seed, streamNoise), g.Y, p.Classes, p.Noise)
	srng := newRand(seed, streamSplits)
	if p.Planetoid {
		g.Train, g.Valid, g.Test = planetoidSplit(srng, g.Y, p.Classes)
	} else {
		g.Train, g.Valid, g.Test = fractionSplit(srng, n, p.TrainFrac, p.ValidFrac)
	}
	return g, nil
}

// assignClasses gives every node a class: class c holds about
// n·(1/√(c+1))/Σ of the nodes (at least min(25, n/(2k))), in random order.
func assignClasses(rng *rand.Rand, n, k int) []int32 {
	floor := min(25, n/(2*k))
	wsum := 0.0
	for c := 0; c < k; c++ {
		wsum += 1 / math.Sqrt(float64(c+1))
	}
	rest := n - floor*k
	size := make([]int, k)
	total := 0
	for c := range size {
		size[c] = floor + int(float64(rest)/math.Sqrt(float64(c+1))/wsum)
		total += size[c]
	}
	for c := 0; total < n; c = (c + 1) % k {
		size[c]++
		total++
	}
	y := make([]int32, 0, n)
	for c, s := range size {
		for range s {
			y = append(y, int32(c))
		}
	}
	rng.Shuffle(n, func(i, j int) { y[i], y[j] = y[j], y[i] })
	return y
}

// relabel gives a fraction noise of the nodes a uniformly random label.
func relabel(rng *rand.Rand, y []int32, k int, noise float64) {
	for v := range y {
		if rng.Float64() < noise {
			y[v] = int32(rng.IntN(k))
		}
	}
}

// degreeWeights draws Chung–Lu weights from a Pareto law (tail exponent
// 2.5), capped so that a node's expected degree stays below n/3.
func degreeWeights(rng *rand.Rand, n int, meanDeg float64) []float64 {
	capW := max(2, float64(n)/meanDeg) // mean weight is about 3
	w := make([]float64, n)
	for v := range w {
		w[v] = min(capW, math.Pow(1-rng.Float64(), -1/1.5))
	}
	return w
}

// alias is Walker's alias table: draw returns i with probability ∝ w[i].
type alias struct {
	prob  []float64
	alias []int32
	items []int32 // the values drawn (node ids)
}

func newAlias(items []int32, w []float64) *alias {
	n := len(items)
	a := &alias{prob: make([]float64, n), alias: make([]int32, n), items: items}
	sum := 0.0
	for _, v := range items {
		sum += w[v]
	}
	var small, large []int32
	for i, v := range items {
		a.prob[i] = w[v] * float64(n) / sum
		if a.prob[i] < 1 {
			small = append(small, int32(i))
		} else {
			large = append(large, int32(i))
		}
	}
	for len(small) > 0 && len(large) > 0 {
		s, l := small[len(small)-1], large[len(large)-1]
		small = small[:len(small)-1]
		a.alias[s] = l
		a.prob[l] -= 1 - a.prob[s]
		if a.prob[l] < 1 {
			large = large[:len(large)-1]
			small = append(small, l)
		}
	}
	for _, i := range append(small, large...) {
		a.prob[i], a.alias[i] = 1, i
	}
	return a
}

func (a *alias) draw(rng *rand.Rand) int32 {
	i := rng.IntN(len(a.prob))
	if rng.Float64() >= a.prob[i] {
		i = int(a.alias[i])
	}
	return a.items[i]
}

// drawEdges draws distinct undirected pairs until there are want of them
// (or no progress is made): the start by weight, the end in the start's
// class with probability h, else anywhere, by weight.
func drawEdges(rng *rand.Rand, y []int32, k int, w []float64, want int64, h float64) (src, dst []int32, err error) {
	n := len(y)
	all := make([]int32, n)
	members := make([][]int32, k)
	for v := range all {
		all[v] = int32(v)
		members[y[v]] = append(members[y[v]], int32(v))
	}
	global := newAlias(all, w)
	in := make([]*alias, k)
	for c := range in {
		in[c] = newAlias(members[c], w)
	}
	keys := make([]uint64, 0, want)
	for round := 0; int64(len(keys)) < want && round < 50; round++ {
		missing := want - int64(len(keys))
		before := len(keys)
		for i := int64(0); i < missing; i++ {
			u := global.draw(rng)
			var v int32
			if rng.Float64() < h {
				v = in[y[u]].draw(rng)
			} else {
				v = global.draw(rng)
			}
			if u == v {
				i--
				continue
			}
			if u > v {
				u, v = v, u
			}
			keys = append(keys, uint64(u)<<32|uint64(v))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		if len(keys) == before {
			break
		}
	}
	if len(keys) == 0 {
		return nil, nil, errors.New("no edges drawn")
	}
	src, dst = make([]int32, len(keys)), make([]int32, len(keys))
	for i, key := range keys {
		src[i], dst[i] = int32(key>>32), int32(key&0xffffffff)
	}
	return src, dst, nil
}

// denseFeatures are Signal·μ_class + N(0, I), μ_class ~ N(0, I).
func denseFeatures(rng *rand.Rand, y []int32, p Preset) []float32 {
	f := p.Features
	mu := make([]float32, p.Classes*f)
	for i := range mu {
		mu[i] = float32(rng.NormFloat64() * p.Signal)
	}
	x := make([]float32, len(y)*f)
	for v, c := range y {
		row, m := x[v*f:(v+1)*f], mu[int(c)*f:int(c+1)*f]
		for j := range row {
			row[j] = m[j] + float32(rng.NormFloat64())
		}
	}
	return x
}

// sparseFeatures are binary bags of words: 1 + Poisson(Words-1) draws
// per node, each from the node's class topic with probability Signal,
// else from a Zipf background over all words.
func sparseFeatures(rng *rand.Rand, y []int32, p Preset) []float32 {
	f := p.Features
	words := make([]int32, f)
	for j := range words {
		words[j] = int32(j)
	}
	perm := rng.Perm(f) // which word has which background rank
	bw := make([]float64, f)
	for j := range bw {
		bw[j] = 1 / float64(perm[j]+10)
	}
	background := newAlias(words, bw)
	topicSize := max(5, f/p.Classes)
	topics := make([][]int32, p.Classes)
	for c := range topics {
		for _, j := range rng.Perm(f)[:topicSize] {
			topics[c] = append(topics[c], int32(j))
		}
	}
	x := make([]float32, len(y)*f)
	for v, c := range y {
		row := x[v*f : (v+1)*f]
		k := 1 + poisson(rng, p.Words-1)
		for range k {
			var j int32
			if rng.Float64() < p.Signal {
				t := topics[c]
				j = t[rng.IntN(len(t))]
			} else {
				j = background.draw(rng)
			}
			row[j] = 1
		}
	}
	return x
}

// poisson draws from a Poisson law of mean lambda (Knuth's method in
// chunks of 30, exact enough for the means used here).
func poisson(rng *rand.Rand, lambda float64) int {
	k := 0
	for lambda > 0 {
		l := min(lambda, 30)
		lambda -= l
		limit, prod := math.Exp(-l), rng.Float64()
		for prod > limit {
			k++
			prod *= rng.Float64()
		}
	}
	return k
}

// planetoidSplit takes 20 nodes of each class for training (fewer when
// the class is smaller than 25), then 500 validation and 1,000 test nodes
// at random from the rest (shrunk in proportion when fewer remain, a
// third and two thirds of them).
func planetoidSplit(rng *rand.Rand, y []int32, k int) (train, valid, test []int32) {
	n := len(y)
	perm := rng.Perm(n)
	size := make([]int, k)
	for _, c := range y {
		size[c]++
	}
	taken := make([]int, k)
	used := make([]bool, n)
	for _, v := range perm {
		c := y[v]
		if taken[c] < min(20, size[c]-5) {
			taken[c]++
			used[v] = true
			train = append(train, int32(v))
		}
	}
	var rest []int32
	for _, v := range perm {
		if !used[v] {
			rest = append(rest, int32(v))
		}
	}
	nv, nt := 500, 1000
	if len(rest) < nv+nt {
		nv = len(rest) / 3
		nt = len(rest) - nv
	}
	return train, rest[:nv:nv], rest[nv : nv+nt : nv+nt]
}

// fractionSplit draws round(n·tf) training and round(n·vf) validation
// nodes at random; the rest is test.
func fractionSplit(rng *rand.Rand, n int, tf, vf float64) (train, valid, test []int32) {
	perm := make([]int32, n)
	for i, v := range rng.Perm(n) {
		perm[i] = int32(v)
	}
	nt := max(1, int(math.Round(float64(n)*tf)))
	nv := min(n-nt, int(math.Round(float64(n)*vf)))
	return perm[:nt:nt], perm[nt : nt+nv : nt+nv], perm[nt+nv:]
}
