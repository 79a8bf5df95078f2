// Package cuda is tierflow's GPU training engine (build tag cuda): the
// realrun engine seam implemented with CUDA kernels (kernels/*.cu, compiled
// to PTX at build time and embedded) launched through gorgonia.org/cu's
// driver API, with the partition slots on the GPU (--buffer gpu) or in host
// memory with per-batch row transfers (--buffer host).
//
// Without the cuda tag this package is empty: the default build never
// imports gorgonia.org/cu, whose init exits the process without a driver.
package cuda
