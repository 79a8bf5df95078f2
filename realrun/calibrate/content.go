package calibrate

import (
	"fmt"
	"math/rand/v2"

	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/realrun/workdir"
)

// Written says what the disk calibration writes (Calibration.Written).
var Written = fmt.Sprintf("float32 values drawn uniformly in ±%g, embeddings and Adagrad state alike, as a partition an epoch writes back holds", workdir.InitScale)

// fillPartitionLike fills buf with bytes like those of the partitions an
// epoch writes back: float32 values drawn uniformly in ±workdir.InitScale
// from seed (a trained partition's embeddings and Adagrad state are
// floats of that order; after one epoch of the data-bound validation
// graph 99% of its state was non-zero). What is written matters where
// the device depends on the bytes: beside a read, this machine's virtual
// disk wrote a trained partition 1.6–2.1× as fast as random bytes
// (1033–1340 against 629–632 MB/s, interleaved) and these floats 1.4–1.9×
// (949–1223 against 611–716 MB/s); zeros were slower than random bytes.
func fillPartitionLike(buf *store.Buffer, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x66696c6c)) // "fill"
	f := buf.Floats()
	for i := range f {
		f[i] = (2*rng.Float32() - 1) * workdir.InitScale
	}
}
