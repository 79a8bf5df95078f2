package split

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestREGRedundancy checks REG's point: on generated graphs its
// micro-batches gather no more input rows than range's or random's, and
// fewer on average.
func TestREGRedundancy(t *testing.T) {
	needMETIS(t)
	for _, c := range []struct {
		graph string
		scale float64
	}{{"ogbn-products", 0.004}, {"ogbn-arxiv", 0.05}} {
		t.Run(c.graph, func(t *testing.T) {
			g := genGraph(t, c.graph, c.scale)
			var sumREG, sumOther float64
			for seed := uint64(1); seed <= 2; seed++ {
				b := sample(g, 512, []int{10, 25}, seed)
				for _, k := range []int{2, 4, 8} {
					red := map[Method]int{}
					for _, m := range Methods {
						parts, err := Split(b, k, m, seed)
						require.NoError(t, err)
						red[m] = Measure(b, parts).Redundant
					}
					t.Logf("seed %d K=%d redundant rows: %v (batch inputs %d)", seed, k, red, len(b.Input()))
					assert.LessOrEqual(t, red[REG], red[Range], "K=%d: REG vs range", k)
					assert.LessOrEqual(t, red[REG], red[Random], "K=%d: REG vs random", k)
					sumREG += float64(red[REG])
					sumOther += float64(red[Range]+red[Random]) / 2
				}
			}
			assert.Less(t, sumREG, sumOther, "REG lowers the redundancy on average")
		})
	}
}

// TestRedundancyReport prints the redundancy and split times of every
// method on generated graphs at their default scales; it runs only with
// TIERFLOW_SPLIT_REPORT set (batch sizes in it, e.g. "1024,8192"; a
// batch larger than the training nodes draws from all nodes), at the
// scale TIERFLOW_SPLIT_SCALE (default: each preset's own).
func TestRedundancyReport(t *testing.T) {
	env := os.Getenv("TIERFLOW_SPLIT_REPORT")
	if env == "" {
		t.Skip("set TIERFLOW_SPLIT_REPORT=1024,8192 to print the report")
	}
	needMETIS(t)
	var sizes []int
	for _, f := range strings.Split(env, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		require.NoError(t, err)
		sizes = append(sizes, n)
	}
	scale := 0.0 // the presets' default scales
	if v := os.Getenv("TIERFLOW_SPLIT_SCALE"); v != "" {
		var err error
		scale, err = strconv.ParseFloat(v, 64)
		require.NoError(t, err)
	}
	for _, name := range []string{"ogbn-products", "reddit"} {
		start := time.Now()
		g := genGraph(t, name, scale)
		fmt.Printf("%s: %d nodes, %d neighbour entries, %d training nodes (generated in %v)\n", name, g.N(), g.Edges(), len(g.Train), time.Since(start).Round(time.Millisecond))
		for _, fanouts := range [][]int{{10, 25}, {10, 25, 30}} {
			for _, n := range sizes {
				b := sample(g, n, fanouts, 1)
				last := &b.Blocks[len(b.Blocks)-1]
				fmt.Printf("  fanouts %v batch %d: inputs %d, last block %d sources %d edges\n", fanouts, len(b.Output()), len(b.Input()), last.NumSrc(), len(last.Nbr))
				st := time.Now()
				rg := regGraph(last)
				fmt.Printf("    REG graph: %d edges, built in %v", rg.edges(), time.Since(st).Round(time.Microsecond))
				old := REGMaxReaders
				REGMaxReaders = 0
				st = time.Now()
				rg = regGraph(last)
				fmt.Printf("; without the hub limit %d edges, built in %v\n", rg.edges(), time.Since(st).Round(time.Microsecond))
				REGMaxReaders = old
				for _, k := range []int{2, 4, 8, 16} {
					line := fmt.Sprintf("    K=%-2d", k)
					for _, label := range append(slices.Clone(Methods), "reg-exact") {
						m := label
						if label == "reg-exact" { // Betty's weights, no hub limit
							REGMaxReaders = 0
							m = REG
						}
						st := time.Now()
						parts, err := Split(b, k, m, 1)
						d := time.Since(st)
						REGMaxReaders = old
						require.NoError(t, err)
						s := Measure(b, parts)
						mx := 0
						for _, p := range parts {
							mx = max(mx, len(p))
						}
						line += fmt.Sprintf("  %s %7d (%5.1f%%, %6.1fms, max part %d)", label, s.Redundant, 100*float64(s.Redundant)/float64(s.Inputs), float64(d.Microseconds())/1000, mx)
					}
					fmt.Println(line)
				}
			}
		}
	}
}
