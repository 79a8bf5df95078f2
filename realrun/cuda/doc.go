// Package cuda is tierflow's GPU training engine (build tag cuda): the
// realrun engine seam implemented with CUDA kernels (kernels/train.cu,
// compiled to PTX at build time and embedded) launched through the driver
// API, with the partition slots on the GPU (--buffer gpu) or in host
// memory with per-batch row transfers (--buffer host). A chunk's two
// corrupted sides are stacked so that three batched products (cuBLAS,
// opened at run time wherever it is installed, on TF32 tensor cores unless
// FP32 is asked for; or the engine's own sgemm_batched kernel when no
// cuBLAS loads) and four fused kernels train it (the l1 and modulus_l1
// comparators score and differentiate pairwise instead of the products:
// pair_scores, pair_grads); every named model and PBG operator+comparator
// pair trains, with the softmax, ranking or logistic loss and the L2 or N3
// regulariser; the chunk step's launches
// are recorded once per index slot and chunk as CUDA graphs and replayed.
// A shuffler and a producer goroutine prepare the bucket's index pieces in
// a ring of pinned slots while the GPU trains; partition copies run on a
// copy stream and index uploads on an upload stream, ordered against the
// compute stream by events, so that both overlap training; the epoch's
// Report says how much of the copy time overlap hid.
//
// Without the cuda tag the package holds the engine on an emulated GPU
// (emu.go) for tests and the GPU bundle's stand-in; it never imports
// gorgonia.org/cu, whose init exits the process without a driver.
package cuda
