package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Max-min fair sharing of a switch's ports, checked by hand.
func TestNetSharing(t *testing.T) {
	const gb = 1e9
	for _, tc := range []struct {
		name    string
		out, in []float64
		flows   [][3]float64 // src, dst, bytes
		want    []float64    // finish times
	}{
		{"one flow at the port's rate", []float64{gb, gb}, []float64{gb, gb}, [][3]float64{{0, 1, gb}}, []float64{1}},
		{"two senders into one receiver share its port", []float64{gb, gb, gb}, []float64{gb, gb, gb},
			[][3]float64{{0, 2, gb}, {1, 2, gb}}, []float64{2, 2}},
		// 0→2 and 1→2 share 2's port; 1→3 is limited by 1's port, of which
		// 1→2 takes half: 1→3 gets the other half.
		{"a shared sender", []float64{gb, gb, gb, gb}, []float64{gb, gb, gb, gb},
			[][3]float64{{0, 2, gb}, {1, 2, gb}, {1, 3, gb}}, []float64{2, 2, 2}},
		// A slow receiver frees the sender's port for its other flow:
		// 0→1 is held to 0.25 GB/s, 0→2 gets 0.75 GB/s; once 0→2 is done
		// (1.33 s) 0→1 stays at 0.25: 4 s.
		{"a slow receiver", []float64{gb, gb, gb}, []float64{gb, gb / 4, gb},
			[][3]float64{{0, 1, gb}, {0, 2, gb}}, []float64{4, 4.0 / 3}},
		{"to itself: no network", []float64{gb}, []float64{gb}, [][3]float64{{0, 0, gb}}, []float64{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var k Kernel
			n := NewNet(&k, 0, tc.out, tc.in)
			got := make([]float64, len(tc.flows))
			for i, f := range tc.flows {
				n.Transfer(int(f[0]), int(f[1]), f[2], func() { got[i] = k.Now() })
			}
			k.Run()
			assert.InDeltaSlice(t, tc.want, got, 1e-6)
			var sent float64
			for _, s := range n.Sent {
				sent += s
			}
			moved := 0.0
			for _, f := range tc.flows {
				if f[0] != f[1] {
					moved += f[2]
				}
			}
			assert.InDelta(t, moved, sent, 1)
		})
	}
}
