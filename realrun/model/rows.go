package model

// The per-entry transforms of the GEMM comparators (sideGEMM), on the
// active level's vector kernels (l2Fwd, sqFwd, cosFwd, mulBack, cosBack;
// the ragged tail and Generic in Go). The kernels round every step as the
// Go loops do, so the rows agree bit for bit across levels; the returned
// sums are added in another order.

// l2FwdGo: D2 = (q2 − 2u) + nn_k; row_k = −sqrt(max(D2, 1e−30));
// f_k = 1/sqrt(D2) where D2 > 1e−30, else 0.
func l2FwdGo(row, nn, f []float32, q2 float32) {
	nn, f = nn[:len(row)], f[:len(row)]
	for k, u := range row {
		D2 := q2 - float32(2*u) + nn[k]
		if D2 > distClamp {
			dist := sqrt32(D2)
			row[k] = -dist
			f[k] = 1 / dist
		} else {
			row[k] = -sqrt32(distClamp)
			f[k] = 0
		}
	}
}

// sqFwdGo: row_k = (2u − q2) − nn_k.
func sqFwdGo(row, nn []float32, q2 float32) {
	nn = nn[:len(row)]
	for k, u := range row {
		row[k] = float32(2*u) - q2 - nn[k]
	}
}

// cosFwdGo: row_k = f_k = (u·ia)·ninv_k.
func cosFwdGo(row, ninv, f []float32, ia float32) {
	ninv, f = ninv[:len(row)], f[:len(row)]
	for k, u := range row {
		s := u * ia * ninv[k]
		row[k] = s
		f[k] = s
	}
}

// mulBackGo: c_k = row_k·f_k; row_k = c_k; cc_k += c_k; returns Σ c_k.
func mulBackGo(row, f, cc []float32) float32 {
	f, cc = f[:len(row)], cc[:len(row)]
	var rs float32
	for k, G := range row {
		c := float32(G * f[k])
		row[k] = c
		rs += c
		cc[k] += c
	}
	return rs
}

// cosBackGo: gs_k = row_k·f_k; cc_k += gs_k; row_k = (row_k·ia)·ninv_k;
// returns Σ gs_k.
func cosBackGo(row, f, ninv, cc []float32, ia float32) float32 {
	f, ninv, cc = f[:len(row)], ninv[:len(row)], cc[:len(row)]
	var rs float32
	for k, G := range row {
		gs := float32(G * f[k])
		rs += gs
		cc[k] += gs
		row[k] = G * ia * ninv[k]
	}
	return rs
}

func l2FwdRow(row, nn, f []float32, q2 float32) {
	z, y := split(len(row))
	if z > 0 {
		l2FwdZ(&row[0], &nn[0], &f[0], q2, z)
	}
	if y > 0 {
		l2FwdY(&row[z], &nn[z], &f[z], q2, y)
	}
	l2FwdGo(row[z+y:], nn[z+y:], f[z+y:], q2)
}

func sqFwdRow(row, nn []float32, q2 float32) {
	z, y := split(len(row))
	if z > 0 {
		sqFwdZ(&row[0], &nn[0], q2, z)
	}
	if y > 0 {
		sqFwdY(&row[z], &nn[z], q2, y)
	}
	sqFwdGo(row[z+y:], nn[z+y:], q2)
}

func cosFwdRow(row, ninv, f []float32, ia float32) {
	z, y := split(len(row))
	if z > 0 {
		cosFwdZ(&row[0], &ninv[0], &f[0], ia, z)
	}
	if y > 0 {
		cosFwdY(&row[z], &ninv[z], &f[z], ia, y)
	}
	cosFwdGo(row[z+y:], ninv[z+y:], f[z+y:], ia)
}

func mulBackRow(row, f, cc []float32) float32 {
	z, y := split(len(row))
	var s float32
	if z > 0 {
		s = mulBackZ(&row[0], &f[0], &cc[0], z)
	}
	if y > 0 {
		s += mulBackY(&row[z], &f[z], &cc[z], y)
	}
	return s + mulBackGo(row[z+y:], f[z+y:], cc[z+y:])
}

func cosBackRow(row, f, ninv, cc []float32, ia float32) float32 {
	z, y := split(len(row))
	var s float32
	if z > 0 {
		s = cosBackZ(&row[0], &f[0], &ninv[0], &cc[0], ia, z)
	}
	if y > 0 {
		s += cosBackY(&row[z], &f[z], &ninv[z], &cc[z], ia, y)
	}
	return s + cosBackGo(row[z+y:], f[z+y:], ninv[z+y:], cc[z+y:], ia)
}
