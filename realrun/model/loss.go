package model

import (
	"math"

	"github.com/tierflow/tierflow/workload"
)

// rowLoss is one query row's loss under the objective o: p is the row's
// positive score and row its m negative scores. It returns the row's loss
// and dL/dp, and overwrites row with dL/dn_k. It is the one place every
// comparator's scores become a loss (the regularisation is added apart).
func rowLoss(o *workload.Objective, p float32, row []float32) (loss float64, gp float32) {
	switch o.LossKind() {
	case workload.Softmax:
		return softmaxRow(p, row)
	}
	// TODO(i44-losses): ranking and logistic, self-adversarial weights.
	return math.NaN(), 0
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

// regularize adds the objective's penalty on the chunk's positive edges
// (their source and destination rows and relation rows; R and gR are n
// rows of k.RelWidth(d), nil without relation parameters) to gS, gR and gD
// and returns it. It is the one place the penalty is written.
func regularize(k workload.Model, o *workload.Objective, d int, S, R, D []float32, n int, gS, gR, gD []float32) float64 {
	if o.Reg() == workload.RegNone {
		return 0
	}
	// TODO(i44-losses): l2 and n3.
	return math.NaN()
}
