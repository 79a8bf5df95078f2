// Package cuda is tierflow's GPU training engine (build tag cuda): the
// realrun engine seam implemented with CUDA kernels (kernels/*.cu, compiled
// to PTX at build time and embedded) launched through gorgonia.org/cu's
// driver API, with the partition slots on the GPU (--buffer gpu) or in host
// memory with per-batch row transfers (--buffer host). The batched matrix
// products run in cuBLAS, opened at run time wherever it is installed
// (package cublas; TF32 tensor-core math with --tf32), or in the engine's
// own sgemm_batched kernel when no cuBLAS loads. Partition copies run on a
// copy stream and each batch's index upload on an upload stream, ordered
// against the compute stream by events, so that both overlap training; the
// epoch's Report says how much of the copy time overlap hid.
//
// Without the cuda tag the package holds the engine on an emulated GPU
// (emu.go) for tests and the GPU bundle's stand-in; it never imports
// gorgonia.org/cu, whose init exits the process without a driver.
package cuda
