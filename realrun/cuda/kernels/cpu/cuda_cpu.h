// cuda_cpu.h: the CUDA built-ins the kernels of ../train.cu use, for
// compiling them as C++ and running them on the CPU (launch.cc; the tests
// of realrun/cuda build both with `-include cuda_cpu.h`).
//
// A block runs on one OS thread: its threads one after another, or, for
// kernels with barriers (__syncthreads, warp shuffles), as cooperative
// fibers that switch at each barrier. So a function-local static is the
// block's shared memory (thread_local: launches on other OS threads run
// at the same time), and atomics need no locking.
#ifndef TIERFLOW_CUDA_CPU_H
#define TIERFLOW_CUDA_CPU_H

#include <cmath>
#include <math.h> // expf, fmaxf, sqrtf, log at global scope, as in CUDA
#include <cstdint>

struct uint3 {
	unsigned x, y, z;
};
struct dim3 {
	unsigned x, y, z;
};

// Set by the runner for the thread that is running.
extern thread_local uint3 threadIdx, blockIdx;
extern thread_local dim3 blockDim, gridDim;
static const int warpSize = 32;

#define __global__
#define __device__ static inline
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __restrict__ __restrict

// Barriers: implemented by the runner (launch.cc).
void __syncthreads();
uint32_t tf_shfl_xor(uint32_t v, int laneMask);

static inline float __shfl_xor_sync(unsigned, float v, int laneMask, int = 32) {
	uint32_t u;
	__builtin_memcpy(&u, &v, 4);
	u = tf_shfl_xor(u, laneMask);
	__builtin_memcpy(&v, &u, 4);
	return v;
}
static inline int __shfl_xor_sync(unsigned, int v, int laneMask, int = 32) {
	return (int)tf_shfl_xor((uint32_t)v, laneMask);
}
static inline unsigned __shfl_xor_sync(unsigned, unsigned v, int laneMask, int = 32) {
	return tf_shfl_xor(v, laneMask);
}
// __syncwarp: a barrier of the warp's live lanes (a shuffle whose value
// nobody uses).
static inline void __syncwarp(unsigned = 0xffffffffu) { (void)tf_shfl_xor(0, 0); }

// Atomics: one OS thread per block and blocks in turn, so plain
// read-modify-write; each returns the old value.
static inline float atomicAdd(float *p, float v) {
	float o = *p;
	*p = o + v;
	return o;
}
static inline double atomicAdd(double *p, double v) {
	double o = *p;
	*p = o + v;
	return o;
}
static inline int atomicAdd(int *p, int v) {
	int o = *p;
	*p = o + v;
	return o;
}
static inline unsigned atomicAdd(unsigned *p, unsigned v) {
	unsigned o = *p;
	*p = o + v;
	return o;
}
static inline int atomicExch(int *p, int v) {
	int o = *p;
	*p = v;
	return o;
}
static inline float atomicExch(float *p, float v) {
	float o = *p;
	*p = v;
	return o;
}
static inline int atomicMax(int *p, int v) {
	int o = *p;
	if (v > o) *p = v;
	return o;
}
static inline int atomicCAS(int *p, int cmp, int v) {
	int o = *p;
	if (o == cmp) *p = v;
	return o;
}

#endif
