package sim

import (
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/devices"
	"github.com/tierflow/tierflow/orderings"
)

func doubled(p devices.Profile) devices.Profile {
	p.Disk.Read *= 2
	p.Disk.Write *= 2
	p.Disk.Combined *= 2
	p.SSDToGPU.Read *= 2
	p.SSDToGPU.Write *= 2
	return p
}

// TestBoundAndFasterDisk runs every partitioned system with every ordering
// it accepts on the presets, several datasets and dimensions and both
// prefetch settings: no epoch beats its bound, and doubling the disk's
// bandwidth never makes an epoch slower.
func TestBoundAndFasterDisk(t *testing.T) {
	type dev struct{ system, device string }
	runs := 0
	for _, sd := range []dev{{"marius", "p3.2xlarge"}, {"marius", "h100-nvme"}, {"pbg", "p3.2xlarge"}, {"legend", "legend-a100"}, {"legend", "h200-nvme"}, {"ge2", "legend-a100"}} {
		for _, ds := range []string{"freebase86m", "twitter", "livejournal"} {
			for _, d := range []int{50, 200} {
				for _, ord := range orderings.Names() {
					for _, prefetch := range []bool{true, false} {
						sc := scenarioFor(t, sd.system, sd.device, ds, d, 16, ord)
						sc.C = 4
						if sc.System.Capacity > 0 {
							sc.C = 0
						}
						sc.System.Prefetch = prefetch
						sc.Edges = Skewed
						name := fmt.Sprintf("%s/%s/%s/d%d/%s/prefetch=%v", sd.system, sd.device, ds, d, ord, prefetch)
						r, err := Simulate(sc)
						if errors.Is(err, orderings.ErrNotApplicable) {
							continue
						}
						require.NoError(t, err, name)
						require.GreaterOrEqual(t, r.EpochSeconds, r.BoundSeconds*(1-1e-9), name)
						sc.Profile = doubled(sc.Profile)
						fast, err := Simulate(sc)
						require.NoError(t, err, name)
						require.LessOrEqual(t, fast.EpochSeconds, r.EpochSeconds*(1+1e-9), name)
						runs++
					}
				}
			}
		}
	}
	require.Greater(t, runs, 100)
}

// TestFewerWriteBuffersNeverFaster: bounding the async writer (a load
// waits for a free write buffer) never makes an epoch faster than an
// unbounded writer, and one buffer is never faster than two.
func TestFewerWriteBuffersNeverFaster(t *testing.T) {
	for _, ds := range []string{"freebase86m", "twitter"} {
		for _, d := range []int{50, 200} {
			for _, ord := range []string{"beta", "hilbert", "hilbert-symmetric", "random"} {
				sc := scenarioFor(t, "marius", "p3.2xlarge", ds, d, 16, ord)
				sc.C = 4
				epoch := map[int]float64{}
				for _, wb := range []int{0, 1, 2} {
					sc.System.WriteBuffers = wb
					rep, err := Simulate(sc)
					require.NoError(t, err)
					epoch[wb] = rep.EpochSeconds
				}
				name := fmt.Sprintf("%s d=%d %s", ds, d, ord)
				require.GreaterOrEqual(t, epoch[1], epoch[2]-1e-9, name)
				require.GreaterOrEqual(t, epoch[2], epoch[0]-1e-9, name)
			}
		}
	}
}
