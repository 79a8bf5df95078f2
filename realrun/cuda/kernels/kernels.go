// Package kernels holds the CUDA engine's kernels: CUDA C sources compiled
// to PTX by `make ptx` (NVRTC) and embedded here for the driver to JIT.
package kernels

import _ "embed"

// TrainPTX is train.cu compiled to PTX.
//
//go:embed train.ptx
var TrainPTX string

// Train lists the entry points of TrainPTX the engine launches.
var Train = []string{"chunk_prep", "sgemm_batched", "pair_scores", "pair_grads", "chunk_softmax", "chunk_back", "adagrad_sum", "adagrad_each", "each_clear"}
