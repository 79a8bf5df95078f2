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
// it. Score functions (model): an operator, a comparator and whether it is
// a PBG pair, packed (MODEL_OP, MODEL_CMP, MODEL_PAIR): 0 Dot, 1
// DistMult, 2 ComplEx keep their fused paths; every other model (TransE,
// RotatE, PBG's operator+comparator pairs) and every model with a
// regulariser goes through the general ones (opForward, cmpReduce,
// rowLoss, edgeBack). Relation rows are relWidth(model, d) floats. The
// negatives are scored by the product Q·Nᵀ (dot; cos, l2 and squared_l2
// from it and the rows' norms) or pairwise (l1, modulus_l1: pair_scores,
// pair_grads); the losses are softmax, ranking and logistic (rowLoss).
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

// Score functions. A model code packs an operator (bits 0–2), a
// comparator (bits 3–5) and whether the model is a PBG pair (bit 6: the
// relation row is [g | h], g for sources, h for destinations; a named
// model has one row that both sides use, the source side through the
// operator's adjoint). Dot, DistMult and ComplEx are 0, 1 and 2.
#define OP_NONE 0
#define OP_DIAG 1
#define OP_COMPLEX 2
#define OP_TRANS 3
#define OP_LINEAR 4
#define OP_AFFINE 5
#define OP_ROTATE 6
#define CMP_DOT 0
#define CMP_COS 1
#define CMP_L2 2
#define CMP_SQL2 3
#define CMP_L1 4
#define CMP_MOD 5
#define MODEL_OP(m) ((m) & 7)
#define MODEL_CMP(m) (((m) >> 3) & 7)
#define MODEL_PAIR(m) (((m) >> 6) & 1)
// The three models of the fused paths (no regularisation): Dot, DistMult
// and ComplEx with one relation row and the dot comparator.
#define LEGACY(m, reg) ((m) <= 2 && (reg) == 0)
// Comparators scored from the product Q·Nᵀ and row norms.
#define NORMED(c) ((c) == CMP_COS || (c) == CMP_L2 || (c) == CMP_SQL2)
// Comparators scored pairwise (pair_scores, pair_grads).
#define PAIRWISE(c) ((c) == CMP_L1 || (c) == CMP_MOD)
// TINY is PBG's clamp: the least squared distance l2 and modulus_l1 take
// the root of, and the least norm cos divides by. Below it the gradient
// through the clamped quantity is 0 (as PBG's clamp_min's).
#define TINY 1e-30f

// opWidth is the floats of one operator at dimension d.
__device__ long long opWidth(int op, int d) {
	switch (op) {
	case OP_DIAG:
	case OP_TRANS:
	case OP_COMPLEX: return d;
	case OP_LINEAR: return (long long)d * d;
	case OP_AFFINE: return (long long)d * d + d;
	case OP_ROTATE: return d / 2;
	}
	return 0;
}

// relWidth is the floats of one relation row of model m.
__device__ long long relWidth(int m, int d) { return (MODEL_PAIR(m) ? 2 : 1) * opWidth(MODEL_OP(m), d); }

// complexOp reports whether op pairs coordinates c and c + d/2.
__device__ bool complexOp(int op) { return op == OP_COMPLEX || op == OP_ROTATE; }

// warp_sum is the sum of v over the warp's 32 lanes (every lane gets it).
__device__ float warp_sum(float v) {
	for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
	return v;
}

__device__ float signf(float v) { return (float)((v > 0) - (v < 0)); }

// relCoef is the complex coefficient that coordinate c (of h) of a
// complex operator multiplies by: complex_diagonal's r_c + i·r_{c+h}, or
// rotate's e^{iθ_c}; conjugated for the adjoint (adj).
__device__ void relCoef(int op, int adj, const float *r, int c, int h, float *cr, float *ci) {
	if (op == OP_COMPLEX) {
		*cr = r[c];
		*ci = r[c + h];
	} else {
		*cr = cosf(r[c]);
		*ci = sinf(r[c]);
	}
	if (adj) *ci = -*ci;
}

// opForward writes q = op(x) with the operator's parameters r (adj: the
// named models' adjoint for the source side: x − r, conj(r)·x, x·e^{−iθ}),
// lanes over q's elements (complex operators: over coordinate pairs).
__device__ void opForward(int op, int adj, int d, int lane, const float *x, const float *r, float *q) {
	int h = d / 2;
	switch (op) {
	case OP_NONE:
		for (int j = lane; j < d; j += 32) q[j] = x[j];
		break;
	case OP_DIAG:
		for (int j = lane; j < d; j += 32) q[j] = x[j] * r[j];
		break;
	case OP_TRANS:
		for (int j = lane; j < d; j += 32) q[j] = adj ? x[j] - r[j] : x[j] + r[j];
		break;
	case OP_LINEAR:
	case OP_AFFINE:
		for (int j = lane; j < d; j += 32) {
			const float *a = r + (long long)j * d;
			float v = op == OP_AFFINE ? r[(long long)d * d + j] : 0.0f;
			for (int k = 0; k < d; k++) v += a[k] * x[k];
			q[j] = v;
		}
		break;
	case OP_COMPLEX:
	case OP_ROTATE:
		for (int c = lane; c < h; c += 32) {
			float cr, ci;
			relCoef(op, adj, r, c, h, &cr, &ci);
			float xr = x[c], xi = x[c + h];
			q[c] = cr * xr - ci * xi;
			q[c + h] = cr * xi + ci * xr;
		}
		break;
	}
}

// cmpSums are the warp-reduced sums a comparator's positive score and its
// gradient need: <q, x>, ‖q‖², ‖x‖², and the distance sum (l2 and
// squared_l2: ‖q − x‖²; l1: Σ|q − x|; modulus_l1: Σ_c |q_c − x_c|).
struct cmpSums {
	float dot, qq, xx, dist;
};

__device__ cmpSums cmpReduce(int cmp, int d, int lane, const float *q, const float *x) {
	cmpSums s = {0, 0, 0, 0};
	if (cmp == CMP_MOD) {
		int h = d / 2;
		for (int c = lane; c < h; c += 32) {
			float a = q[c] - x[c], b = q[c + h] - x[c + h];
			s.dist += sqrtf(fmaxf(a * a + b * b, TINY));
		}
	} else {
		for (int j = lane; j < d; j += 32) {
			float a = q[j], b = x[j], e = a - b;
			s.dot += a * b;
			s.qq += a * a;
			s.xx += b * b;
			s.dist += cmp == CMP_L1 ? fabsf(e) : e * e;
		}
	}
	s.dot = warp_sum(s.dot);
	s.qq = warp_sum(s.qq);
	s.xx = warp_sum(s.xx);
	s.dist = warp_sum(s.dist);
	return s;
}

// invNorm is 1/max(‖v‖, 1e-30) from ‖v‖².
__device__ float invNorm(float sq) { return 1.0f / fmaxf(sqrtf(sq), TINY); }

// cmpScore is C(q, x) from its sums.
__device__ float cmpScore(int cmp, cmpSums s) {
	switch (cmp) {
	case CMP_COS: return s.dot * invNorm(s.qq) * invNorm(s.xx);
	case CMP_L2: return -sqrtf(fmaxf(s.dist, TINY));
	case CMP_SQL2:
	case CMP_L1:
	case CMP_MOD: return -s.dist;
	}
	return s.dot;
}

// cmpGrad gives element j's ∂C/∂q (gq) and ∂C/∂x (gx) for the comparators
// that are elementwise given their sums (all but modulus_l1).
__device__ void cmpGrad(int cmp, cmpSums s, float q, float x, float *gq, float *gx) {
	switch (cmp) {
	case CMP_COS: {
		float iq = invNorm(s.qq), ix = invNorm(s.xx), c = s.dot * iq * ix;
		*gq = x * iq * ix - (sqrtf(s.qq) > TINY ? c * q * iq * iq : 0.0f); // a clamped norm passes no gradient
		*gx = q * iq * ix - (sqrtf(s.xx) > TINY ? c * x * ix * ix : 0.0f);
		return;
	}
	case CMP_L2: {
		float inv = s.dist > TINY ? 1.0f / sqrtf(s.dist) : 0.0f;
		*gq = -(q - x) * inv;
		*gx = (q - x) * inv;
		return;
	}
	case CMP_SQL2:
		*gq = -2 * (q - x);
		*gx = 2 * (q - x);
		return;
	case CMP_L1:
		*gq = -signf(q - x);
		*gx = signf(q - x);
		return;
	}
	*gq = x;
	*gx = q;
}

// normSq is the warp-reduced ‖v‖² of a row of d.
__device__ float normSq(int d, int lane, const float *v) {
	float s = 0;
	for (int j = lane; j < d; j += 32) s += v[j] * v[j];
	return warp_sum(s);
}

// chunk_prep builds a group's queries and positive scores and gathers its
// negatives. One warp per item: items [0, g·nc) are edges (chunk j = w/nc,
// edge i = w%nc), the next g·m negatives. Q is g×2nc×d: row i the
// destination-side query q1 of edge i (s, s∘r or s·r), row nc+i its
// source-side query q2 (d, d∘r, or (Re, −Im) of r·conj(d)); pos holds the
// matching positive scores <q1, d_i> and <q2, s_i>. Every other model:
// q1 = G(s; r), q2 = H(d; r) (opForward: a named model's row and its
// adjoint, or a pair's g and h halves) and pos its comparator's C(q1, d_i),
// C(q2, s_i); for the normed comparators qn holds ‖q‖² of each row, nn
// ‖n‖² of each negative, and bn (the negatives' coefficients, which
// chunk_softmax sums) is cleared. Padding edges (i past
// the chunk's count) get zero rows and scores, which the products and the
// softmax then ignore. N is g×m×d. With reset, thread 0 first clears the
// three touched-row counts (a new step begins).
__global__ void chunk_prep(int model, int g, int nc, int m, int d, int L, const int *piece, int c0,
                           const float *rel, float *Q, float *N, float *pos, float *qn, float *nn, float *bn,
                           int *counts, int reset) {
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
		if (NORMED(MODEL_CMP(model))) { // the negative's ‖n‖², and its column sum of the softmax's b cleared
			float sq = normSq(d, lane, src);
			if (lane == 0) {
				nn[v] = sq;
				bn[v] = 0;
			}
		}
		return;
	}
	int j = (int)(w / nc), i = (int)(w % nc);
	const int *ci = block(piece, L, c0 + j);
	float *q1 = Q + ((long long)j * 2 * nc + i) * d, *q2 = q1 + (long long)nc * d;
	float *p = pos + (long long)j * 2 * nc + i;
	if (i >= ci[0]) {
		for (int x = lane; x < d; x += 32) q1[x] = q2[x] = 0;
		if (lane == 0) p[0] = p[nc] = 0;
		if (lane == 0 && NORMED(MODEL_CMP(model))) qn[p - pos] = qn[p - pos + nc] = 0;
		return;
	}
	ci++;
	const float *s = P->embA + (long long)ci[i] * d, *t = P->embB + (long long)ci[nc + i] * d;
	if (model > 2) { // every other model: the operator, then the comparator
		int op = MODEL_OP(model), cmp = MODEL_CMP(model);
		const float *rg = op == OP_NONE ? s : rel + (long long)ci[2 * nc + i] * relWidth(model, d);
		const float *rh = MODEL_PAIR(model) ? rg + opWidth(op, d) : rg;
		opForward(op, 0, d, lane, s, rg, q1);
		opForward(op, !MODEL_PAIR(model), d, lane, t, rh, q2);
		__syncwarp();
		cmpSums a = cmpReduce(cmp, d, lane, q1, t), b = cmpReduce(cmp, d, lane, q2, s);
		if (lane == 0) {
			p[0] = cmpScore(cmp, a);
			p[nc] = cmpScore(cmp, b);
			if (NORMED(cmp)) {
				qn[p - pos] = a.qq;
				qn[p - pos + nc] = b.qq;
			}
		}
		return;
	}
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

// The losses (workload.Loss).
#define LOSS_SOFTMAX 0
#define LOSS_RANKING 1
#define LOSS_LOGISTIC 2

__device__ float softplusf(float x) { return fmaxf(x, 0.0f) + log1pf(expf(-fabsf(x))); }
__device__ float sigmoidf(float x) { return 1.0f / (1.0f + expf(-x)); }

__device__ float warp_max(float v) {
	for (int o = 16; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
	return v;
}

// rowLoss is chunk_softmax for every loss and comparator (one warp, one
// query row of positive score p and m negative entries in row): the
// normed comparators' scores from the product's dots (qq = ‖q‖², nn the
// negatives' ‖n‖²), the loss (softmax; ranking Σ max(0, margin − p + n_k);
// logistic softplus(−(p + γ)) + Σ w_k softplus(n_k + γ), γ = margin;
// w_k = 1/m, or with adv = α > 0 the row's softmax of α·n_k, held
// constant, times m for ranking), dL/dp into gp, and dL/dn_k into row,
// turned into what the products take: G' (cos: G/(‖q‖‖n‖); l2: G/dist;
// squared_l2: 2G) with the row's coefficient of q in aq and each column's
// coefficient of n added into bn (gQ = G'·N + aq·Q, gN = G'ᵀ·Q + bn·N).
__device__ void rowLoss(int lossCode, int cmp, float margin, float adv, int m, int lane, float p, float *row, float qq,
                        const float *nn, float *bn, float *gp, float *aq, double *loss) {
	float iq = invNorm(qq), iq2 = sqrtf(qq) > TINY ? iq * iq : 0.0f; // a clamped norm passes no gradient
	float clamped = sqrtf(TINY);                                     // the l2 distance of a clamped pair
	if (NORMED(cmp)) {
		for (int x = lane; x < m; x += 32) {
			float t = row[x];
			if (cmp == CMP_COS) {
				row[x] = t * iq * invNorm(nn[x]);
			} else {
				float D = qq + nn[x] - 2 * t;
				row[x] = cmp == CMP_L2 ? -sqrtf(fmaxf(D, TINY)) : -D;
			}
		}
	}
	// The weights' shift and sum: softmax over {p} ∪ row, or α·row.
	float mx = -3.4e38f, z = 0;
	bool adversarial = adv > 0 && lossCode != LOSS_SOFTMAX;
	if (lossCode == LOSS_SOFTMAX || adversarial) {
		float a = lossCode == LOSS_SOFTMAX ? 1.0f : adv;
		for (int x = lane; x < m; x += 32) mx = fmaxf(mx, a * row[x]);
		mx = warp_max(mx);
		if (lossCode == LOSS_SOFTMAX) mx = fmaxf(mx, p);
		for (int x = lane; x < m; x += 32) z += expf(a * row[x] - mx);
		z = warp_sum(z);
		if (lossCode == LOSS_SOFTMAX) z += expf(p - mx);
	}
	float l = 0, gsum = 0, ap = 0;
	for (int x = lane; x < m; x += 32) {
		float n = row[x], G;
		switch (lossCode) {
		case LOSS_RANKING: {
			float f = adversarial ? expf(adv * n - mx) / z * m : 1.0f, v = margin - p + n;
			G = v > 0 ? f : 0.0f;
			l += v > 0 ? f * v : 0.0f;
			break;
		}
		case LOSS_LOGISTIC: {
			float f = adversarial ? expf(adv * n - mx) / z : 1.0f / m;
			G = f * sigmoidf(n + margin);
			l += f * softplusf(n + margin);
			break;
		}
		default:
			G = expf(n - mx) / z;
		}
		gsum += G;
		float Gp = G;
		if (cmp == CMP_COS) {
			float in = invNorm(nn[x]);
			Gp = G * iq * in;
			ap -= G * n * iq2;
			if (sqrtf(nn[x]) > TINY) atomicAdd(bn + x, -G * n * in * in);
		} else if (cmp == CMP_L2) {
			Gp = -n > clamped ? G / -n : 0.0f;
			ap -= Gp;
			atomicAdd(bn + x, -Gp);
		} else if (cmp == CMP_SQL2) {
			Gp = 2 * G;
			ap -= Gp;
			atomicAdd(bn + x, -Gp);
		}
		row[x] = Gp;
	}
	l = warp_sum(l);
	gsum = warp_sum(gsum);
	ap = warp_sum(ap);
	if (lane == 0) {
		double rl = l;
		float g;
		switch (lossCode) {
		case LOSS_RANKING: g = -gsum; break;
		case LOSS_LOGISTIC:
			g = -sigmoidf(-(p + margin));
			rl += softplusf(-(p + margin));
			break;
		default:
			g = expf(p - mx) / z - 1;
			rl = (double)mx + log((double)z) - (double)p;
		}
		*gp = g;
		*aq = ap;
		atomicAdd(loss, rl);
	}
}

// pair_scores scores a group's stacked queries against its negatives by
// a comparator the product cannot give: T_z = −Σ|q − n| (l1) or
// −Σ_c |q_c − n_c| (modulus_l1, complex c = (c, c + d/2)), for each chunk
// z = blockIdx.z: rows×m scores of Q_z (rows×d) and N_z (m×d). Tiled as
// sgemm_batched (16×16 blocks).
__global__ void pair_scores(int cmp, int rows, int m, int d, const float *Q, const float *N, float *T) {
	__shared__ float Qr[TILE][TILE + 1], Qi[TILE][TILE + 1];
	__shared__ float Nr[TILE][TILE + 1], Ni[TILE][TILE + 1];
	Q += (long long)blockIdx.z * rows * d;
	N += (long long)blockIdx.z * m * d;
	T += (long long)blockIdx.z * rows * m;
	int mod = cmp == CMP_MOD, h = d / 2, K = mod ? h : d;
	int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
	int nrow = blockIdx.x * TILE + threadIdx.y; // the negative this thread loads
	float acc = 0;
	for (int k0 = 0; k0 < K; k0 += TILE) {
		int c = k0 + threadIdx.x;
		bool in = c < K;
		Qr[threadIdx.y][threadIdx.x] = row < rows && in ? Q[(long long)row * d + c] : 0;
		Qi[threadIdx.y][threadIdx.x] = mod && row < rows && in ? Q[(long long)row * d + c + h] : 0;
		Nr[threadIdx.y][threadIdx.x] = nrow < m && in ? N[(long long)nrow * d + c] : 0;
		Ni[threadIdx.y][threadIdx.x] = mod && nrow < m && in ? N[(long long)nrow * d + c + h] : 0;
		__syncthreads();
		int kn = K - k0 < TILE ? K - k0 : TILE;
		for (int k = 0; k < kn; k++) {
			float a = Qr[threadIdx.y][k] - Nr[threadIdx.x][k];
			if (mod) {
				float b = Qi[threadIdx.y][k] - Ni[threadIdx.x][k];
				acc += sqrtf(fmaxf(a * a + b * b, TINY));
			} else {
				acc += fabsf(a);
			}
		}
		__syncthreads();
	}
	if (row < rows && col < m) T[(long long)row * m + col] = -acc;
}

// pair_grads is the backward of pair_scores, G_z (rows×m, dL/dT) given:
// items [0, g·rows·K) are gQ's elements (gQ_i = Σ_k G_ik ∂T_ik/∂q_i),
// the next g·m·K gN's (gN_k = Σ_i G_ik ∂T_ik/∂n_k), K = d (l1: ∂T/∂q =
// −sign(q − n)) or d/2 (modulus_l1: each complex coordinate's pair,
// ∂T/∂q = −(q − n)/|q − n| with max(·, 1e-30) inside the root). One thread
// an item; gQ and gN are overwritten.
__global__ void pair_grads(int cmp, int g, int rows, int m, int d, const float *Q, const float *N, const float *G,
                           float *gQ, float *gN) {
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int mod = cmp == CMP_MOD, h = d / 2, K = mod ? h : d;
	long long nq = (long long)g * rows * K, nn = (long long)g * m * K;
	if (t >= nq + nn) return;
	bool qside = t < nq;
	long long u = qside ? t : t - nq;
	int per = qside ? rows : m;
	int z = (int)(u / ((long long)per * K)), e = (int)(u / K % per), c = (int)(u % K);
	const float *Qz = Q + (long long)z * rows * d, *Nz = N + (long long)z * m * d, *Gz = G + (long long)z * rows * m;
	float sr = 0, si = 0;
	int other = qside ? m : rows;
	for (int o = 0; o < other; o++) {
		int i = qside ? e : o, k = qside ? o : e;
		float Gik = Gz[(long long)i * m + k];
		if (Gik == 0) continue;
		const float *q = Qz + (long long)i * d, *n = Nz + (long long)k * d;
		float a = q[c] - n[c];
		if (mod) {
			float b = q[c + h] - n[c + h], D = a * a + b * b, inv = D > TINY ? 1.0f / sqrtf(D) : 0.0f;
			sr += Gik * a * inv;
			si += Gik * b * inv;
		} else {
			sr += Gik * signf(a);
		}
	}
	float sign = qside ? -1.0f : 1.0f;
	float *out = qside ? gQ + ((long long)z * rows + e) * d : gN + ((long long)z * m + e) * d;
	out[c] = sign * sr;
	if (mod) out[c + h] = sign * si;
}

// chunk_softmax turns each row of T (a group's g×2nc×m negative scores)
// into softmax weights over {pos} ∪ row, sets gp = w(pos) − 1 and adds the
// row's loss logsumexp − pos into loss[row % 32] (32 partial sums: fewer
// atomics on one address). Padding rows become zeros (gp 0, no loss). One
// warp per row. With another loss (lossCode) or a normed comparator (T
// then holds the product's dots) the row goes through rowLoss.
__global__ void chunk_softmax(int g, int nc, int m, int L, const int *piece, int c0, const float *pos, float *T, float *gp,
                              double *loss, int lossCode, int cmp, float margin, float adv, const float *qn,
                              const float *nn, float *aq, float *bn) {
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
	if (lossCode != LOSS_SOFTMAX || NORMED(cmp)) {
		rowLoss(lossCode, cmp, margin, adv, m, lane, pos[w], row, NORMED(cmp) ? qn[w] : 0.0f, nn + (long long)j * m,
		        bn + (long long)j * m, gp + w, aq + w, loss + w % 32);
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

// sink adds v to a gradient: atomically into an accumulator (rule sum), or
// into the occurrence's own row (rule each; one lane per element).
__device__ void sink(int rule, float *p, float v) {
	if (rule == 0)
		atomicAdd(p, v);
	else
		*p += v;
}

// opBack takes the gradient gq of q = op(x) (opForward, same adj) back to
// x (added into gx, the occurrence's own row) and to the operator's
// parameters (sunk into gr; nil for OP_NONE).
__device__ void opBack(int op, int adj, int rule, int d, int lane, const float *x, const float *r, const float *gq,
                       float *gx, float *gr) {
	int h = d / 2;
	switch (op) {
	case OP_NONE:
		for (int j = lane; j < d; j += 32) gx[j] += gq[j];
		break;
	case OP_DIAG:
		for (int j = lane; j < d; j += 32) {
			gx[j] += gq[j] * r[j];
			sink(rule, gr + j, gq[j] * x[j]);
		}
		break;
	case OP_TRANS:
		for (int j = lane; j < d; j += 32) {
			gx[j] += gq[j];
			sink(rule, gr + j, adj ? -gq[j] : gq[j]);
		}
		break;
	case OP_LINEAR:
	case OP_AFFINE:
		for (int k = lane; k < d; k += 32) { // gx = Aᵀ·gq
			float v = 0;
			for (int j = 0; j < d; j++) v += r[(long long)j * d + k] * gq[j];
			gx[k] += v;
		}
		for (int j = 0; j < d; j++) { // gA = gq ⊗ x
			float gj = gq[j];
			float *row = gr + (long long)j * d;
			for (int k = lane; k < d; k += 32) sink(rule, row + k, gj * x[k]);
		}
		if (op == OP_AFFINE)
			for (int j = lane; j < d; j += 32) sink(rule, gr + (long long)d * d + j, gq[j]);
		break;
	case OP_COMPLEX:
	case OP_ROTATE:
		for (int c = lane; c < h; c += 32) {
			float cr, ci;
			relCoef(op, adj, r, c, h, &cr, &ci);
			float xr = x[c], xi = x[c + h], ar = gq[c], ai = gq[c + h];
			gx[c] += ar * cr + ai * ci;
			gx[c + h] += -ar * ci + ai * cr;
			float gcr = ar * xr + ai * xi, gci = -ar * xi + ai * xr; // ∂/∂cr, ∂/∂ci
			if (op == OP_COMPLEX) {
				sink(rule, gr + c, gcr);
				sink(rule, gr + c + h, adj ? -gci : gci);
			} else { // ci = sin φ, cr = cos φ, φ = ±θ
				float gphi = -gcr * ci + gci * cr;
				sink(rule, gr + c, adj ? -gphi : gphi);
			}
		}
		break;
	}
}

// regRow adds lam·∂P(v)/∂v into gv (sunk with rule, or added in place when
// own) and returns P(v): l2 Σ v², n3 Σ|v|³ (pairs: of each (re, im)
// modulus).
__device__ float regRow(int reg, int pairs, int rule, bool own, long long n, int lane, float lam, const float *v,
                        float *gv) {
	float P = 0;
	if (reg == 2 && pairs) {
		long long h = n / 2;
		for (long long c = lane; c < h; c += 32) {
			float a = v[c], b = v[c + h], mod = sqrtf(a * a + b * b);
			P += mod * mod * mod;
			float ga = lam * 3 * mod * a, gb = lam * 3 * mod * b;
			if (own) {
				gv[c] += ga;
				gv[c + h] += gb;
			} else {
				sink(rule, gv + c, ga);
				sink(rule, gv + c + h, gb);
			}
		}
		return P;
	}
	for (long long j = lane; j < n; j += 32) {
		float a = v[j], g;
		if (reg == 2) {
			P += fabsf(a) * a * a;
			g = lam * 3 * fabsf(a) * a;
		} else {
			P += a * a;
			g = lam * 2 * a;
		}
		if (own)
			gv[j] += g;
		else
			sink(rule, gv + j, g);
	}
	return P;
}

// edgeBack is chunk_back's edge for every model but the fused three (and
// for those with a regulariser): edge q of the stacked rows, its queries
// q1, q2 in Q (overwritten with their gradients), its rows of gQ (the
// negatives' part of dL/dq; rule each: left holding the source's and the
// destination's gradients), aq the normed comparators' coefficients of q.
// The gradients: the positive term through the comparator, aq·q, each
// query back through its operator to the entity and the relation row (of
// width relWidth; accR's row rr with rule sum, grr with rule each), and
// the regulariser's on s, d and the relation row (its penalty added to
// loss). Rule sum adds the entity gradients into accS and accT.
__device__ void edgeBack(int model, int rule, int nc, int d, int lane, const float *s, const float *t, const float *rel,
                         int rr, long long q, float *gQ, const float *gp, float *Q, const float *aq, float *accS,
                         float *accT, float *accR, float *grr, int reg, float lam, double *loss) {
	int op = MODEL_OP(model), cmp = MODEL_CMP(model), pair = MODEL_PAIR(model), adj = !pair;
	long long rw = relWidth(model, d), w0 = opWidth(op, d);
	bool hasRel = op != OP_NONE;
	const float *rg = hasRel ? rel + (long long)rr * rw : s, *rh = pair ? rg + w0 : rg;
	float *dR = hasRel ? (rule == 0 ? accR + (long long)rr * rw : grr) : 0;
	float *q1 = Q + q * d, *q2 = q1 + (long long)nc * d, *g1 = gQ + q * d, *g2 = g1 + (long long)nc * d;
	float gp1 = gp[q], gp2 = gp[q + nc];
	float a1 = NORMED(cmp) ? aq[q] : 0.0f, a2 = NORMED(cmp) ? aq[q + nc] : 0.0f;
	if (hasRel && rule == 1) {
		for (long long x = lane; x < rw; x += 32) grr[x] = 0;
		__syncwarp();
	}
	// The positive terms: q1 against t, q2 against s. Q's rows become
	// dL/dq; gQ's rows the positive partners' gradients (g1: s's, g2: t's).
	cmpSums S1 = cmpReduce(cmp, d, lane, q1, t), S2 = cmpReduce(cmp, d, lane, q2, s);
	if (cmp == CMP_MOD) {
		int h = d / 2;
		for (int c = lane; c < h; c += 32) {
			float ar = q1[c] - t[c], ai = q1[c + h] - t[c + h], br = q2[c] - s[c], bi = q2[c + h] - s[c + h];
			float da = ar * ar + ai * ai, db = br * br + bi * bi;
			float ia = da > TINY ? 1.0f / sqrtf(da) : 0.0f, ib = db > TINY ? 1.0f / sqrtf(db) : 0.0f;
			float q1r = g1[c] - gp1 * ar * ia, q1i = g1[c + h] - gp1 * ai * ia;
			float q2r = g2[c] - gp2 * br * ib, q2i = g2[c + h] - gp2 * bi * ib;
			g1[c] = gp2 * br * ib;
			g1[c + h] = gp2 * bi * ib;
			g2[c] = gp1 * ar * ia;
			g2[c + h] = gp1 * ai * ia;
			q1[c] = q1r;
			q1[c + h] = q1i;
			q2[c] = q2r;
			q2[c + h] = q2i;
		}
	} else {
		for (int x = lane; x < d; x += 32) {
			float cq1, cx1, cq2, cx2;
			cmpGrad(cmp, S1, q1[x], t[x], &cq1, &cx1);
			cmpGrad(cmp, S2, q2[x], s[x], &cq2, &cx2);
			float v1 = g1[x] + a1 * q1[x] + gp1 * cq1, v2 = g2[x] + a2 * q2[x] + gp2 * cq2;
			g1[x] = gp2 * cx2;
			g2[x] = gp1 * cx1;
			q1[x] = v1;
			q2[x] = v2;
		}
	}
	__syncwarp();
	opBack(op, 0, rule, d, lane, s, rg, q1, g1, dR);
	opBack(op, adj, rule, d, lane, t, rh, q2, g2, dR ? dR + (pair ? w0 : 0) : 0);
	__syncwarp();
	if (reg != 0) {
		int cx = complexOp(op);
		float P = regRow(reg, cx, rule, true, d, lane, lam, s, g1) + regRow(reg, cx, rule, true, d, lane, lam, t, g2);
		if (hasRel && reg == 2 && op == OP_COMPLEX) { // n3 on each complex_diagonal operator's (re, im) moduli
			P += regRow(reg, 1, rule, false, d, lane, lam, rg, dR);
			if (pair) P += regRow(reg, 1, rule, false, d, lane, lam, rg + d, dR + d);
		} else if (hasRel && op != OP_ROTATE) {
			P += regRow(reg, 0, rule, false, rw, lane, lam, rg, dR);
		}
		P = warp_sum(P);
		if (lane == 0) atomicAdd(loss + q % 32, (double)lam * P);
		__syncwarp();
	}
	if (rule == 0)
		for (int x = lane; x < d; x += 32) {
			atomicAdd(accS + x, g1[x]);
			atomicAdd(accT + x, g2[x]);
		}
}

// chunk_back finishes a group's gradients and hands them to the tables,
// one warp per item (as chunk_prep). For edge i: each side's positive term
// (gq += gp·x, gx += gp·q), then each query's gradient back to s, r and d
// (model.ChunkGrad's order of terms aside); for every model but the fused
// three, or with a regulariser (reg 1 l2, 2 n3, coefficient lam; its
// penalty added into loss), edgeBack. For a negative: its row of gN (plus
// bn·n for the normed comparators).
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
                           const float *rel, float *gQ, float *gN, const float *gp, float *gR, const Acc *accs,
                           int *counts, float *Q, const float *N, const float *aq, const float *bn, int reg, float lam,
                           double *loss) {
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
		if (NORMED(MODEL_CMP(model))) { // the normed comparators' bn·n term
			float b = bn[v];
			const float *nv = N + v * d;
			float *gn = gN + v * d;
			for (int x = lane; x < d; x += 32) gn[x] += b * nv[x];
		}
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
	if (!LEGACY(model, reg)) {
		edgeBack(model, rule, nc, d, lane, s, t, rel, rr, (long long)j * 2 * nc + i, gQ, gp, Q, aq, A->acc + (long long)sr * d,
		         B->acc + (long long)dr * d, R->acc, gR + ((long long)j * nc + i) * relWidth(model, d), reg, lam, loss);
		if (lane == 0) {
			bool hasRel = MODEL_OP(model) != OP_NONE;
			touch(A, cA, sr);
			touch(B, cB, dr);
			if (hasRel) touch(R, cR, rr);
			if (rule == 1) {
				link(A, sr, i);
				link(B, dr, nc + i);
				if (hasRel) link(R, rr, i);
			}
		}
		return;
	}
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
                            int maxRows, int d, float lr, float eps, int dR) {
	int tb = blockIdx.y; // with same, table 1 lists nothing (chunk_back puts every row in table 0)
	const Piece *P = (const Piece *)piece;
	float *emb = tb == 0 ? P->embA : tb == 1 ? P->embB : embR;
	float *state = tb == 0 ? P->stateA : tb == 1 ? P->stateB : stateR;
	const Acc *a = accs + tb;
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	int n = counts[tb];
	if (n > maxRows) n = maxRows;
	if (tb == 2) d = dR; // relation rows are relWidth wide
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

// EACH_BATCH is the occurrences whose gradients a thread of adagrad_each
// loads before it applies them (the loads do not wait on the chain).
#define EACH_BATCH 8

// eachGrad is the gradient row of occurrence slot s of table tb (rows w
// wide): slot s < 2nc is row s of gQ, slot 2nc+k row k of gN, relation
// slot i row i of gR (chunk_back, rule each).
__device__ const float *eachGrad(int tb, int s, int nc, int w, const float *gQ, const float *gN, const float *gR) {
	return tb == 2 ? gR + (long long)s * w : s < 2 * nc ? gQ + (long long)s * w : gN + (long long)(s - 2 * nc) * w;
}

// adagrad_each steps every row listed in table blockIdx.y once per
// occurrence, with that occurrence's own gradient, in the CPU engine's
// order: edge by edge (an edge's source before its destination), then the
// negatives (relations: edge by edge). A row of w floats (d; relations
// dR) is cut into spans of blockDim.x elements, one block a span: block x
// of a table steps span x % spans of listed row x / spans (spans =
// ⌈w/blockDim.x⌉; blocks past min(count, maxRows) rows return at once).
// Each thread owns one element: it sorts the row's occurrences with the
// block, loads the element's embedding and state once, applies every
// occurrence's step in order in registers (per element the same float
// operations in the same order as one step at a time) and stores once.
// The rows' lists and flags are left for each_clear (the spans of a row
// all read its list).
__global__ void adagrad_each(const int *piece, float *embR, float *stateR, const Acc *accs, const int *counts,
                             int maxRows, int d, int nc, float lr, float eps, const float *gQ, const float *gN,
                             const float *gR, int dR) {
	__shared__ int slots[EACH_CAP];
	__shared__ int order[EACH_CAP];
	__shared__ int total, cur;
	int tb = blockIdx.y; // with same, table 1 lists nothing
	int n = counts[tb];
	if (n > maxRows) n = maxRows;
	if (tb == 2) d = dR; // relation rows are relWidth wide
	int spans = (d + (int)blockDim.x - 1) / (int)blockDim.x;
	int row = (int)blockIdx.x / spans, span = (int)blockIdx.x % spans;
	if (row >= n) return; // block-uniform, before any barrier
	const Piece *P = (const Piece *)piece;
	float *emb = tb == 0 ? P->embA : tb == 1 ? P->embB : embR;
	float *state = tb == 0 ? P->stateA : tb == 1 ? P->stateB : stateR;
	const Acc *a = accs + tb;
	int lane = threadIdx.x;
	int r = a->list[row];
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
		for (int e = lane; e < c; e += blockDim.x) {
			int ke = EACH_KEY(slots[e]), rank = 0;
			for (int f = 0; f < c; f++) rank += EACH_KEY(slots[f]) < ke;
			order[rank] = slots[e];
		}
	}
	__syncthreads();
	int k = span * (int)blockDim.x + lane;
	bool live = k < d; // the last span's threads past the row hold nothing
	long long o = (long long)r * d + k;
	float st = live ? state[o] : 0.0f, em = live ? emb[o] : 0.0f;
	if (c <= EACH_CAP) {
		for (int q = 0; q < c; q += EACH_BATCH) {
			float gb[EACH_BATCH];
			for (int u = 0; u < EACH_BATCH; u++)
				gb[u] = live && q + u < c ? eachGrad(tb, order[q + u], nc, d, gQ, gN, gR)[k] : 0.0f;
			for (int u = 0; u < EACH_BATCH; u++) {
				if (q + u >= c) break;
				float gk = gb[u];
				st = st + gk * gk;
				em -= lr * gk / (sqrtf(st) + eps);
			}
		}
	} else {
		int last = -1;
		for (int q = 0; q < c; q++) {
			if (lane == 0) { // the occurrence with the least key after last
				int best = -1, bk = 0;
				for (int x = a->head[r]; x >= 0; x = a->next[x]) {
					int kx = EACH_KEY(x);
					if (kx > last && (best < 0 || kx < bk)) best = x, bk = kx;
				}
				cur = best;
			}
			__syncthreads();
			int s = cur;
			last = EACH_KEY(s);
			__syncthreads();
			if (live) {
				float gk = eachGrad(tb, s, nc, d, gQ, gN, gR)[k];
				st = st + gk * gk;
				em -= lr * gk / (sqrtf(st) + eps);
			}
		}
	}
#undef EACH_KEY
	if (live) {
		state[o] = st;
		emb[o] = em;
	}
}

// each_clear empties the occurrence list of every row adagrad_each
// stepped and clears its flag: thread t of table blockIdx.y handles listed
// row t (t < min(count, maxRows)). Launched after adagrad_each.
__global__ void each_clear(const Acc *accs, const int *counts, int maxRows) {
	int tb = blockIdx.y;
	int n = counts[tb];
	if (n > maxRows) n = maxRows;
	long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
	if (t >= n) return;
	const Acc *a = accs + tb;
	int r = a->list[t];
	a->head[r] = -1;
	a->flag[r] = 0;
}

} // extern "C"
