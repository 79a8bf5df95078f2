//go:build amd64 && !purego

package nn

import "github.com/tierflow/tierflow/realrun/model"

// sigmoidY replaces x[0:n] by their sigmoids (n a multiple of 8; AVX2+FMA).
//
//go:noescape
func sigmoidY(x *float32, n int)

// tanhY writes tanh(x[i]) to y[i] for i < n (n a multiple of 8; AVX2+FMA).
//
//go:noescape
func tanhY(x, y *float32, n int)

// vecAct reports whether the AVX2 kernels may run: the realrun/model
// kernels' level (which honours TIERFLOW_NOSIMD) is at least AVX2.
func vecAct() bool { return model.ActiveLevel() >= model.AVX2 }

// dotY returns Σ x[i]·y[i] over i < n (n a multiple of 8; AVX2+FMA).
//
//go:noescape
func dotY(x, y *float32, n int) float32

// lstmCellBackY is one row of SAGELSTM.Backward's elementwise step over
// its first n features (n a multiple of 8; AVX2+FMA): gt, dgt the row's
// 4h gates and their gradients, tc its tanh(c), cp the previous cell
// state (zeros at the first step), dh, dc the incoming gradients; dc is
// replaced by the gradient for the step before.
//
//go:noescape
func lstmCellBackY(gt, tc, cp, dh, dc, dgt *float32, h, n int)
