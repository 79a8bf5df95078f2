package memory

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/gnn/block"
	"github.com/tierflow/tierflow/realrun/gnn/data"
	"github.com/tierflow/tierflow/realrun/gnn/nn"
	"github.com/tierflow/tierflow/realrun/gnn/split"
)

// reportGraphs are the five generated graphs at their default scales.
var reportGraphs = []string{"cora", "pubmed", "reddit", "ogbn-arxiv", "ogbn-products"}

// TestReport prints estimate against measurement at the shapes:
// MEMORY_REPORT=shape (every model, hidden 256, 2 layers, fanouts 10,25,
// batch 1024) or MEMORY_REPORT=table7 (Betty's Table 7: sage-lstm, one
// layer, fanout 10, K 4 and 8, the largest micro-batch of a REG split of
// all training nodes); MEMORY_LIMIT caps the estimated bytes it measures
// (default 3e9).
func TestReport(t *testing.T) {
	what := os.Getenv("MEMORY_REPORT")
	if what == "" {
		t.Skip("MEMORY_REPORT=shape or table7 prints the report")
	}
	limit := int64(3e9)
	if v := os.Getenv("MEMORY_LIMIT"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		require.NoError(t, err)
		limit = int64(f)
	}
	models := nn.Models
	if m := os.Getenv("MEMORY_MODELS"); m != "" {
		models = strings.Split(m, ",")
	}
	batch := 1024
	if v := os.Getenv("MEMORY_BATCH"); v != "" {
		var err error
		batch, err = strconv.Atoi(v)
		require.NoError(t, err)
	}
	graphs := reportGraphs
	if m := os.Getenv("MEMORY_GRAPHS"); m != "" {
		graphs = strings.Split(m, ",")
	}
	if v := os.Getenv("MEMORY_WORKERS"); v != "" {
		w, err := strconv.Atoi(v)
		require.NoError(t, err)
		old := nn.Workers
		nn.Workers = w
		defer func() { nn.Workers = old }()
	}
	fmt.Printf("workers %d\n", nn.Workers)
	for _, name := range graphs {
		g, err := data.Generate(name, 0, 1)
		require.NoError(t, err)
		switch what {
		case "shape":
			for _, model := range models {
				spec := nn.Spec{Model: model, In: g.F, Hidden: 256, Classes: len(g.Classes), Layers: 2, Heads: 4, Dropout: 0.5}
				seeds := append([]int32(nil), g.Train...)
				rand.New(rand.NewPCG(7, 7)).Shuffle(len(seeds), func(i, j int) { seeds[i], seeds[j] = seeds[j], seeds[i] })
				b := block.NewSampler(g, spec.Fanouts([]int{10, 25})).Sample(seeds[:min(batch, len(seeds))], rand.New(rand.NewPCG(1, 1)))
				report(t, name, model, strconv.Itoa(batch), spec, g, b, limit)
			}
		case "fit":
			for _, model := range models {
				spec := nn.Spec{Model: model, In: g.F, Hidden: 256, Classes: len(g.Classes), Layers: 2, Heads: 4, Dropout: 0.5}
				b := block.NewSampler(g, spec.Fanouts([]int{10, 25})).Sample(g.Train[:min(batch, len(g.Train))], rand.New(rand.NewPCG(1, 1)))
				whole := Batch(spec, b)
				for _, frac := range []float64{0.5, 0.25} {
					budget := int64(frac * float64(whole.Need()))
					start := time.Now()
					p, err := Fit(spec, b, budget, split.REG, 1)
					took := time.Since(start)
					if err != nil {
						fmt.Printf("| %s | %s | %d | %v |\n", name, model, budget, err)
						continue
					}
					var peak *block.Batch
					bd := split.NewBuilder()
					for _, part := range p.Parts {
						mb := bd.Micro(b, part, nil)
						if peak == nil || Batch(spec, mb).Need() > Batch(spec, peak).Need() {
							peak = mb
						}
					}
					meas, err := Measure(spec, g, peak, 1)
					require.NoError(t, err)
					fmt.Printf("| %s | %s | whole %d | budget %d | K %d | peak est %d (+pool %d) | peak measured %d | fit %.3g s |\n",
						name, model, whole.Need(), budget, p.K, p.Peak.Total(), p.Peak.Pool, meas, took.Seconds())
				}
			}
		case "table7":
			spec := nn.Spec{Model: "sage-lstm", In: g.F, Hidden: 256, Classes: len(g.Classes), Layers: 1, Dropout: 0.5}
			b := block.NewSampler(g, []int{10}).Sample(g.Train, rand.New(rand.NewPCG(1, 1)))
			for _, k := range []int{1, 4, 8} {
				parts, err := split.Split(b, k, split.REG, 1)
				require.NoError(t, err)
				bd := split.NewBuilder()
				var worst *block.Batch
				for _, p := range parts {
					mb := bd.Micro(b, p, nil)
					if worst == nil || Batch(spec, mb).Need() > Batch(spec, worst).Need() {
						worst = mb
					}
				}
				report(t, name, "sage-lstm", fmt.Sprintf("K=%d of %d", k, len(g.Train)), spec, g, worst, limit)
			}
		}
	}
}

func report(t *testing.T, graph, model, batch string, spec nn.Spec, g *data.Graph, b *block.Batch, limit int64) {
	start := time.Now()
	est := Batch(spec, b)
	tb := time.Since(start)
	betty := BettyPublished(spec, b)
	last := &b.Blocks[len(b.Blocks)-1]
	edges := 0
	for i := range b.Blocks {
		edges += len(b.Blocks[i].Nbr)
	}
	line := fmt.Sprintf("| %s | %s | %s | %d | %d | %d |", graph, model, batch, len(b.Input()), last.NumDst, edges)
	if est.Total() > limit {
		fmt.Printf("%s %d | not measured (over %d) | | %d | | %.2g ms | |\n", line, est.Total(), limit, betty, float64(tb.Microseconds())/1e3)
		return
	}
	start = time.Now()
	meas, err := Measure(spec, g, b, 1)
	tm := time.Since(start)
	require.NoError(t, err)
	pct := func(v int64) float64 { return 100 * float64(v-meas) / float64(meas) }
	fmt.Printf("%s %d | %d | %+.3f%% | %d | %+.1f%% | %.3g ms | %.3g s | pool %d\n", line, est.Total(), meas, pct(est.Total()), betty, pct(betty),
		float64(tb.Microseconds())/1e3, tm.Seconds(), est.Pool)
	fmt.Printf("    %s\n", est)
}

// TestSweep compares Batch with Measure over every model, 1–5 layers,
// hidden 16–512 and K = 1, 2, 4, 8 (REG micro-batches) on small
// generated graphs (MEMORY_SWEEP=1), and prints the largest error.
func TestSweep(t *testing.T) {
	if os.Getenv("MEMORY_SWEEP") == "" {
		t.Skip("MEMORY_SWEEP=1 runs the sweep")
	}
	type gr struct {
		name  string
		scale float64
	}
	worst, at, n := 0.0, "", 0
	bd := split.NewBuilder()
	for _, gg := range []gr{{"ogbn-arxiv", 0.01}, {"pubmed", 0.1}, {"ogbn-products", 0.002}} {
		g, err := data.Generate(gg.name, gg.scale, 1)
		require.NoError(t, err)
		for _, model := range nn.Models {
			for layers := 1; layers <= 5; layers++ {
				for _, hidden := range []int{16, 128, 512} {
					spec := nn.Spec{Model: model, In: g.F, Hidden: hidden, Classes: len(g.Classes), Layers: layers, Heads: 4, Dropout: 0.5}
					fans := make([]int, layers)
					for i := range fans {
						fans[i] = 4
					}
					b := block.NewSampler(g, spec.Fanouts(fans)).Sample(g.Train[:min(96, len(g.Train))], rand.New(rand.NewPCG(uint64(layers), 3)))
					for _, k := range []int{1, 2, 4, 8} {
						parts, err := split.Split(b, k, split.REG, 1)
						require.NoError(t, err)
						mb := bd.Micro(b, parts[0], nil)
						est := Batch(spec, mb)
						meas, err := Measure(spec, g, mb, 1)
						require.NoError(t, err)
						e := relErr(est.Total(), meas)
						n++
						name := fmt.Sprintf("%s %s L%d H%d K%d: est %d meas %d", gg.name, model, layers, hidden, k, est.Total(), meas)
						if e > worst {
							worst, at = e, name
						}
						if e > 0.02 {
							t.Errorf("%s: %.2f%%", name, 100*e)
						}
					}
				}
			}
		}
	}
	fmt.Printf("sweep: %d cases, largest error %.3f%% (%s)\n", n, 100*worst, at)
}
