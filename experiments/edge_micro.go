package experiments

import (
	"fmt"
	"strconv"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/cpu"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/micro"
	"github.com/tierflow/tierflow/workload"
)

func init() {
	register(Experiment{Name: "edge-micro-fig16", Description: "Edge-batch micro-batching (knowledge-graph embeddings) after Betty Figures 11 and 16: duplicated rows, bytes to the GPU and peak memory against the number of micro-batches for REG, range and random splits of a Freebase86m-shaped batch (d = 100…800)", Run: EdgeMicroFig16})
	register(Experiment{Name: "edge-micro-table7", Description: "Edge-batch micro-batching after Betty Table 7: the edge-batch memory estimator against the bytes the CPU engine allocates per micro-batch, and the engine's time per batch as micro-batches grow (measured, about a minute)", Run: EdgeMicroTable7, Slow: true})
}

// EdgeMicroDims are the embedding dimensions of the edge-batch
// micro-batching experiments (Betty's method applied to knowledge-graph
// embedding batches; the GNN reproduction is betty_gnn.go).
var EdgeMicroDims = []int{100, 400, 800}

// EdgeMicroKs are the micro-batch counts of Figures 11 and 16.
var EdgeMicroKs = []int{1, 2, 4, 8, 16}

// EdgeMicroBatch is the Freebase86m-shaped batch: Marius's 50,000 edges in
// chunks of 1,000 sharing 1,000 negatives (half drawn by degree), from a
// generated graph with the nodes of two partitions of Freebase86m at
// p = 32 (1/16 of its 86.1M nodes) and its power-law degrees.
func EdgeMicroBatch(edges, chunk, negatives int) (micro.Batch, graph.Preset, error) {
	p, err := graph.LookupPreset("freebase86m")
	if err != nil {
		return micro.Batch{}, p, err
	}
	if p, err = p.Scaled(1.0 / 16); err != nil {
		return micro.Batch{}, p, err
	}
	b, err := micro.SampleBatch(p, 1, edges, chunk, negatives, 0.5)
	return b, p, err
}

func gb(b int64) string { return fmt.Sprintf("%.3f", float64(b)/1e9) }

// EdgeMicroFig16 splits one Freebase86m-shaped batch into 1…16 micro-batches
// three ways and reports, per split, the rows gathered, the duplicated
// rows, the bytes sent to the GPU and the peak and mean micro-batch
// memory (estimator, every chunk of a micro-batch on the GPU at once).
func EdgeMicroFig16() (Result, error) {
	b, _, err := EdgeMicroBatch(50_000, 1_000, 1_000)
	if err != nil {
		return Result{}, err
	}
	ix := micro.NewIndex(b, true)
	r := Result{Name: "edge-micro-fig16", Title: "Edge-batch micro-batching after Betty Fig. 11/16: a Freebase86m-shaped batch (ComplEx, 50,000 edges, chunks of 1,000 sharing 1,000 negatives)",
		Header: []string{"micro-batches", "split", "gathered rows", "duplicated rows", "gathered ÷ rows", "H2D GB d=400", "peak GB d=100", "peak GB d=400", "peak GB d=800", "peak ÷ mean d=400"}}
	dup := map[micro.Method]*Series{}
	peak := map[micro.Method]*Series{}
	for _, m := range micro.Methods {
		dup[m] = &Series{Name: string(m)}
		peak[m] = &Series{Name: string(m)}
	}
	for _, k := range EdgeMicroKs {
		for _, m := range micro.Methods {
			parts, err := micro.Split(b, ix, k, m, 1)
			if err != nil {
				return r, err
			}
			row := []string{strconv.Itoa(k), string(m)}
			var st400 micro.Stats
			peaks := make([]string, len(EdgeMicroDims))
			for i, d := range EdgeMicroDims {
				st := ix.Measure(b, parts, workload.ComplEx, d, 0)
				peaks[i] = gb(st.PeakBytes)
				if d == 400 {
					st400 = st
				}
			}
			row = append(row, strconv.FormatInt(st400.GatheredRows, 10), strconv.FormatInt(st400.DuplicatedRows, 10),
				fmt.Sprintf("%.3f", float64(st400.GatheredRows)/float64(st400.Rows)), gb(st400.H2DBytes))
			row = append(row, peaks...)
			row = append(row, fmt.Sprintf("%.3f", float64(st400.PeakBytes)/float64(st400.MeanBytes)))
			r.Rows = append(r.Rows, row)
			if k > 1 { // log scale: one micro-batch duplicates nothing
				dup[m].X, dup[m].Y = append(dup[m].X, float64(k)), append(dup[m].Y, float64(st400.DuplicatedRows))
			}
			peak[m].X, peak[m].Y = append(peak[m].X, float64(k)), append(peak[m].Y, float64(st400.PeakBytes)/1e9)
		}
	}
	c16 := Chart{File: "edge-micro-fig16", Title: "Duplicated rows against micro-batches (Freebase86m-shaped batch)", XLabel: "micro-batches", YLabel: "duplicated rows", LogY: true}
	c11 := Chart{File: "edge-micro-fig11", Title: "Peak micro-batch memory, d = 400", XLabel: "micro-batches", YLabel: "peak GB"}
	for _, m := range micro.Methods {
		c16.Series = append(c16.Series, *dup[m])
		c11.Series = append(c11.Series, *peak[m])
	}
	r.Charts = []Chart{c16, c11}
	r.Notes = []string{
		"The paper (GraphSAGE on ogbn-products, Fig. 16): at 64 batches REG cuts redundant input nodes to 5.8M against 118M for range, random and Metis; up to 49.2% and on average 28.4% less redundancy. Fig. 11: up to 48.3% (37.7% on average) less peak memory than the other partitions.",
		"What transfers: a row needed by several micro-batches is gathered and moved once per micro-batch, and a split that keeps what shares rows together moves less and peaks lower; random splitting is the worst by far here (every chunk's 1,000 shared negatives land in every micro-batch).",
		"What does not: in a GNN the shared rows are multi-hop neighbourhoods a partition can keep together; in a shuffled batch of a knowledge graph most shared rows are each chunk's negatives, which range splitting already keeps whole, and few node rows repeat (power-law hubs). So REG duplicates 3–22% fewer rows than range here (2 to 16 micro-batches), short of the paper's 49% at 64, and 84–96% fewer than random; its peak equals range's (peak ÷ mean is higher only because its mean is lower).",
		"Peak is the estimator (workload.EstimateBatch) on each micro-batch's exact shape with every chunk computed at once, as a GPU engine would; the CPU engine computes one chunk at a time (see edge-micro-table7).",
	}
	return r, nil
}

// EdgeMicroTable7 measures the CPU engine: a Freebase86m-shaped batch of 4,000
// edges (chunks of 500 sharing 500 negatives) split into 1…8 micro-batches
// by REG at d = 100, 400, 800 with Dot and ComplEx. Per row: the largest
// micro-batch's estimated and allocated bytes, the largest error of any
// micro-batch, and the batch's wall time.
func EdgeMicroTable7() (Result, error) {
	b, p, err := EdgeMicroBatch(4_000, 500, 500)
	if err != nil {
		return Result{}, err
	}
	r := Result{Name: "edge-micro-table7", Title: "Edge-batch micro-batching after Betty Table 7: estimated against allocated bytes per micro-batch (CPU engine, 4,000-edge batch, chunks of 500, 500 negatives)",
		Header: []string{"model", "d", "micro-batches", "estimated MB", "allocated MB", "worst error %", "batch s"}}
	tc := Chart{File: "edge-micro-table7-time", Title: "CPU engine: one batch's time against micro-batches (ComplEx)", XLabel: "micro-batches", YLabel: "seconds"}
	for _, kind := range []workload.Model{workload.Dot, workload.ComplEx} {
		for _, d := range EdgeMicroDims {
			s := Series{Name: fmt.Sprintf("d=%d", d)}
			for _, k := range []int{1, 2, 4, 8} {
				h := realrun.Hyper{Training: workload.Training{Model: kind, Dim: d, Batch: b.Edges(), Negatives: 500, ChunkSize: 500}, LR: 0.1, Workers: 1,
					Micro: realrun.MicroBatching{Count: k, Split: micro.REG, Seed: 1}}
				m, err := cpu.MeasureMicroBatches(h, b, p.Relations, 1)
				if err != nil {
					return r, err
				}
				var est, got int64
				var worst float64
				for i := range m.Allocated {
					est, got = max(est, m.Estimated[i]), max(got, m.Allocated[i])
					e := 100 * float64(m.Estimated[i]-m.Allocated[i]) / float64(m.Allocated[i])
					if e*e > worst*worst {
						worst = e
					}
				}
				r.Rows = append(r.Rows, []string{string(kind), strconv.Itoa(d), strconv.Itoa(k), fmt.Sprintf("%.2f", float64(est)/1e6), fmt.Sprintf("%.2f", float64(got)/1e6),
					fmt.Sprintf("%+.2f", worst), fmt.Sprintf("%.2f", m.Seconds)})
				if kind == workload.ComplEx {
					s.X, s.Y = append(s.X, float64(k)), append(s.Y, m.Seconds)
				}
			}
			if kind == workload.ComplEx {
				tc.Series = append(tc.Series, s)
			}
		}
	}
	r.Charts = []Chart{tc}
	r.Notes = []string{
		"The paper (Table 7, LSTM aggregator): estimation error 3.2–8.2% against PyTorch's CUDA allocator.",
		"Ours is the CPU engine's device buffers (gathered rows, gradient sums, indices, one chunk's working set) against Go's heap allocation counter: it checks that the formula counts every buffer the engine allocates at its size. It cannot see a GPU allocator's caching and fragmentation; the GPU check (driver free-memory readings) is not part of this experiment.",
		"Batch time includes the allocation-counter collections (one per micro-batch boundary); the micro-batched batch does the same arithmetic, so its time grows only by gathering duplicated rows and by those collections.",
	}
	return r, nil
}
