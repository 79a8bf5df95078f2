//go:build !amd64 || purego

package model

import (
	"math"
	"unsafe"

	"github.com/tierflow/tierflow/workload"
)

// Without the assembly (another architecture, or the purego build tag) only
// Generic runs; the functions below keep the dispatch code compiling and,
// should they ever be reached, compute the same results in portable Go.

func supportedLevels() []Level { return nil }

func fmaPeakY(n int) {}
func fmaPeakZ(n int) {}

func dotY(a, b *float32, n int) float32 { return dot(unsafe.Slice(a, n), unsafe.Slice(b, n)) }
func dotZ(a, b *float32, n int) float32 { return dotY(a, b, n) }

func axpyY(alpha float32, x, y *float32, n int) { axpy(alpha, unsafe.Slice(x, n), unsafe.Slice(y, n)) }
func axpyZ(alpha float32, x, y *float32, n int) { axpyY(alpha, x, y, n) }

func scalY(alpha float32, x *float32, n int) {
	for i := range unsafe.Slice(x, n) {
		unsafe.Slice(x, n)[i] *= alpha
	}
}
func scalZ(alpha float32, x *float32, n int) { scalY(alpha, x, n) }

func vmaxY(x *float32, n int) float32 { return vecMax(float32(math.Inf(-1)), unsafe.Slice(x, n)) }
func vmaxZ(x *float32, n int) float32 { return vmaxY(x, n) }

func expSumY(x *float32, n int, mx float32) float32 { return vecExpSum(unsafe.Slice(x, n), mx) }
func expSumZ(x *float32, n int, mx float32) float32 { return expSumY(x, n, mx) }

func adagradY(emb, state, grad *float32, n int, lr, eps float32) {
	adagradGo(unsafe.Slice(emb, n), unsafe.Slice(state, n), unsafe.Slice(grad, n), lr, eps)
}
func adagradZ(emb, state, grad *float32, n int, lr, eps float32) {
	adagradY(emb, state, grad, n, lr, eps)
}

func gatherColsY(dst *float32, lddst int, src *float32, idx *int32, kb int) {
	gatherGo(8, dst, lddst, src, idx, kb)
}
func gatherColsZ(dst *float32, lddst int, src *float32, idx *int32, kb int) {
	gatherGo(16, dst, lddst, src, idx, kb)
}

func gatherGo(lanes int, dst *float32, lddst int, src *float32, idx *int32, kb int) {
	ix := unsafe.Slice(idx, lanes)
	D := unsafe.Slice(dst, (kb-1)*lddst+lanes)
	for p := 0; p < kb; p++ {
		for l, o := range ix {
			D[p*lddst+l] = *(*float32)(unsafe.Add(unsafe.Pointer(src), 4*(p+int(o))))
		}
	}
}

func prefetch(p *float32, n int) {}

// kernGo is the micro-kernel contract in plain Go.
func kernGo(mr, nr, k int, a *float32, rsa, csa int, b *float32, ldb int, c *float32, ldc int) {
	A := unsafe.Slice(a, (mr-1)*rsa+(k-1)*csa+1)
	B := unsafe.Slice(b, (k-1)*ldb+nr)
	C := unsafe.Slice(c, (mr-1)*ldc+nr)
	for p := 0; p < k; p++ {
		for r := 0; r < mr; r++ {
			axpy(A[r*rsa+p*csa], B[p*ldb:p*ldb+nr], C[r*ldc:r*ldc+nr])
		}
	}
}

func l1Dist4Y(q, c *float32, ldc, n int, out *float32) {
	o := unsafe.Slice(out, 4)
	for j := range o {
		o[j] = l1Dist(unsafe.Slice(q, n), unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*j*ldc)), n))
	}
}
func l1Dist4Z(q, c *float32, ldc, n int, out *float32) { l1Dist4Y(q, c, ldc, n, out) }

func l1GradY(alpha float32, q, c, gq, gc *float32, n int) {
	pairGradGo(workload.CmpL1, n, alpha, unsafe.Slice(q, n), unsafe.Slice(c, n), unsafe.Slice(gq, n), unsafe.Slice(gc, n))
}
func l1GradZ(alpha float32, q, c, gq, gc *float32, n int) { l1GradY(alpha, q, c, gq, gc, n) }

func modDist4Y(q, c *float32, ldc, h, n int, out *float32) {
	o := unsafe.Slice(out, 4)
	Q := unsafe.Slice(q, h+n)
	for j := range o {
		C := unsafe.Slice((*float32)(unsafe.Add(unsafe.Pointer(c), 4*j*ldc)), h+n)
		var s float32
		for i := 0; i < n; i++ {
			s += modTerm(Q[i]-C[i], Q[h+i]-C[h+i])
		}
		o[j] = s
	}
}
func modDist4Z(q, c *float32, ldc, h, n int, out *float32) { modDist4Y(q, c, ldc, h, n, out) }

func modGradY(alpha float32, q, c, gq, gc *float32, h, n int) {
	Q, C, GQ, GC := unsafe.Slice(q, h+n), unsafe.Slice(c, h+n), unsafe.Slice(gq, h+n), unsafe.Slice(gc, h+n)
	for j := 0; j < n; j++ {
		modGradTerm(alpha, Q[j]-C[j], Q[h+j]-C[h+j], &GQ[j], &GQ[h+j], &GC[j], &GC[h+j])
	}
}
func modGradZ(alpha float32, q, c, gq, gc *float32, h, n int) { modGradY(alpha, q, c, gq, gc, h, n) }

func l1Grad4Y(coef, q, c *float32, ldc int, gq, gc *float32, n int) {
	g := unsafe.Slice(coef, 4)
	for j := range g {
		o := uintptr(4 * j * ldc)
		l1GradY(g[j], q, (*float32)(unsafe.Add(unsafe.Pointer(c), o)), gq, (*float32)(unsafe.Add(unsafe.Pointer(gc), o)), n)
	}
}
func l1Grad4Z(coef, q, c *float32, ldc int, gq, gc *float32, n int) {
	l1Grad4Y(coef, q, c, ldc, gq, gc, n)
}

func modGrad4Y(coef, q, c *float32, ldc int, gq, gc *float32, h, n int) {
	g := unsafe.Slice(coef, 4)
	for j := range g {
		o := uintptr(4 * j * ldc)
		modGradY(g[j], q, (*float32)(unsafe.Add(unsafe.Pointer(c), o)), gq, (*float32)(unsafe.Add(unsafe.Pointer(gc), o)), h, n)
	}
}
func modGrad4Z(coef, q, c *float32, ldc int, gq, gc *float32, h, n int) {
	modGrad4Y(coef, q, c, ldc, gq, gc, h, n)
}

func l2FwdY(row, nn, f *float32, q2 float32, n int) {
	l2FwdGo(unsafe.Slice(row, n), unsafe.Slice(nn, n), unsafe.Slice(f, n), q2)
}
func l2FwdZ(row, nn, f *float32, q2 float32, n int) { l2FwdY(row, nn, f, q2, n) }
func sqFwdY(row, nn *float32, q2 float32, n int) {
	sqFwdGo(unsafe.Slice(row, n), unsafe.Slice(nn, n), q2)
}
func sqFwdZ(row, nn *float32, q2 float32, n int) { sqFwdY(row, nn, q2, n) }
func cosFwdY(row, ninv, f *float32, ia float32, n int) {
	cosFwdGo(unsafe.Slice(row, n), unsafe.Slice(ninv, n), unsafe.Slice(f, n), ia)
}
func cosFwdZ(row, ninv, f *float32, ia float32, n int) { cosFwdY(row, ninv, f, ia, n) }
func mulBackY(row, f, cc *float32, n int) float32 {
	return mulBackGo(unsafe.Slice(row, n), unsafe.Slice(f, n), unsafe.Slice(cc, n))
}
func mulBackZ(row, f, cc *float32, n int) float32 { return mulBackY(row, f, cc, n) }
func cosBackY(row, f, ninv, cc *float32, ia float32, n int) float32 {
	return cosBackGo(unsafe.Slice(row, n), unsafe.Slice(f, n), unsafe.Slice(ninv, n), unsafe.Slice(cc, n), ia)
}
func cosBackZ(row, f, ninv, cc *float32, ia float32, n int) float32 {
	return cosBackY(row, f, ninv, cc, ia, n)
}
