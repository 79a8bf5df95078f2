package nn

import "math"

// sigmoid is the logistic function.
func sigmoid(x float32) float32 { return 1 / (1 + expf(-x)) }

// tanhf is tanh in float32: 1 − 2/(e^{2x}+1), which neither overflows
// (expf saturates) nor loses more than about 1e-7 absolute.
func tanhf(x float32) float32 { return 1 - 2/(expf(2*x)+1) }

// expf is e^x in float32, saturating to e^−87 below −87 and to e^88
// above 88 (relative error ≈ 2e-7; see expInline).
func expf(x float32) float32 { return expInline(clampExp(x)) }

// sigmoidSlice replaces every x[k] by sigmoid(x[k]): eight at a time in
// assembly where the CPU has AVX2 and FMA, else with expInline (which the
// compiler inlines, unlike expf).
func sigmoidSlice(x []float32) {
	if n := len(x) &^ 7; n > 0 && vecAct() {
		sigmoidY(&x[0], n)
		x = x[n:]
	}
	for k, v := range x {
		x[k] = 1 / (1 + expInline(clampExp(-v)))
	}
}

// tanhSlice writes tanh(x[k]) to y[k].
func tanhSlice(x, y []float32) {
	y = y[:len(x)]
	if n := len(x) &^ 7; n > 0 && vecAct() {
		tanhY(&x[0], &y[0], n)
		x, y = x[n:], y[n:]
	}
	for k, v := range x {
		y[k] = 1 - 2/(expInline(clampExp(2*v))+1)
	}
}

// expInline is e^x for x in [−87, 88] (the caller clamps): x = n·ln2 + r
// with |r| ≤ ln2/2 (n rounded by the 1.5·2²³ trick, which Go's strict
// float32 arithmetic keeps; ln2 in two parts), e^r by its degree-6 Taylor
// polynomial (relative error ≈ 2e-7), 2^n through the exponent bits. It is
// small enough for the compiler to inline into a loop.
func expInline(x float32) float32 {
	t := x*1.44269504088896341 + 12582912 // 1.5·2²³ + n, n = round(x·log₂e)
	n := t - 12582912
	r := x - n*0.693359375 - n*-2.12194440e-4
	p := ((((float32(1.0/720)*r+1.0/120)*r+1.0/24)*r+1.0/6)*r+0.5)*r + 1
	return (p*r + 1) * math.Float32frombits((math.Float32bits(t)-0x4B400000+127)<<23)
}

// clampExp clamps an exponent to expInline's range.
func clampExp(x float32) float32 {
	if x < -87 {
		return -87
	}
	if x > 88 {
		return 88
	}
	return x
}
