package devices_test

import (
	"fmt"
	"strings"

	"github.com/tierflow/tierflow/devices"
)

// Read a built-in device profile (any YAML file in the same format works
// with devices.Load).
func ExamplePreset() {
	p, err := devices.Preset("p3.2xlarge")
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %s, disk read %.0f MB/s\n", p.Name, p.GPU.Name, float64(p.Disk.Read)/1e6)
	// Output:
	// p3.2xlarge: V100-SXM2-16GB, disk read 400 MB/s
}

// A calibration records a rate's repeated measurements as its spread;
// Extremes gives the profile at the slow and fast end of every range.
func ExampleProfile_SetSpreadSamples() {
	p, err := devices.Preset("p3.2xlarge")
	if err != nil {
		panic(err)
	}
	reads := []float64{384e6, 400e6, 362e6, 410e6, 395e6} // five passes
	p.Disk.Read = 395e6                                   // their median
	if err := p.SetSpreadSamples("disk.read", reads); err != nil {
		panic(err)
	}
	fast, slow := p.Extremes()
	fmt.Printf("disk read %s, from %s to %s\n", p.Disk.Read, slow.Disk.Read, fast.Disk.Read)
	y, _ := p.YAML()
	_, spread, _ := strings.Cut(string(y), "spread:")
	fmt.Print("spread:" + spread)
	// Output:
	// disk read 395 MB/s, from 362 MB/s to 410 MB/s
	// spread:
	//   samples: 5
	//   disk.read: [362 MB/s, 410 MB/s]
}
