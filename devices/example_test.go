package devices_test

import (
	"fmt"

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
