package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestKernelOrdersByTimeThenFIFO(t *testing.T) {
	var k Kernel
	var got []string
	k.At(2, func() { got = append(got, "b") })
	k.At(1, func() { got = append(got, "a") })
	k.At(2, func() { got = append(got, "c") })
	k.At(1, func() { k.After(0.5, func() { got = append(got, "a2") }) })
	k.Run()
	assert.Equal(t, []string{"a", "a2", "b", "c"}, got)
	assert.Equal(t, 2.0, k.Now())
}

func TestLinkSingleTransfer(t *testing.T) {
	var k Kernel
	l := NewLink(&k, "disk", 0.01, Sharing{ReadBW: 400e6, WriteBW: 400e6})
	var at float64
	l.Transfer(400e6, Read, func() { at = k.Now() })
	k.Run()
	assert.InDelta(t, 1.01, at, 1e-9, "bytes ÷ bandwidth + latency")
	assert.InDelta(t, 1.0, l.Busy(), 1e-9)
	assert.Equal(t, 400e6, l.Bytes())
}

func TestLinkSharesBandwidth(t *testing.T) {
	var k Kernel
	l := NewLink(&k, "disk", 0, Sharing{ReadBW: 100, WriteBW: 100})
	var a, b float64
	l.Transfer(100, Read, func() { a = k.Now() })
	l.Transfer(100, Read, func() { b = k.Now() })
	k.Run()
	// Two equal transfers started together both finish at 2 s.
	assert.InDelta(t, 2.0, a, 1e-9)
	assert.InDelta(t, 2.0, b, 1e-9)

	var k2 Kernel
	l2 := NewLink(&k2, "disk", 0, Sharing{ReadBW: 100, WriteBW: 100})
	l2.Transfer(100, Read, func() { a = k2.Now() })
	k2.At(0.5, func() { l2.Transfer(100, Read, func() { b = k2.Now() }) })
	k2.Run()
	// First: 50 alone by 0.5 s, then 50 at half speed: done at 1.5 s.
	// Second: 50 at half speed by 1.5 s, then 50 alone: done at 2 s.
	assert.InDelta(t, 1.5, a, 1e-9)
	assert.InDelta(t, 2.0, b, 1e-9)
	assert.InDelta(t, 2.0, l2.Busy(), 1e-9)
}

func TestLinkReadWriteSharing(t *testing.T) {
	tests := []struct {
		name       string
		share      Sharing
		read, wrte float64 // completion times of a 300-byte read and a 200-byte write started together
	}{
		// Time-shared device: each direction gets half its own speed.
		{"shared", Sharing{ReadBW: 300, WriteBW: 200}, 2, 2},
		// Full duplex: no interference.
		{"duplex", Sharing{ReadBW: 300, WriteBW: 200, FullDuplex: true}, 1, 1},
		// Combined cap 400: fair split 200/200, the write finishes at 1 s,
		// then the read runs alone at 300 for its last 100 bytes.
		{"combined", Sharing{ReadBW: 300, WriteBW: 200, Combined: 400}, 1 + 1.0/3, 1},
		// Reads favoured, 3/4 of 400: the read moves at its own 300 and is
		// done at 1 s, the write has 100 bytes moved by then and runs alone
		// at 200 for the other 100.
		{"read share", Sharing{ReadBW: 300, WriteBW: 200, Combined: 400, ReadShare: 0.75}, 1, 1.5},
		// Reads favoured beyond what the write can spare: it still gets
		// Combined − ReadBW = 100 (reads capped at their own 300).
		{"read share capped", Sharing{ReadBW: 300, WriteBW: 200, Combined: 400, ReadShare: 0.9}, 1, 1.5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k Kernel
			l := NewLink(&k, "nvme", 0, tt.share)
			var r, w float64
			l.Transfer(300, Read, func() { r = k.Now() })
			l.Transfer(200, Write, func() { w = k.Now() })
			k.Run()
			assert.InDelta(t, tt.read, r, 1e-9)
			assert.InDelta(t, tt.wrte, w, 1e-9)
		})
	}
}

func TestLinkTokenBucket(t *testing.T) {
	// A 1 GB/s disk held to 300 MB/s reads, with 30 MB of allowance (the
	// kernel's 100 ms slice): as measured here with O_DIRECT reads after
	// idle, 24 MB pass at the disk's speed and 64 MB take about 0.11 s.
	held := Sharing{ReadBW: 1e9, WriteBW: 1e9, FullDuplex: true, Limit: [2]float64{300e6, 0}, Burst: [2]float64{30e6, 0}}
	type step struct {
		at, bytes float64
		dir       Dir
		want      float64 // completion time
	}
	tests := []struct {
		name  string
		share Sharing
		steps []step
	}{
		{"within the allowance: the disk's speed", held, []step{{0, 24e6, Read, 0.024}}},
		// The bucket empties at 1e9 − 300e6 per second: 30 MB ÷ 0.7e9 s,
		// after which the rest moves at the limit; (64 − 30) MB ÷ 300 MB/s.
		{"beyond it: the limit after the allowance", held, []step{{0, 64e6, Read, 34e6 / 300e6}}},
		// 1 s of 300 MB/s minus what the allowance gave.
		{"sustained: the limit", held, []step{{0, 330e6, Read, 1}}},
		// The first read empties the bucket (64 MB by 0.1133 s); idle for
		// 0.05 s it regains 15 MB, so the second read's 30 MB take
		// (30 − 15) MB ÷ 300 MB/s.
		{"an idle gap refills it", held, []step{{0, 64e6, Read, 34e6 / 300e6}, {34e6/300e6 + 0.05, 30e6, Read, 34e6/300e6 + 0.05 + (30e6-15e6)/300e6}}},
		{"writes are not held by the read limit", held, []step{{0, 64e6, Read, 34e6 / 300e6}, {0, 64e6, Write, 0.064}}},
		// No allowance: every byte paced at the limit (the old cap).
		{"no burst: paced", Sharing{ReadBW: 1e9, WriteBW: 1e9, Limit: [2]float64{300e6, 0}}, []step{{0, 30e6, Read, 0.1}}},
		// A limit above the disk's own rate never holds it back.
		{"limit above the disk", Sharing{ReadBW: 1e9, WriteBW: 1e9, Limit: [2]float64{2e9, 0}, Burst: [2]float64{1e6, 0}}, []step{{0, 100e6, Read, 0.1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var k Kernel
			l := NewLink(&k, "disk", 0, tt.share)
			got := make([]float64, len(tt.steps))
			for i, s := range tt.steps {
				k.At(s.at, func() { l.Transfer(s.bytes, s.dir, func() { got[i] = k.Now() }) })
			}
			k.Run()
			for i, s := range tt.steps {
				assert.InDelta(t, s.want, got[i], 1e-9, "transfer %d", i)
			}
		})
	}
}

// The lower bound a limited direction allows: its own rate, or the
// limit after the allowance, whichever is slower.
func TestSharingThrottled(t *testing.T) {
	s := Sharing{ReadBW: 1e9, Limit: [2]float64{300e6, 0}, Burst: [2]float64{30e6, 0}}
	assert.InDelta(t, 0.024, s.throttled(Read, 24e6, 1e9), 1e-12)
	assert.InDelta(t, 1.0, s.throttled(Read, 330e6, 1e9), 1e-12)
	assert.InDelta(t, 0.5, s.throttled(Write, 500e6, 1e9), 1e-12, "no write limit")
}

func TestServerFIFO(t *testing.T) {
	var k Kernel
	s := NewServer(&k, "gpu")
	var ends []float64
	s.Do(1, func() { ends = append(ends, k.Now()) })
	s.Do(2, func() { ends = append(ends, k.Now()) })
	k.At(5, func() { s.Do(1, func() { ends = append(ends, k.Now()) }) })
	k.Run()
	assert.Equal(t, []float64{1, 3, 6}, ends)
	assert.Equal(t, 4.0, s.Busy())
}
