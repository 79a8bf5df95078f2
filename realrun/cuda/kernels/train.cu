// Training kernels of tierflow's CUDA engine: the same float32 math as the
// CPU engine's realrun/model (ChunkGrad, Adagrad), fused for the GPU.
//
// A "group" is g chunks trained together (the chunk step: one chunk; the
// batch step: a piece of a batch). A chunk has at most nc edges (its count
// is in its index block) sharing m negatives. Both corrupted sides of a
// chunk are stacked: row i of the chunk's 2nc query
// rows is edge i's destination-side query q1, row nc+i its source-side
// query q2, so that one product per group scores both sides against the
// shared negatives (Q·Nᵀ), and two more give the gradients (G·N, Gᵀ·Q).
// Matrices are row-major and batched over chunks; embedding tables are
// row-major rows×d with an Adagrad state table of the same shape.
//
// An index piece is a header (Piece: the tables its chunks train) and
// chunk blocks of L int32s: chunk c of the piece holds its edge count n
// (≤ nc; the edges past it are padding), then src[nc] dst[nc] rel[nc]
// neg[m] sel[m] (L = 1 + 3nc + 2m; sel 1: the negative is a row of the
// destination table). A group is chunks c0 … c0+g−1 of a piece. Since the
// tables and every count come from the piece, a chunk's launches take the
// same parameters whatever bucket and batch it belongs to: the engine
// captures them once per (piece slot, chunk) as a CUDA graph and replays
// it. Score functions (model): 0 Dot, 1 DistMult, 2 ComplEx.
//
// Compiled to PTX with NVRTC at build time (make ptx); the Go engine loads
// the PTX with the driver API. Every parameter is 4 or 8 bytes wide. The
// Go tests also compile this file for the CPU (kernels/cpu) and run it
// against the CPU engine's reference.

extern "C" {

// Acc is one table's side of a step: the gradient accumulator (rows×d,
// rule sum), the touched-row flags and list (rows), and, for rule each, the
// head of every row's list of occurrences (rows; −1 empty) and each
// occurrence slot's successor (next). The engine keeps three, for source,
// destination and relation rows, in device memory (accs).
struct Acc {
	float *acc;
	int *flag;
	int *list;
	int *head;
	int *next;
};

// Piece is an index piece's header: the source table (embeddings, then
// Adagrad state), the destination table, and same: they are one table.
struct Piece {
	float *embA, *stateA, *embB, *stateB;
	int same, pad;
};

// PIECE_INTS is the header's size in int32s (chunk blocks follow it).
#define PIECE_INTS 10

// block is chunk c of piece p.
__device__ const int *block(const int *p, int L, int c) { return p + PIECE_INTS + (long long)c * L; }

// touch lists row r of a the first time a step touches it.
__device__ void touch(const Acc *a, int *count, int r) {
	if (atomicExch(a->flag + r, 1) == 0) a->list[atomicAdd(count, 1)] = r;
}

// link adds occurrence slot s of row r to the row's list (rule each).
__device__ void link(const Acc *a, int r, int s) { a->next[s] = atomicExch(a->head + r, s); }

// chunk_prep builds a group's queries and positive scores and gathers its
// negatives. One warp per item: items [0, g·nc) are edges (chunk j = w/nc,
// edge i = w%nc), the next g·m negatives. Q is g×2nc×d: row i the
// destination-side query q1 of edge i (s, s∘r or s·r), row nc+i its
// source-side query q2 (d, d∘r, or (Re, −Im) of r·conj(d)); pos holds the
// matching positive scores <q1, d_i> and <q2, s_i>. Padding edges (i past
// the chunk's count) get zero rows and scores, which the products and the
// softmax then ignore. N is g×m×d. With reset, thread 0 first clears the
// three touched-row counts (a new step begins).
__global__ void chunk_prep(int model, int g, int nc, int m, int d, int L, const int *piece, int c0,
                           const float *rel, float *Q, float *N, float *pos, int *counts, int reset) {
	long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	int lane = threadIdx.x % 32;
	if (reset && blockIdx.x == 0 && threadIdx.x < 3) counts[threadIdx.x] = 0;
	long long edges = (long long)g * nc;
	if (w >= edges + (long long)g * m) return;
	const Piece *P = (const Piece *)piece;
	if (w >= edges) {
		long long v = w - edges;
		int j = (int)(v / m), k = (int)(v % m);
		const int *ci = block(piece, L, c0 + j) + 1 + 3 * nc;
		const float *src = (ci[m + k] ? P->embB : P->embA) + (long long)ci[k] * d;
		float *out = N + v * d;
		for (int x = lane; x < d; x += 32) out[x] = src[x];
		return;
	}
	int j = (int)(w / nc), i = (int)(w % nc);
	const int *ci = block(piece, L, c0 + j);
	float *q1 = Q + ((long long)j * 2 * nc + i) * d, *q2 = q1 + (long long)nc * d;
	float *p = pos + (long long)j * 2 * nc + i;
	if (i >= ci[0]) {
		for (int x = lane; x < d; x += 32) q1[x] = q2[x] = 0;
		if (lane == 0) p[0] = p[nc] = 0;
		return;
	}
	ci++;
	const float *s = P->embA + (long long)ci[i] * d, *t = P->embB + (long long)ci[nc + i] * d;
	const float *r = model == 0 ? s : rel + (long long)ci[2 * nc + i] * d; // Dot reads no relation
	float p1 = 0, p2 = 0;
	if (model == 2) {
		int h = d / 2;
		for (int x = lane; x < h; x += 32) {
			float sa = s[x], sb = s[x + h], c = r[x], e = r[x + h], u = t[x], v = t[x + h];
			float ar = sa * c - sb * e, ai = sa * e + sb * c; // q1 = s·r
			float br = c * u + e * v, bi = c * v - e * u;     // q2 = (Re, −Im) of r·conj(d)
			q1[x] = ar;
			q1[x + h] = ai;
			q2[x] = br;
			q2[x + h] = bi;
			p1 += ar * u + ai * v;
			p2 += br * sa + bi * sb;
		}
	} else {
		for (int x = lane; x < d; x += 32) {
			float sv = s[x], tv = t[x], rv = model == 1 ? r[x] : 1.0f;
			float a = sv * rv, b = tv * rv;
			q1[x] = a;
			q2[x] = b;
			p1 += a * tv;
			p2 += b * sv;
		}
	}
	for (int o = 16; o > 0; o /= 2) {
		p1 += __shfl_xor_sync(0xffffffffu, p1, o);
		p2 += __shfl_xor_sync(0xffffffffu, p2, o);
	}
	if (lane == 0) {
		p[0] = p1;
		p[nc] = p2;
	}
}

#define TILE 16

// sgemm_batched: for each batch z, C_z = alpha·op(A_z)·op(B_z) + beta·C_z,
// row-major, op(A) M×K, op(B) K×N; ta/tb say whether A/B are stored
// transposed (K×M, N×K). Plain shared-memory tiling (the engine's products
// when no cuBLAS loads).
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

// chunk_softmax turns each row of T (a group's g×2nc×m negative scores)
// into softmax weights over {pos} ∪ row, sets gp = w(pos) − 1 and adds the
// row's loss logsumexp − pos into loss[row % 32] (32 partial sums: fewer
// atomics on one address). Padding rows become zeros (gp 0, no loss). One
// warp per row.
__global__ void chunk_softmax(int g, int nc, int m, int L, const int *piece, int c0, const float *pos, float *T, float *gp,
                              double *loss) {
	long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	int lane = threadIdx.x % 32;
	if (w >= (long long)g * 2 * nc) return;
	int j = (int)(w / (2 * nc)), i = (int)(w % (2 * nc));
	if (i >= nc) i -= nc;
	float *row = T + w * m;
	if (i >= block(piece, L, c0 + j)[0]) {
		for (int x = lane; x < m; x += 32) row[x] = 0;
		if (lane == 0) gp[w] = 0;
		return;
	}
	float p = pos[w];
	float mx = p;
	for (int x = lane; x < m; x += 32) mx = fmaxf(mx, row[x]);
	for (int o = 16; o > 0; o /= 2) mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
	float z = 0;
	for (int x = lane; x < m; x += 32) {
		float e = expf(row[x] - mx);
		row[x] = e;
		z += e;
	}
	for (int o = 16; o > 0; o /= 2) z += __shfl_xor_sync(0xffffffffu, z, o);
	float ep = expf(p - mx);
	z += ep;
	float inv = 1 / z;
	for (int x = lane; x < m; x += 32) row[x] *= inv;
	if (lane == 0) {
		gp[w] = ep * inv - 1;
		atomicAdd(loss + w % 32, (double)mx + log((double)z) - (double)p);
	}
}

// chunk_back finishes a group's gradients and hands them to the tables,
// one warp per item (as chunk_prep). For edge i: each side's positive term
// (gq += gp·x, gx += gp·q), then each query's gradient back to s, r and d
// (model.ChunkGrad's order of terms aside). For a negative: its row of gN.
//
// Rule 0 (sum): every gradient row is added into its table's accumulator
// and each row touched for the first time is listed (touch). Rule 1 (each;
// the chunk step, g = 1): the gradients stay one row per occurrence — the
// source's in place of q1's row of gQ, the destination's in place of q2's,
// the relation's in gR, a negative's in gN — and each occurrence is linked
// into its row's list (slot i: edge i's source; nc+i its destination;
// 2nc+k negative k; relations slot i), for adagrad_each.
//
// Tables: accs[0] takes sources and negatives with sel 0, accs[1]
// destinations and negatives with sel 1 (accs[0] for all when same: the
// bucket's two partitions are one), accs[2] relations; counts[t] is the
// number of rows listed in accs[t].
__global__ void chunk_back(int model, int rule, int g, int nc, int m, int d, int L, const int *piece, int c0,
                           const float *rel, float *gQ, const float *gN, const float *gp, float *gR, const Acc *accs,
                           int *counts) {
	long long w = ((long long)blockIdx.x * blockDim.x + threadIdx.x) / 32;
	int lane = threadIdx.x % 32;
	long long edges = (long long)g * nc;
	if (w >= edges + (long long)g * m) return;
	const Piece *P = (const Piece *)piece;
	int same = P->same;
	const Acc *A = accs, *B = same ? accs : accs + 1, *R = accs + 2;
	int *cA = counts, *cB = same ? counts : counts + 1, *cR = counts + 2;
	if (w >= edges) {
		long long v = w - edges;
		int j = (int)(v / m), k = (int)(v % m);
		const int *ci = block(piece, L, c0 + j) + 1 + 3 * nc;
		int row = ci[k];
		const Acc *T = ci[m + k] ? B : A;
		int *cT = ci[m + k] ? cB : cA;
		if (rule == 0) {
			const float *gn = gN + v * d;
			float *acc = T->acc + (long long)row * d;
			for (int x = lane; x < d; x += 32) atomicAdd(acc + x, gn[x]);
		}
		if (lane == 0) {
			touch(T, cT, row);
			if (rule == 1) link(T, row, 2 * nc + k);
		}
		return;
	}
	int j = (int)(w / nc), i = (int)(w % nc);
	const int *ci = block(piece, L, c0 + j);
	if (i >= ci[0]) return;
	ci++;
	int sr = ci[i], dr = ci[nc + i], rr = ci[2 * nc + i];
	const float *s = P->embA + (long long)sr * d, *t = P->embB + (long long)dr * d;
	const float *r = model == 0 ? s : rel + (long long)rr * d;
	long long q = (long long)j * 2 * nc + i;
	float *g1 = gQ + q * d, *g2 = g1 + (long long)nc * d;
	float *grr = gR + ((long long)j * nc + i) * d;
	float gp1 = gp[q], gp2 = gp[q + nc];
	float *accS = A->acc + (long long)sr * d, *accT = B->acc + (long long)dr * d;
	float *accR = model == 0 ? accS : R->acc + (long long)rr * d; // Dot has no relation table
	if (model == 2) {
		int h = d / 2;
		for (int x = lane; x < h; x += 32) {
			float sa = s[x], sb = s[x + h], c = r[x], e = r[x + h], u = t[x], v = t[x + h];
			float ar = sa * c - sb * e, ai = sa * e + sb * c; // q1
			float br = c * u + e * v, bi = c * v - e * u;     // q2
			float x1 = g1[x] + gp1 * u, y1 = g1[x + h] + gp1 * v;   // dL/dq1
			float x2 = g2[x] + gp2 * sa, y2 = g2[x + h] + gp2 * sb; // dL/dq2
			float gsr = gp2 * br + x1 * c + y1 * e, gsi = gp2 * bi + y1 * c - x1 * e;
			float gtr = gp1 * ar + x2 * c - y2 * e, gti = gp1 * ai + x2 * e + y2 * c;
			float grr_ = x1 * sa + y1 * sb + x2 * u + y2 * v, gri = y1 * sa - x1 * sb + x2 * v - y2 * u;
			if (rule == 0) {
				atomicAdd(accS + x, gsr);
				atomicAdd(accS + x + h, gsi);
				atomicAdd(accT + x, gtr);
				atomicAdd(accT + x + h, gti);
				atomicAdd(accR + x, grr_);
				atomicAdd(accR + x + h, gri);
			} else {
				g1[x] = gsr;
				g1[x + h] = gsi;
				g2[x] = gtr;
				g2[x + h] = gti;
				grr[x] = grr_;
				grr[x + h] = gri;
			}
		}
	} else {
		for (int x = lane; x < d; x += 32) {
			float sv = s[x], tv = t[x], rv = model == 1 ? r[x] : 1.0f;
			float gq1 = g1[x] + gp1 * tv, gq2 = g2[x] + gp2 * sv;
			float gs = gp2 * tv * rv + gq1 * rv; // q2 = d∘r is the source's positive partner
			float gt = gp1 * sv * rv + gq2 * rv; // q1 = s∘r the destination's
			if (rule == 0) {
				atomicAdd(accS + x, gs);
				atomicAdd(accT + x, gt);
				if (model == 1) atomicAdd(accR + x, gq1 * sv + gq2 * tv);
			} else {
				g1[x] = gs;
				g2[x] = gt;
				if (model == 1) grr[x] = gq1 * sv + gq2 * tv;
			}
		}
	}
	if (lane == 0) {
		touch(A, cA, sr);
		touch(B, cB, dr);
		if (model != 0) touch(R, cR, rr);
		if (rule == 1) {
			link(A, sr, i);
			link(B, dr, nc + i);
			if (model != 0) link(R, rr, i);
		}
	}
}

// adagrad_sum applies one Adagrad step to every row listed in table
// blockIdx.y (0 the piece's sources, 1 its destinations — none when same —,
// 2 relations) with its accumulated gradient (state += g²; emb −= lr·g/(√state
// + eps)), then clears the row's accumulator and flag. Thread t of a table
// handles element t%d of listed row t/d; threads past min(count, maxRows)·d
// do nothing.
__global__ void adagrad_sum(const int *piece, float *embR, float *stateR, const Acc *accs, const int *counts,
                            int maxRows, int d, float lr, float eps) {
	int tb = blockIdx.y; // with same, table 1 lists nothing (chunk_back puts every row in table 0)
	const Piece *P = (const Piece *)piece;
	float *emb = tb == 0 ? P->embA : tb == 1 ? P->embB : embR;
	float *state = tb == 0 ? P->stateA : tb == 1 ? P->stateB : stateR;
	const Acc *a = accs + tb;
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int n = counts[tb];
	if (n > maxRows) n = maxRows;
	if (t >= (long long)n * d) return;
	int j = (int)(t / d), k = (int)(t % d);
	int r = a->list[j];
	long long o = (long long)r * d + k;
	float g = a->acc[o];
	float s = state[o] + g * g;
	state[o] = s;
	emb[o] -= lr * g / (sqrtf(s) + eps);
	a->acc[o] = 0;
	if (k == 0) a->flag[r] = 0;
}

// EACH_CAP is the number of a row's occurrences adagrad_each sorts in
// shared memory; a row with more is stepped in order by repeated scans of
// its list (correct, slower).
#define EACH_CAP 1024

// adagrad_each steps every row listed in table blockIdx.y once per
// occurrence, with that occurrence's own gradient, in the CPU engine's
// order: edge by edge (an edge's source before its destination), then the
// negatives (relations: edge by edge). One block of 32 threads per listed
// row (blockIdx.x < min(count, maxRows)); the row's list is then emptied
// and its flag cleared. Gradient rows: slot s < 2nc is row s of gQ, slot
// 2nc+k row k of gN, relation slot i row i of gR (chunk_back, rule each).
__global__ void adagrad_each(const int *piece, float *embR, float *stateR, const Acc *accs, const int *counts,
                             int maxRows, int d, int nc, float lr, float eps, const float *gQ, const float *gN,
                             const float *gR) {
	__shared__ int slots[EACH_CAP];
	__shared__ int order[EACH_CAP];
	__shared__ int total, cur;
	int tb = blockIdx.y; // with same, table 1 lists nothing
	int n = counts[tb];
	if (n > maxRows) n = maxRows;
	if ((int)blockIdx.x >= n) return;
	const Piece *P = (const Piece *)piece;
	float *emb = tb == 0 ? P->embA : tb == 1 ? P->embB : embR;
	float *state = tb == 0 ? P->stateA : tb == 1 ? P->stateB : stateR;
	const Acc *a = accs + tb;
	int lane = threadIdx.x;
	int r = a->list[blockIdx.x];
	if (lane == 0) {
		int c = 0;
		for (int s = a->head[r]; s >= 0; s = a->next[s]) {
			if (c < EACH_CAP) slots[c] = s;
			c++;
		}
		total = c;
	}
	__syncthreads();
	int c = total;
	// key: the occurrence's place in the CPU engine's order.
#define EACH_KEY(s) (tb == 2 ? (s) : (s) < nc ? 2 * (s) : (s) < 2 * nc ? 2 * ((s) - nc) + 1 : (s))
	if (c <= EACH_CAP) {
		for (int e = lane; e < c; e += 32) {
			int ke = EACH_KEY(slots[e]), rank = 0;
			for (int f = 0; f < c; f++) rank += EACH_KEY(slots[f]) < ke;
			order[rank] = slots[e];
		}
	}
	__syncthreads();
	int last = -1;
	for (int q = 0; q < c; q++) {
		int s;
		if (c <= EACH_CAP) {
			s = order[q];
		} else {
			if (lane == 0) { // the occurrence with the least key after last
				int best = -1, bk = 0;
				for (int x = a->head[r]; x >= 0; x = a->next[x]) {
					int kx = EACH_KEY(x);
					if (kx > last && (best < 0 || kx < bk)) best = x, bk = kx;
				}
				cur = best;
			}
			__syncthreads();
			s = cur;
			last = EACH_KEY(s);
			__syncthreads();
		}
		const float *g = tb == 2 ? gR + (long long)s * d : s < 2 * nc ? gQ + (long long)s * d : gN + (long long)(s - 2 * nc) * d;
		for (int k = lane; k < d; k += 32) {
			long long o = (long long)r * d + k;
			float gk = g[k];
			float st = state[o] + gk * gk;
			state[o] = st;
			emb[o] -= lr * gk / (sqrtf(st) + eps);
		}
	}
#undef EACH_KEY
	__syncthreads();
	if (lane == 0) {
		a->head[r] = -1;
		a->flag[r] = 0;
	}
}

} // extern "C"
