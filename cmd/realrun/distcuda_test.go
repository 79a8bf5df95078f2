//go:build !nodist && !cuda

package main

// The emulated GPU (EmulateGPUEnv) exists in the default build only: a
// build with -tags cuda trains on the real one.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/dist"
	"github.com/tierflow/tierflow/realrun/store"
)

// --engine cuda with several trainers: every trainer trains with the
// CUDA engine, here the emulated GPU (TIERFLOW_EMULATE_GPU), its
// partitions installed in GPU slots and evicted after each bucket; the
// checkpoints inside the epoch read the partitions the trainers
// committed, so --buffer gpu takes them too.
func TestTrainersCUDAEmulated(t *testing.T) {
	for _, buffer := range []string{"gpu", "host"} {
		t.Run(buffer, func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "work")
			cmd := child(append(tinyTrainers(work, "--p", "2", "--epochs", "1", "--engine", "cuda", "--buffer", buffer, "--negatives", "10", "--batch", "500", "--checkpoint-every", "1b"), "--json")...)
			cmd.Env = append(cmd.Env, EmulateGPUEnv+"=1")
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Run(), stderr.String())
			var d dist.DistOutput
			require.NoError(t, json.Unmarshal(stdout.Bytes(), &d))
			require.Len(t, d.Epochs, 1)
			n := 0
			for _, tr := range d.Epochs[0].Trainers {
				n += tr.Buckets
				if tr.Buckets > 0 {
					assert.Equal(t, "cuda-"+buffer, tr.Engine)
					assert.Positive(t, tr.Loss)
				}
			}
			assert.Equal(t, 4, n)
			assert.NotEmpty(t, d.Epochs[0].Within, "checkpoints inside the epoch, with the GPU's slots too")
			// The trained partitions came back from the GPU slots.
			st, err := store.Open(work)
			require.NoError(t, err)
			for p := range 2 {
				initial, err := os.ReadFile(store.PartitionIn(dist.FilesDir(st, dist.InitialFiles), p))
				require.NoError(t, err)
				now, err := os.ReadFile(store.PartitionIn(st.CurrentDir(), p))
				require.NoError(t, err)
				assert.NotEqual(t, store.Checksum(initial), store.Checksum(now), "partition %d trained", p)
			}
			assert.Positive(t, d.MRR)
		})
	}
}
