// Training kernels of tierflow's CUDA engine: the same float32 math as the
// CPU engine's realrun/model (ChunkGrad, Adagrad), laid out for the GPU.
//
// A "group" is g chunks of n edges each sharing m negatives; matrices are
// row-major and batched over chunks (grid z). Embedding tables are row-major
// rows×d; an Adagrad state table of the same shape sits beside each.
//
// Compiled to PTX with NVRTC at build time (make ptx); the Go engine loads
// the PTX with the driver API. Every parameter is 4 or 8 bytes wide.

extern "C" {

// gather_rows: out[i] = (sel && sel[i] ? b : a)[rows[i]] for i < count.
__global__ void gather_rows(const float *a, const float *b, const int *rows, const int *sel,
                            float *out, int count, int d) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (long long)count * d) return;
	int i = (int)(t / d), k = (int)(t % d);
	const float *base = (sel != 0 && sel[i]) ? b : a;
	out[t] = base[(long long)rows[i] * d + k];
}

// query_index maps this thread to its element: mode 0 one float per
// thread (t), the complex modes one (re, im) pair per thread. False past
// the end.
__device__ bool query_index(int mode, int rows, int d, long long *t, long long *re, long long *im) {
	*t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (mode == 0) return *t < (long long)rows * d;
	int h = d / 2;
	if (*t >= (long long)rows * h) return false;
	*re = (*t / h) * d + *t % h;
	*im = *re + h;
	return true;
}

// make_query builds the query rows of one side (see model.ChunkGrad):
//   mode 0 (DistMult):        q = a∘r
//   mode 1 (ComplEx, dst):    q = a·r (complex, [re | im])
//   mode 2 (ComplEx, src):    q = (Re, −Im) of r·conj(a)
__global__ void make_query(int mode, int rows, int d, const float *a, const float *r, float *q) {
	long long t, re, im;
	if (!query_index(mode, rows, d, &t, &re, &im)) return;
	if (mode == 0) {
		q[t] = a[t] * r[t];
	} else if (mode == 1) {
		float sa = a[re], sb = a[im], c = r[re], e = r[im];
		q[re] = sa * c - sb * e;
		q[im] = sa * e + sb * c;
	} else {
		float c = r[re], e = r[im], u = a[re], v = a[im];
		q[re] = c * u + e * v;
		q[im] = c * v - e * u;
	}
}

// query_back adds the gradient of make_query's q into ga and gr.
__global__ void query_back(int mode, int rows, int d, const float *a, const float *r, const float *gq,
                           float *ga, float *gr) {
	long long t, re, im;
	if (!query_index(mode, rows, d, &t, &re, &im)) return;
	if (mode == 0) {
		ga[t] += gq[t] * r[t];
		gr[t] += gq[t] * a[t];
		return;
	}
	float x = gq[re], y = gq[im];
	if (mode == 1) {
		float sa = a[re], sb = a[im], c = r[re], e = r[im];
		ga[re] += x * c + y * e;
		ga[im] += y * c - x * e;
		gr[re] += x * sa + y * sb;
		gr[im] += y * sa - x * sb;
	} else {
		float c = r[re], e = r[im], u = a[re], v = a[im];
		gr[re] += x * u + y * v;
		gr[im] += x * v - y * u;
		ga[re] += x * c - y * e;
		ga[im] += x * e + y * c;
	}
}

// row_dot: pos[i] = <q_i, x_i>.
__global__ void row_dot(int rows, int d, const float *q, const float *x, float *pos) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= rows) return;
	const float *a = q + (long long)i * d, *b = x + (long long)i * d;
	float s = 0;
	for (int k = 0; k < d; k++) s += a[k] * b[k];
	pos[i] = s;
}

#define TILE 16

// sgemm_batched: for each batch z, C_z = alpha·op(A_z)·op(B_z) + beta·C_z,
// row-major, op(A) M×K, op(B) K×N; ta/tb say whether A/B are stored
// transposed (K×M, N×K). Plain shared-memory tiling.
__global__ void sgemm_batched(int ta, int tb, int M, int N, int K, float alpha,
                              const float *A, int lda, long long sA,
                              const float *B, int ldb, long long sB, float beta,
                              float *C, int ldc, long long sC) {
	__shared__ float As[TILE][TILE + 1];
	__shared__ float Bs[TILE][TILE + 1];
	A += blockIdx.z * sA;
	B += blockIdx.z * sB;
	C += blockIdx.z * sC;
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	float acc = 0;
	for (int k0 = 0; k0 < K; k0 += TILE) {
		int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
		float av = 0, bv = 0;
		if (row < M && ka < K) av = ta ? A[(long long)ka * lda + row] : A[(long long)row * lda + ka];
		if (col < N && kb < K) bv = tb ? B[(long long)col * ldb + kb] : B[(long long)kb * ldb + col];
		As[threadIdx.y][threadIdx.x] = av;
		Bs[threadIdx.y][threadIdx.x] = bv;
		__syncthreads();
		for (int k = 0; k < TILE; k++) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
		__syncthreads();
	}
	if (row < M && col < N) {
		long long o = (long long)row * ldc + col;
		C[o] = beta == 0 ? alpha * acc : alpha * acc + beta * C[o];
	}
}

// softmax_loss turns each row of t (rows×m negative scores) into softmax
// weights over {pos_i} ∪ row, sets gp_i = w(pos_i) − 1 and adds the row's
// loss logsumexp − pos_i into *loss. One warp per row.
__global__ void softmax_loss(int rows, int m, const float *pos, float *t, float *gp, double *loss) {
	int w = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
	if (w >= rows) return;
	float *row = t + (long long)w * m;
	float p = pos[w];
	float mx = p;
	for (int j = lane; j < m; j += 32) mx = fmaxf(mx, row[j]);
	for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	float z = 0;
	for (int j = lane; j < m; j += 32) {
		float e = expf(row[j] - mx);
		row[j] = e;
		z += e;
	}
	for (int o = 16; o > 0; o /= 2) z += __shfl_xor_sync(0xffffffffu, z, o);
	float ep = expf(p - mx);
	z += ep;
	float inv = 1 / z;
	for (int j = lane; j < m; j += 32) row[j] *= inv;
	if (lane == 0) {
		gp[w] = ep * inv - 1;
		atomicAdd(loss, (double)mx + log((double)z) - (double)p);
	}
}

// pos_grad: gq_i += gp_i·x_i and gx_i += gp_i·q_i.
__global__ void pos_grad(int rows, int d, const float *gp, const float *q, const float *x, float *gq, float *gx) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (long long)rows * d) return;
	float g = gp[t / d];
	gq[t] += g * x[t];
	gx[t] += g * q[t];
}

// scatter_add adds each occurrence's gradient row g_i into the accumulator
// of its table (sel picks b over a when set) at rows[i], and lists each
// newly touched row once (flags, list, count per table) for adagrad_rows.
__global__ void scatter_add(const float *g, const int *rows, const int *sel, int count, int d,
                            float *accA, int *flagA, int *listA, int *countA,
                            float *accB, int *flagB, int *listB, int *countB) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= (long long)count * d) return;
	int i = (int)(t / d), k = (int)(t % d);
	int b = sel != 0 && sel[i];
	float *acc = b ? accB : accA;
	int r = rows[i];
	atomicAdd(acc + (long long)r * d + k, g[t]);
	if (k == 0) {
		int *flag = b ? flagB : flagA;
		if (atomicExch(flag + r, 1) == 0) {
			int *list = b ? listB : listA;
			int *cnt = b ? countB : countA;
			list[atomicAdd(cnt, 1)] = r;
		}
	}
}

// adagrad_rows applies one Adagrad step to every listed row with its
// accumulated gradient (state += g²; emb −= lr·g/(√state + eps)) and clears
// the accumulator and the row's flag. Threads past *count·d do nothing.
__global__ void adagrad_rows(float *emb, float *state, float *acc, int *flag, const int *list,
                             const int *count, int maxRows, int d, float lr, float eps) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int n = *count;
	if (n > maxRows) n = maxRows;
	if (t >= (long long)n * d) return;
	int j = (int)(t / d), k = (int)(t % d);
	long long o = (long long)list[j] * d + k;
	float g = acc[o];
	float s = state[o] + g * g;
	state[o] = s;
	emb[o] -= lr * g / (sqrtf(s) + eps);
	acc[o] = 0;
	if (k == 0) flag[list[j]] = 0;
}

} // extern "C"
