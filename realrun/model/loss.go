package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// rowLoss is one query row's loss under the objective o: p is the row's
// positive score and row its m negative scores. It returns the row's loss
// and dL/dp, and overwrites row with dL/dn_k. It is the one place every
// comparator's scores become a loss (the regularisation is added apart).
//
// With m = len(row):
//
//	softmax:  logsumexp({p} ∪ {n_k}) − p
//	ranking:  Σ_k w_k·m·max(0, margin − p + n_k)
//	logistic: softplus(−(p + γ)) + Σ_k w_k·softplus(n_k + γ)     (γ = o.Margin)
//
// where w_k = 1/m, or with o.Adversarial = α > 0 the self-adversarial
// weights w_k = softmax_k(α·n_k) over the row, held constant in the
// gradient (so ranking with equal weights is PBG's Σ_k max(0, …)). The
// ranking loss's gradient is 0 at its kink. A NaN score gives a NaN loss.
// rowLoss does not allocate.
func rowLoss(o *workload.Objective, p float32, row []float32) (loss float64, gp float32) {
	switch o.LossKind() {
	case workload.Softmax:
		return softmaxRow(p, row)
	case workload.Ranking:
		return rankingRow(float32(o.Margin), float32(o.Adversarial), p, row)
	case workload.Logistic:
		return logisticRow(float32(o.Margin), float32(o.Adversarial), p, row)
	}
	return math.NaN(), nan32()
}

// softmaxRow is the softmax loss −log(e^p / (e^p + Σ e^{n_k})), stable
// (shifted by the row's maximum): dL/dn_k is n_k's softmax weight and
// dL/dp its weight − 1.
func softmaxRow(p float32, row []float32) (float64, float32) {
	if level == Generic {
		mx := p
		for _, v := range row {
			if v > mx {
				mx = v
			}
		}
		ep := expNeg(p - mx)
		z := ep
		for j, v := range row {
			e := expNeg(v - mx)
			row[j] = e
			z += e
		}
		inv := 1 / z
		for j := range row {
			row[j] *= inv
		}
		return float64(mx) + math.Log(float64(z)) - float64(p), ep*inv - 1
	}
	mx := vecMax(p, row)
	ep := expNeg(p - mx)
	z := ep + vecExpSum(row, mx)
	inv := 1 / z
	vecScal(inv, row)
	return float64(mx) + math.Log(float64(z)) - float64(p), ep*inv - 1
}

// lossBlock is how many negatives the ranking and logistic losses
// exponentiate at a time, in a buffer on the stack, with the SIMD exp
// kernel (vecExpSum).
const lossBlock = 64

// advKeep is the longest row whose self-adversarial weights are kept (in a
// stack buffer) between their normaliser and their use, so that they are
// exponentiated once; a longer row computes them again a block at a time.
const advKeep = 512

// advNorm returns the row's maximum (NaNs ignored) and the normaliser z of
// the self-adversarial weights w_k = e^{α(n_k − max)} / z (α > 0,
// len(row) > 0); z is NaN when a score is. With keep (len(row) long) it
// leaves the unnormalised weights there.
func advNorm(alpha float32, row, keep []float32) (mx, z float32) {
	mx = vecMax(float32(math.Inf(-1)), row)
	var buf [lossBlock]float32
	for b0 := 0; b0 < len(row); b0 += lossBlock {
		blk := row[b0:min(b0+lossBlock, len(row))]
		w := buf[:len(blk)]
		if keep != nil {
			w = keep[b0 : b0+len(blk)]
		}
		for j, v := range blk {
			if v != v {
				return mx, v
			}
			w[j] = alpha * (v - mx)
		}
		z += vecExpSum(w, 0)
	}
	return mx, z
}

// advBlock returns the unnormalised self-adversarial weights of the block
// blk starting at b0: from keep, or computed into buf.
func advBlock(alpha, mx float32, b0 int, blk, keep, buf []float32) []float32 {
	if keep != nil {
		return keep[b0 : b0+len(blk)]
	}
	advWeights(alpha, mx, blk, buf)
	return buf[:len(blk)]
}

// advWeights sets w_j = e^{α(n_j − mx)} for the block blk (the unnormalised
// self-adversarial weights).
func advWeights(alpha, mx float32, blk, w []float32) {
	w = w[:len(blk)]
	for j, v := range blk {
		w[j] = alpha * (v - mx)
	}
	vecExpSum(w, 0)
}

// rankingRow is the margin ranking loss Σ_k w_k·m·max(0, margin − p + n_k)
// (w_k·m = 1 without self-adversarial weights, alpha = 0). dL/dn_k is
// w_k·m where the hinge is active (margin − p + n_k > 0), else 0, and dL/dp
// minus their sum.
func rankingRow(margin, alpha, p float32, row []float32) (float64, float32) {
	if len(row) == 0 {
		return 0, 0
	}
	var loss float64
	var gp float32
	if alpha > 0 {
		var kept [advKeep]float32
		var keep []float32
		if len(row) <= advKeep {
			keep = kept[:len(row)]
		}
		mx, z := advNorm(alpha, row, keep)
		if z != z || p != p {
			return nanRow(row)
		}
		scale := float32(len(row)) / z // w_k·m = e_k·m/z
		var buf [lossBlock]float32
		for b0 := 0; b0 < len(row); b0 += lossBlock {
			blk := row[b0:min(b0+lossBlock, len(row))]
			w := advBlock(alpha, mx, b0, blk, keep, buf[:])
			for j, v := range blk {
				if h := margin - p + v; h > 0 {
					c := w[j] * scale
					loss += float64(c) * float64(h)
					blk[j] = c
					gp -= c
				} else {
					blk[j] = 0
				}
			}
		}
		return loss, gp
	}
	for k, v := range row {
		h := margin - p + v
		switch {
		case h > 0:
			loss += float64(h)
			row[k] = 1
			gp--
		case h == h:
			row[k] = 0
		default: // NaN
			loss += float64(h)
			row[k] = h
			gp += h
		}
	}
	return loss, gp
}

// logisticRow is the logistic loss softplus(−(p + γ)) + Σ_k w_k·softplus(n_k + γ)
// (w_k = 1/m without self-adversarial weights, alpha = 0): dL/dp is
// −σ(−(p + γ)) and dL/dn_k = w_k·σ(n_k + γ). Each negative's y = n_k + γ
// takes one exponential, e^{−|y|} (the SIMD kernel, a block at a time),
// shared by softplus(y) = max(y, 0) + log1p(e^{−|y|}) and σ(y); with equal
// weights the log1p terms are summed as the log of their product, one
// logarithm a block.
func logisticRow(gamma, alpha, p float32, row []float32) (float64, float32) {
	x := -(p + gamma)
	loss := softplus(x)
	gp := -sigmoid(x)
	if len(row) == 0 {
		return loss, gp
	}
	var mx, zinv float32
	var keep []float32
	if alpha > 0 {
		var kept [advKeep]float32
		if len(row) <= advKeep {
			keep = kept[:len(row)]
		}
		var z float32
		mx, z = advNorm(alpha, row, keep)
		if z != z {
			return nanRow(row)
		}
		zinv = 1 / z
	}
	w := 1 / float32(len(row))
	var pos, lsum float64 // Σ w_k·max(y_k, 0) (or Σ max(y_k, 0)), Σ w_k·log1p(e_k) (or the logs of the products)
	var ebuf, wbuf [lossBlock]float32
	for b0 := 0; b0 < len(row); b0 += lossBlock {
		blk := row[b0:min(b0+lossBlock, len(row))]
		e := ebuf[:len(blk)]
		for j, v := range blk {
			e[j] = math.Float32frombits(math.Float32bits(v+gamma) | 1<<31) // −|y|, no branch
		}
		vecExpSum(e, 0)
		if alpha > 0 {
			ws := advBlock(alpha, mx, b0, blk, keep, wbuf[:])
			for j, v := range blk {
				y, ej, wj := v+gamma, e[j], ws[j]*zinv
				relu, sig := reluSigmoid(y, ej)
				pos += float64(wj * (relu + log1pPoly(ej)))
				blk[j] = wj * sig
			}
			continue
		}
		prod := 1.0 // ≤ 2^64
		for j, v := range blk {
			y, ej := v+gamma, e[j]
			relu, sig := reluSigmoid(y, ej)
			prod *= 1 + float64(ej)
			pos += float64(relu)
			blk[j] = w * sig
		}
		lsum += math.Log(prod)
	}
	if alpha > 0 {
		return loss + pos, gp
	}
	return loss + (pos+lsum)/float64(len(row)), gp
}

// reluSigmoid returns max(y, 0) and σ(y) given e = e^{−|y|}, without a
// branch on y's sign (random scores would mispredict half the time):
// σ(y) = 1/(1 + e) for y ≥ 0 and e/(1 + e) for y < 0. A NaN or infinite y
// gives NaN.
func reluSigmoid(y, e float32) (relu, sig float32) {
	b := math.Float32bits(y)
	neg := float32(b >> 31)                           // 1 for y < 0
	relu = (y + math.Float32frombits(b&^(1<<31))) / 2 // (y + |y|)/2
	sig = (1+(e-1)*neg)/(1+e) + (y - y)
	return relu, sig
}

// nanRow is a row's result when a score is NaN: every gradient NaN.
func nanRow(row []float32) (float64, float32) {
	for k := range row {
		row[k] = nan32()
	}
	return math.NaN(), nan32()
}

// softplus is log(1 + e^x) = max(x, 0) + log1p(e^{−|x|}), stable for any x
// (NaN for NaN).
func softplus(x float32) float64 {
	a := x
	if a < 0 {
		a = -a
	}
	l := log1pUnit(expNeg(-a))
	if x > 0 {
		return float64(x) + l
	}
	return l
}

// sigmoid is 1/(1 + e^{−x}), computed from e^{−|x|} so that it neither
// overflows nor loses the small tail (NaN for NaN).
func sigmoid(x float32) float32 {
	a := x
	if a < 0 {
		a = -a
	}
	e := expNeg(-a)
	if x >= 0 {
		return 1 / (1 + e)
	}
	return e / (1 + e)
}

// log1pUnit is log(1 + y) for y in [0, 1] (e^{−|x|} in softplus), to
// about 1 ulp of float32: log(1 + y) = 2·atanh(u) with u = y/(2 + y) ≤ 1/3,
// the odd series to u¹⁷ (what it leaves out is below 2e−10 relative). It returns
// a float64 for the loss's sum.
func log1pUnit(y float32) float64 {
	u := float64(y) / (2 + float64(y))
	u2 := u * u
	s := 1.0 / 17
	s = s*u2 + 1.0/15
	s = s*u2 + 1.0/13
	s = s*u2 + 1.0/11
	s = s*u2 + 1.0/9
	s = s*u2 + 1.0/7
	s = s*u2 + 1.0/5
	s = s*u2 + 1.0/3
	s = s*u2 + 1
	return 2 * u * s
}

// log1pPoly is log(1 + e) for e in [0, 1] in float32, without a division:
// the degree-10 Chebyshev interpolant on [0, 1] in monomial form (Horner),
// within 1.2e−7 absolute (float32's rounding of the result), 0 at e = 0.
// The self-adversarial logistic loss takes it once a negative.
func log1pPoly(e float32) float32 {
	p := float32(-0.002260995410520908)
	p = p*e + 0.015055349959962685
	p = p*e - 0.04705113561881805
	p = p*e + 0.09475556427367916
	p = p*e - 0.14533964263974175
	p = p*e + 0.19351750095739537
	p = p*e - 0.24872052848265655
	p = p*e + 0.33318192092223897
	p = p*e - 0.49999062475287737
	p = p*e + 0.9999997699016598
	return p * e
}
