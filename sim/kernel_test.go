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
		// Keeping the shared rate: the write moved at 100 beside the read
		// and goes on at 100 after it, done at 2 s, not at 200 (1.5 s).
		{"read share, keeping the pace", Sharing{ReadBW: 300, WriteBW: 200, Combined: 400, ReadShare: 0.75, KeepPace: true}, 1, 2},
		// The fair split: the write is done first at 1 s; the read keeps
		// its 200 for its last 100 bytes (1.5 s, not 1 + 1/3).
		{"combined, keeping the pace", Sharing{ReadBW: 300, WriteBW: 200, Combined: 400, KeepPace: true}, 1.5, 1},
		// Full duplex never shares: nothing to keep.
		{"duplex, keeping the pace", Sharing{ReadBW: 300, WriteBW: 200, FullDuplex: true, KeepPace: true}, 1, 1},
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

// A transfer that never ran beside the other direction moves at its own
// rate under KeepPace: only the shared part of a pair is held.
func TestLinkKeepPaceAlone(t *testing.T) {
	var k Kernel
	l := NewLink(&k, "disk", 0, Sharing{ReadBW: 300, WriteBW: 200, Combined: 400, ReadShare: 0.75, KeepPace: true})
	var r, w float64
	l.Transfer(300, Read, func() {
		r = k.Now()
		l.Transfer(200, Write, func() { w = k.Now() })
	})
	k.Run()
	assert.InDelta(t, 1, r, 1e-9)
	assert.InDelta(t, 2, w, 1e-9, "the write after the read: 200 bytes alone at 200")
}

func TestLinkThrottleSlices(t *testing.T) {
	// A 1 GB/s disk held to 300 MB/s reads in 100 ms slices: 30 MB at
	// the start of each slice of a busy stretch. As measured here with
	// O_DIRECT reads after idle under such a limit: 24 MB ~20 ms, 32 MB
	// 120 ms, 48 MB 133 ms, 64 MB 220 ms, 128 MB 430 ms.
	held := Sharing{ReadBW: 1e9, WriteBW: 1e9, FullDuplex: true, Limit: [2]float64{300e6, 0}, Slice: 0.1}
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
		{"within the first slice: the disk's speed", held, []step{{0, 24e6, Read, 0.024}}},
		// 30 MB by 30 ms, then nothing until the second slice at 100 ms.
		{"32 MB: the rest waits for the next slice", held, []step{{0, 32e6, Read, 0.102}}},
		{"48 MB", held, []step{{0, 48e6, Read, 0.118}}},
		{"64 MB: three slices", held, []step{{0, 64e6, Read, 0.204}}},
		{"128 MB: five slices", held, []step{{0, 128e6, Read, 0.408}}},
		// Sustained: 3 s of 300 MB/s are granted by the 30th slice's start.
		{"sustained: the limit", held, []step{{0, 900e6, Read, 2.93}}},
		// The first read spends the first slice by 30 ms; the second,
		// 50 ms later (the slice not ended), has nothing left until 100 ms.
		{"a short gap: the same slice", held, []step{{0, 30e6, Read, 0.03}, {0.08, 10e6, Read, 0.11}}},
		// Idle past the slice's end (0.03 + 0.1): a fresh slice, 30 MB at once.
		{"a long gap: a fresh slice", held, []step{{0, 30e6, Read, 0.03}, {0.5, 30e6, Read, 0.53}}},
		{"writes are not held by the read limit", held, []step{{0, 64e6, Read, 0.204}, {0, 64e6, Write, 0.064}}},
		{"no slice: paced at the limit", Sharing{ReadBW: 1e9, WriteBW: 1e9, Limit: [2]float64{300e6, 0}}, []step{{0, 30e6, Read, 0.1}}},
		{"a limit above the disk never holds it back", Sharing{ReadBW: 1e9, WriteBW: 1e9, Limit: [2]float64{2e9, 0}, Slice: 0.1}, []step{{0, 100e6, Read, 0.1}}},
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

// Slices older than the one before the current are trimmed and their
// unspent allowance dropped: a stream slowed to 100 MB/s (a tenth of the
// disk) for its first 1.05 s, 10 MB of its 30 MB a slice, has not saved
// up the rest when it speeds up.
func TestLinkThrottleTrimsOldSlices(t *testing.T) {
	var k Kernel
	l := NewLink(&k, "disk", 0, Sharing{ReadBW: 1e9, WriteBW: 1e9, FullDuplex: true, Limit: [2]float64{300e6, 0}, Slice: 0.1})
	l.SetScale(0.1)
	var done float64
	l.Transfer(305e6, Read, func() { done = k.Now() })
	k.At(1.05, func() { l.SetScale(1) })
	k.Run()
	// At 1.05 s, 105 MB moved: the slices from 0.9 s grant 60 MB, spent
	// by 1.11 s; the slice from 1.1 s 30 MB more (1.14 s); then 30 MB at
	// 1.2, 1.3 and 1.4 s and the last 20 MB at 1.5 s. Had the unspent
	// allowance been kept (330 − 105 MB), the last 200 MB would have
	// passed at once, by 1.25 s.
	assert.InDelta(t, 1.52, done, 1e-9)
}

// While a direction waits for its next slice its transfers are off the
// device: a shared device gives the other direction its whole bandwidth.
func TestLinkThrottledDirectionLeavesTheDevice(t *testing.T) {
	var k Kernel
	l := NewLink(&k, "disk", 0, Sharing{ReadBW: 1e9, WriteBW: 1e9, Limit: [2]float64{100e6, 0}, Slice: 0.1})
	var r, w float64
	l.Transfer(20e6, Read, func() { r = k.Now() })
	l.Transfer(100e6, Write, func() { w = k.Now() })
	k.Run()
	// Both at half the device (500 MB/s each) until the read's 10 MB
	// slice is spent at 20 ms; the write alone at 1 GB/s until the read's
	// next slice at 100 ms (90 MB moved by then); both at half again for
	// their last 10 MB each. Had the waiting read kept half the device,
	// the write would take 0.2 s.
	assert.InDelta(t, 0.12, w, 1e-9)
	assert.InDelta(t, 0.12, r, 1e-9)
}

// The lower bound a limited direction allows from a fresh slice.
func TestSharingThrottled(t *testing.T) {
	s := Sharing{ReadBW: 1e9, Limit: [2]float64{300e6, 0}, Slice: 0.1}
	assert.InDelta(t, 0.024, s.throttled(Read, 24e6, 1e9), 1e-12)
	assert.InDelta(t, 0.204, s.throttled(Read, 64e6, 1e9), 1e-12)
	assert.InDelta(t, 2.93, s.throttled(Read, 900e6, 1e9), 1e-12)
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
