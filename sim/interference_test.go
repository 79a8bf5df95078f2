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
