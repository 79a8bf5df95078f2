package data

import "sync"

// Gather copies the feature rows of ids, in order, into buf (its array
// reused when large enough, a new one otherwise), split over up to
// workers goroutines when there are many values: the input of a batch's
// training step, as the trainer, its calibration and the memory
// measurement gather it.
func (g *Graph) Gather(buf []float32, ids []int32, workers int) []float32 {
	f := g.F
	if cap(buf) < len(ids)*f {
		buf = make([]float32, len(ids)*f)
	}
	buf = buf[:len(ids)*f]
	copyRows := func(lo, hi int) {
		for i := lo; i < hi; i++ {
			v := int(ids[i])
			copy(buf[i*f:(i+1)*f], g.X[v*f:(v+1)*f])
		}
	}
	parts := min(workers, len(ids)*f/(1<<15))
	if parts <= 1 {
		copyRows(0, len(ids))
		return buf
	}
	var wg sync.WaitGroup
	for w := 0; w < parts; w++ {
		lo, hi := len(ids)*w/parts, len(ids)*(w+1)/parts
		wg.Add(1)
		go func() {
			defer wg.Done()
			copyRows(lo, hi)
		}()
	}
	wg.Wait()
	return buf
}

// Labels writes the labels of nodes, in order, into buf (its array reused
// when large enough, a new one otherwise): the output nodes' labels of a
// training step.
func (g *Graph) Labels(buf []int32, nodes []int32) []int32 {
	if cap(buf) < len(nodes) {
		buf = make([]int32, len(nodes))
	}
	buf = buf[:len(nodes)]
	for i, v := range nodes {
		buf[i] = g.Y[v]
	}
	return buf
}
