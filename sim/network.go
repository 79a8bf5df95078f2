package sim

import "math"

// Net is a set of nodes (machines, a shared filesystem) joined by a
// non-blocking switch: each node sends up to its Out rate and receives up
// to its In rate at once, and the transfers under way share those ports
// max-min fairly (the fluid model of TCP flows: progressive filling).
// A transfer pays Latency, then moves its bytes. A transfer from a node to
// itself never touches the network and takes no time.
type Net struct {
	k       *Kernel
	Latency float64
	out, in []float64
	flows   []*netFlow
	last    float64
	version uint64
	// Sent and Received are the bytes each node has moved so far.
	Sent, Received []float64
}

type netFlow struct {
	src, dst   int
	left, rate float64
	done       func()
}

// NewNet returns a network of nodes with the given send and receive rates
// (bytes/s), latency seconds per transfer.
func NewNet(k *Kernel, latency float64, out, in []float64) *Net {
	return &Net{k: k, Latency: latency, out: out, in: in, Sent: make([]float64, len(out)), Received: make([]float64, len(in))}
}

// Transfer moves bytes from node src to node dst and calls done when the
// last byte has arrived.
func (n *Net) Transfer(src, dst int, bytes float64, done func()) {
	if src == dst || bytes <= 0 {
		n.k.After(0, done)
		return
	}
	n.k.After(n.Latency, func() {
		n.advance()
		n.flows = append(n.flows, &netFlow{src: src, dst: dst, left: bytes, done: done})
		n.reschedule()
	})
}

// advance moves every flow's bytes up to now at the current rates.
func (n *Net) advance() {
	dt := n.k.now - n.last
	for _, f := range n.flows {
		b := f.rate * dt
		f.left -= b
		n.Sent[f.src] += b
		n.Received[f.dst] += b
	}
	n.last = n.k.now
}

// rates gives every flow its max-min fair rate: raise all unfrozen flows
// together until a port is full, freeze the flows through it, repeat.
func (n *Net) rates() {
	outLeft, inLeft := append([]float64(nil), n.out...), append([]float64(nil), n.in...)
	frozen := make([]bool, len(n.flows))
	for _, f := range n.flows {
		f.rate = 0
	}
	for {
		outN, inN := make([]int, len(n.out)), make([]int, len(n.in))
		active := false
		for i, f := range n.flows {
			if !frozen[i] {
				outN[f.src]++
				inN[f.dst]++
				active = true
			}
		}
		if !active {
			return
		}
		step := math.Inf(1)
		for i, c := range outN {
			if c > 0 {
				step = min(step, outLeft[i]/float64(c))
			}
		}
		for i, c := range inN {
			if c > 0 {
				step = min(step, inLeft[i]/float64(c))
			}
		}
		for i, f := range n.flows {
			if !frozen[i] {
				f.rate += step
				outLeft[f.src] -= step
				inLeft[f.dst] -= step
			}
		}
		const full = 1e-9
		for i, f := range n.flows {
			if !frozen[i] && (outLeft[f.src] <= full*n.out[f.src] || inLeft[f.dst] <= full*n.in[f.dst]) {
				frozen[i] = true
			}
		}
	}
}

// reschedule recomputes the rates and schedules the next completion.
func (n *Net) reschedule() {
	n.rates()
	n.version++
	v := n.version
	next := math.Inf(1)
	for _, f := range n.flows {
		if f.rate > 0 {
			next = min(next, f.left/f.rate)
		}
	}
	if math.IsInf(next, 1) {
		return
	}
	n.k.After(max(next, 0), func() {
		if v != n.version {
			return
		}
		n.advance()
		var done []func()
		kept := n.flows[:0]
		for _, f := range n.flows {
			if f.left <= 1e-6*max(1, f.rate) {
				n.Sent[f.src] += f.left
				n.Received[f.dst] += f.left
				done = append(done, f.done)
				continue
			}
			kept = append(kept, f)
		}
		n.flows = kept
		n.reschedule()
		for _, d := range done {
			d()
		}
	})
}
