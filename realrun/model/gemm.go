package model

// The portable matrix kernels below (sgemm*Go) are scalar Go, register-blocked in 2×3 tiles of C
// with the k loop unrolled by 4 (NT). Wider tiles (4×4, 4×2) do not fit the
// 15 usable XMM registers once Go's scheduler hoists the multiplies, spill,
// and run slower; 2×3 keeps the loop bound by the FP add/mul ports.
//
// All three accumulate into C (C += …) and assume the slices are at least as
// long as their shapes require; non-positive sizes are a no-op.

// SgemmNT computes C (m×n) += A (m×k) · Bᵀ, where B is n×k; all row-major.
// At a SIMD level it packs both operands and runs the assembly micro-kernel;
// at Generic it is the scalar sgemmNTGo.
func SgemmNT(m, n, k int, A, B, C []float32) {
	sgemm(m, n, k, A, B, C, sgemmNTGo, mat{A, k, 1}, mat{B, 1, k})
}

// SgemmNN computes C (m×n) += A (m×k) · B, where B is k×n; all row-major.
func SgemmNN(m, n, k int, A, B, C []float32) {
	sgemm(m, n, k, A, B, C, sgemmNNGo, mat{A, k, 1}, mat{B, n, 1})
}

// SgemmTN computes C (m×n) += Aᵀ · B, where A is k×m and B is k×n; all
// row-major.
func SgemmTN(m, n, k int, A, B, C []float32) {
	sgemm(m, n, k, A, B, C, sgemmTNGo, mat{A, 1, m}, mat{B, n, 1})
}

// sgemmNTGo is the portable SgemmNT; the Generic ChunkGrad uses it for all
// of its products.
func sgemmNTGo(m, n, k int, A, B, C []float32) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	i := 0
	for ; i+2 <= m; i += 2 {
		a0 := A[i*k : i*k+k]
		a1 := A[i*k+k : i*k+2*k]
		c0 := C[i*n : i*n+n]
		c1 := C[i*n+n : i*n+2*n]
		j := 0
		for ; j+3 <= n; j += 3 {
			c00, c01, c02, c10, c11, c12 := dot23(a0, a1, B[j*k:j*k+k], B[j*k+k:j*k+2*k], B[j*k+2*k:j*k+3*k])
			r0 := c0[j : j+3 : j+3]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r1 := c1[j : j+3 : j+3]
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
		}
		for ; j < n; j++ {
			c00, c10 := dot21(a0, a1, B[j*k:j*k+k])
			c0[j] += c00
			c1[j] += c10
		}
	}
	if i < m {
		a0 := A[i*k : i*k+k]
		c0 := C[i*n : i*n+n]
		j := 0
		for ; j+3 <= n; j += 3 {
			c00, c01, c02 := dot13(a0, B[j*k:j*k+k], B[j*k+k:j*k+2*k], B[j*k+2*k:j*k+3*k])
			r0 := c0[j : j+3 : j+3]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
		}
		for ; j < n; j++ {
			c0[j] += seqDot(a0, B[j*k:j*k+k])
		}
	}
}

// dot23 returns the 2×3 block of dot products a_r·b_c (all of length len(a0)).
func dot23(a0, a1, b0, b1, b2 []float32) (c00, c01, c02, c10, c11, c12 float32) {
	a1 = a1[:len(a0)]
	b0 = b0[:len(a0)]
	b1 = b1[:len(a0)]
	b2 = b2[:len(a0)]
	p := 0
	for ; p+4 <= len(a0); p += 4 {
		x0 := a0[p : p+4 : p+4]
		x1 := a1[p : p+4 : p+4]
		y0 := b0[p : p+4 : p+4]
		y1 := b1[p : p+4 : p+4]
		y2 := b2[p : p+4 : p+4]
		c00 += x0[0] * y0[0]
		c01 += x0[0] * y1[0]
		c02 += x0[0] * y2[0]
		c10 += x1[0] * y0[0]
		c11 += x1[0] * y1[0]
		c12 += x1[0] * y2[0]
		c00 += x0[1] * y0[1]
		c01 += x0[1] * y1[1]
		c02 += x0[1] * y2[1]
		c10 += x1[1] * y0[1]
		c11 += x1[1] * y1[1]
		c12 += x1[1] * y2[1]
		c00 += x0[2] * y0[2]
		c01 += x0[2] * y1[2]
		c02 += x0[2] * y2[2]
		c10 += x1[2] * y0[2]
		c11 += x1[2] * y1[2]
		c12 += x1[2] * y2[2]
		c00 += x0[3] * y0[3]
		c01 += x0[3] * y1[3]
		c02 += x0[3] * y2[3]
		c10 += x1[3] * y0[3]
		c11 += x1[3] * y1[3]
		c12 += x1[3] * y2[3]
	}
	for ; p < len(a0); p++ {
		x0, x1 := a0[p], a1[p]
		y0, y1, y2 := b0[p], b1[p], b2[p]
		c00 += x0 * y0
		c01 += x0 * y1
		c02 += x0 * y2
		c10 += x1 * y0
		c11 += x1 * y1
		c12 += x1 * y2
	}
	return
}

// dot21 returns a0·b0 and a1·b0. Like dot23 and dot13 it sums in index
// order into one accumulator per element, so every element of an NT
// product is the same sum wherever it lies in C (a partition's product
// scores a node exactly as the product with every node does).
func dot21(a0, a1, b0 []float32) (c00, c10 float32) {
	a1 = a1[:len(a0)]
	b0 = b0[:len(a0)]
	for p, y := range b0 {
		c00 += a0[p] * y
		c10 += a1[p] * y
	}
	return c00, c10
}

// dot13 returns a0·b0, a0·b1 and a0·b2.
func dot13(a0, b0, b1, b2 []float32) (c00, c01, c02 float32) {
	b0 = b0[:len(a0)]
	b1 = b1[:len(a0)]
	b2 = b2[:len(a0)]
	for p, x := range a0 {
		c00 += x * b0[p]
		c01 += x * b1[p]
		c02 += x * b2[p]
	}
	return
}

// sgemmNNGo is the portable SgemmNN.
func sgemmNNGo(m, n, k int, A, B, C []float32) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	B = B[:k*n]
	i := 0
	for ; i+2 <= m; i += 2 {
		a0 := A[i*k : i*k+k]
		a1 := A[i*k+k : i*k+2*k]
		a1 = a1[:len(a0)]
		c0 := C[i*n : i*n+n]
		c1 := C[i*n+n : i*n+2*n]
		j := 0
		for ; j+3 <= n; j += 3 {
			var c00, c01, c02, c10, c11, c12 float32
			off := j
			for p, x0 := range a0 {
				x1 := a1[p]
				b := B[off : off+3 : off+3]
				off += n
				c00 += x0 * b[0]
				c01 += x0 * b[1]
				c02 += x0 * b[2]
				c10 += x1 * b[0]
				c11 += x1 * b[1]
				c12 += x1 * b[2]
			}
			r0 := c0[j : j+3 : j+3]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r1 := c1[j : j+3 : j+3]
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
		}
		for ; j < n; j++ {
			var c00, c10 float32
			off := j
			for p, x0 := range a0 {
				b := B[off]
				off += n
				c00 += x0 * b
				c10 += a1[p] * b
			}
			c0[j] += c00
			c1[j] += c10
		}
	}
	if i < m {
		// Last row: axpy form, C_i += Σ_p A_ip · B_p.
		a0 := A[i*k : i*k+k]
		c0 := C[i*n : i*n+n]
		for p, x := range a0 {
			axpy(x, B[p*n:p*n+n], c0)
		}
	}
}

// sgemmTNGo is the portable SgemmTN.
func sgemmTNGo(m, n, k int, A, B, C []float32) {
	if m <= 0 || n <= 0 || k <= 0 {
		return
	}
	A = A[:k*m]
	B = B[:k*n]
	i := 0
	for ; i+2 <= m; i += 2 {
		c0 := C[i*n : i*n+n]
		c1 := C[i*n+n : i*n+2*n]
		j := 0
		for ; j+3 <= n; j += 3 {
			var c00, c01, c02, c10, c11, c12 float32
			ao, bo := i, j
			for p := 0; p < k; p++ {
				a := A[ao : ao+2 : ao+2]
				b := B[bo : bo+3 : bo+3]
				ao += m
				bo += n
				c00 += a[0] * b[0]
				c01 += a[0] * b[1]
				c02 += a[0] * b[2]
				c10 += a[1] * b[0]
				c11 += a[1] * b[1]
				c12 += a[1] * b[2]
			}
			r0 := c0[j : j+3 : j+3]
			r0[0] += c00
			r0[1] += c01
			r0[2] += c02
			r1 := c1[j : j+3 : j+3]
			r1[0] += c10
			r1[1] += c11
			r1[2] += c12
		}
		for ; j < n; j++ {
			var c00, c10 float32
			ao, bo := i, j
			for p := 0; p < k; p++ {
				a := A[ao : ao+2 : ao+2]
				b := B[bo]
				ao += m
				bo += n
				c00 += a[0] * b
				c10 += a[1] * b
			}
			c0[j] += c00
			c1[j] += c10
		}
	}
	if i < m {
		c0 := C[i*n : i*n+n]
		for p := 0; p < k; p++ {
			axpy(A[p*m+i], B[p*n:p*n+n], c0)
		}
	}
}

// axpy computes y += a·x (len(y) ≥ len(x)).
func axpy(a float32, x, y []float32) {
	y = y[:len(x)]
	for i, v := range x {
		y[i] += a * v
	}
}

// transpose writes the cols×rows transpose of the rows×cols matrix src into
// dst (len(dst) ≥ rows·cols), in 16×16 blocks to stay cache-friendly.
func transpose(rows, cols int, src, dst []float32) {
	const bs = 16
	for i0 := 0; i0 < rows; i0 += bs {
		i1 := min(i0+bs, rows)
		for j0 := 0; j0 < cols; j0 += bs {
			j1 := min(j0+bs, cols)
			for i := i0; i < i1; i++ {
				row := src[i*cols+j0 : i*cols+j1]
				for jj, v := range row {
					dst[(j0+jj)*rows+i] = v
				}
			}
		}
	}
}
