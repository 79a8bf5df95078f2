package sim

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
)

// TestInterferenceHandComputed pins the interference model on a case
// computed by hand: training of 10 s and a 300-byte read on a 100 B/s
// disk start together; training runs at half speed while the disk moves
// bytes (Compute 1) and the disk at 1/1.5 while training runs (IO 0.5).
// The read moves 300 B at 66.7 B/s and ends at 4.5 s, when training has
// done 2.25 s of its work; the remaining 7.75 s run at full speed and end
// at 12.25 s.
func TestInterferenceHandComputed(t *testing.T) {
	sys, err := LookupSystem("realrun")
	require.NoError(t, err)
	prof := devices.Profile{Name: "toy",
		Disk: devices.Disk{Read: 100, Write: 100, FullDuplex: true},
		CPU:  devices.CPU{Workers: 1, Interference: devices.Interference{Compute: 1, IO: 0.5}}}
	e := newEngine(Config{System: sys, Profile: prof})
	require.NotNil(t, e.work, "interference is modelled for the CPU engine")
	var readDone, workDone float64
	e.k.At(0, func() {
		e.work.Transfer(10, Read, func() { workDone = e.k.Now() })
		e.read.Transfer(300, Read, func() { readDone = e.k.Now() })
	})
	e.k.Run()
	assert.InDelta(t, 4.5, readDone, 1e-9)
	assert.InDelta(t, 12.25, workDone, 1e-9)
	busy, _ := e.computeBusy()
	assert.InDelta(t, 12.25, busy, 1e-9, "the work link was busy the whole time")

	// Without interference the two do not touch each other.
	prof.CPU.Interference = devices.Interference{}
	assert.Nil(t, newEngine(Config{System: sys, Profile: prof}).work)
}

// TestChecksumHandComputed pins the checksum model: with a 100 B/s disk
// and checksums at 300 B/s, a 300-byte load is read in 3 s and verified
// in 1 s, and a write-back checksummed in 1 s and written in 3 s. With
// the interference of TestInterferenceHandComputed and 10 s of training
// starting with the load, the read ends at 4.5 s (2.25 s of work done);
// the checksum, I/O activity as in the calibration's stream, runs at
// 300/1.5 B/s for 1.5 s while training runs at half speed, so the load
// is done at 6 s with 3 s of work done, and training ends at 13 s.
func TestChecksumHandComputed(t *testing.T) {
	sys, err := LookupSystem("realrun")
	require.NoError(t, err)
	require.True(t, sys.Checksums)
	prof := devices.Profile{Name: "toy",
		Disk: devices.Disk{Read: 100, Write: 100, FullDuplex: true},
		CPU:  devices.CPU{Workers: 1, Checksum: 300}}
	e := newEngine(Config{System: sys, Profile: prof})
	var loaded, written float64
	e.k.At(0, func() {
		e.readPartition(300, "", nil, -1, func() { loaded = e.k.Now() })
		e.writePartition(300, "", nil, func() { written = e.k.Now() })
	})
	e.k.Run()
	assert.InDelta(t, 4, loaded, 1e-9)
	assert.InDelta(t, 4, written, 1e-9)

	prof.CPU.Interference = devices.Interference{Compute: 1, IO: 0.5}
	e = newEngine(Config{System: sys, Profile: prof})
	var workDone float64
	e.k.At(0, func() {
		e.work.Transfer(10, Read, func() { workDone = e.k.Now() })
		e.readPartition(300, "", nil, -1, func() { loaded = e.k.Now() })
	})
	e.k.Run()
	assert.InDelta(t, 6, loaded, 1e-9)
	assert.InDelta(t, 13, workDone, 1e-9)

	// A profile without a checksum rate, or a system that does not
	// checksum, moves bytes only.
	prof.CPU.Checksum = 0
	assert.Nil(t, newEngine(Config{System: sys, Profile: prof}).crcLoad)
	prof.CPU.Checksum = 300
	sys.Checksums = false
	assert.Nil(t, newEngine(Config{System: sys, Profile: prof}).crcLoad)
}

// TestWriteAfterReadHandComputed pins the engine's write-back rule: on
// one 100 B/s disk with checksums at 300 B/s, the write-back of the
// partition load 0 evicts is checksummed from 0 to 1 s beside load 0's
// read, then held until the read has arrived at 3 s, and written alone
// from 3 to 6 s; the read, never sharing the disk, is verified by 4 s.
// Without the rule the write starts at 1 s and the read, sharing the
// disk with it, arrives later; the last byte is written at 6 s either
// way.
func TestWriteAfterReadHandComputed(t *testing.T) {
	sys, err := LookupSystem("realrun")
	require.NoError(t, err)
	require.True(t, sys.WriteAfterRead, "the engine's policy")
	prof := devices.Profile{Name: "toy",
		Disk: devices.Disk{Read: 100, Write: 100},
		CPU:  devices.CPU{Workers: 1, Checksum: 300}}
	run := func(sys System) (loaded, written float64) {
		e := newEngine(Config{System: sys, Profile: prof})
		e.k.At(0, func() {
			e.evictAndWrite(300, 0, "", nil, func() {}, func() { written = e.k.Now() })
			e.readPartition(300, "", nil, 0, func() { loaded = e.k.Now() })
		})
		e.k.Run()
		return loaded, written
	}
	loaded, written := run(sys)
	assert.InDelta(t, 4, loaded, 1e-9)
	assert.InDelta(t, 6, written, 1e-9)

	sys.WriteAfterRead = false
	loaded, written = run(sys)
	assert.Greater(t, loaded, 4.5, "the read shares the disk with the write")
	assert.InDelta(t, 6, written, 1e-9, "the disk moves the same 600 B either way")
}
