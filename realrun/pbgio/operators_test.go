package pbgio_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tierflow/tierflow/realrun/pbgio"
	"github.com/tierflow/tierflow/workload"
)

// pbgOp applies PBG's operator op (torchbiggraph/operators.py) with the
// parameters under prefix to x; row picks a dynamic operator's relation
// (its parameters have a leading dimension of relations), -1 a static one.
func pbgOp(op string, params map[string][]float32, prefix string, row int, x []float32) []float32 {
	d := len(x)
	get := func(name string, n int) []float32 {
		v := params[prefix+name]
		if row >= 0 {
			return v[row*n : (row+1)*n]
		}
		return v
	}
	out := make([]float32, d)
	matVec := func(a []float32) {
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				out[j] += a[j*d+k] * x[k]
			}
		}
	}
	switch op {
	case "none":
		copy(out, x)
	case "diagonal":
		name := "diagonal"
		if row >= 0 {
			name = "diagonals"
		}
		for k, v := range get(name, d) {
			out[k] = v * x[k]
		}
	case "translation":
		name := "translation"
		if row >= 0 {
			name = "translations"
		}
		for k, v := range get(name, d) {
			out[k] = x[k] + v
		}
	case "linear":
		matVec(get("linear_transformations", d*d))
	case "affine":
		matVec(get("linear_transformations", d*d))
		for k, v := range get("translations", d) {
			out[k] += v
		}
	case "complex_diagonal":
		h := d / 2
		re, im := get("real", h), get("imag", h)
		for k := 0; k < h; k++ {
			out[k] = x[k]*re[k] - x[h+k]*im[k]
			out[h+k] = x[k]*im[k] + x[h+k]*re[k]
		}
	default:
		panic("unknown PBG operator " + op)
	}
	return out
}

// pbgCompare is PBG's comparator cmp of a and b (model.py: cos prepares
// both by their norms; l2 clamps the squared distance at 1e-30).
func pbgCompare(cmp string, a, b []float32) float64 {
	var ab, aa, bb, dd float64
	for k := range a {
		x, y := float64(a[k]), float64(b[k])
		ab, aa, bb, dd = ab+x*y, aa+x*x, bb+y*y, dd+(x-y)*(x-y)
	}
	switch cmp {
	case "dot":
		return ab
	case "cos":
		return ab / math.Sqrt(aa) / math.Sqrt(bb)
	case "l2":
		return -math.Sqrt(math.Max(dd, 1e-30))
	case "squared_l2":
		return -dd
	}
	panic("unknown PBG comparator " + cmp)
}

// ourOp is our operator o with parameters p applied to x (the spec's
// table: diagonal r∘x, translation x + r, linear A·x, affine A·x + b,
// complex_diagonal r·x complex).
func ourOp(o workload.Operator, p, x []float32) []float32 {
	d := len(x)
	out := make([]float32, d)
	switch o {
	case workload.OpNone:
		copy(out, x)
	case workload.OpDiagonal:
		for k := range x {
			out[k] = p[k] * x[k]
		}
	case workload.OpTranslation:
		for k := range x {
			out[k] = x[k] + p[k]
		}
	case workload.OpLinear, workload.OpAffine:
		for j := 0; j < d; j++ {
			for k := 0; k < d; k++ {
				out[j] += p[j*d+k] * x[k]
			}
			if o == workload.OpAffine {
				out[j] += p[d*d+j]
			}
		}
	case workload.OpComplexDiagonal:
		h := d / 2
		for k := 0; k < h; k++ {
			out[k] = x[k]*p[k] - x[h+k]*p[h+k]
			out[h+k] = x[k]*p[h+k] + x[h+k]*p[k]
		}
	}
	return out
}

// ourScores are our two scores of edge (s, r, d): the destination side's
// C(G(s; r), d) and the source side's C(H(d; r), s). For a named model
// they are one score; for a PBG pair G is the row's first operator, H
// its second.
func ourScores(m workload.Model, row, s, d []float32) (dst, src float64) {
	cmp := string(m.Comparator())
	switch {
	case m == workload.TransEL2:
		var q []float32
		for k := range s {
			q = append(q, s[k]+row[k])
		}
		dst = pbgCompare("l2", q, d)
		return dst, dst
	case m.Named(): // distmult Σ s·r·d, complex Re Σ s·r·conj(d)
		var q []float32
		if m == workload.DistMult {
			q = ourOp(workload.OpDiagonal, row, s)
		} else {
			q = ourOp(workload.OpComplexDiagonal, row, s)
		}
		dst = pbgCompare(cmp, q, d) // Re(q·conj(d)) = <q, d> in [re | im]
		return dst, dst
	}
	w := len(row) / 2
	return pbgCompare(cmp, ourOp(m.Operator(), row[:w], s), d), pbgCompare(cmp, ourOp(m.Operator(), row[w:], d), s)
}

// Every exported operator scores every edge in PBG as we do: PBG's score
// recomputed from the parameters the export writes (its static rhs
// operator, or its dynamic lhs and rhs operators) equals ours, on both
// corrupted sides; and the parameters read back are ours.
func TestExportedOperatorScores(t *testing.T) {
	const rels, d = 3, 4
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range []string{"distmult", "complex", "transe-l2", "diagonal+cos", "diagonal+l2", "translation+dot", "translation+squared_l2",
		"linear+cos", "linear+dot", "affine+l2", "affine+squared_l2", "complex_diagonal+cos", "complex_diagonal+l2"} {
		t.Run(name, func(t *testing.T) {
			m, err := workload.ParseModel(name)
			require.NoError(t, err)
			w := m.RelWidth(d)
			rel := make([]float32, rels*w)
			for i := range rel {
				rel[i] = float32(rng.NormFloat64())
			}
			params, err := pbgio.RelationParams(m, rel, rels, d)
			require.NoError(t, err)
			byName := map[string][]float32{}
			sizes, err := pbgio.ParamNames(m, rels, d)
			require.NoError(t, err)
			require.Len(t, params, len(sizes))
			for i, p := range params {
				assert.Equal(t, sizes[i].Name, p.Name)
				assert.Len(t, p.Data, sizes[i].Floats, p.Name)
				n := 1
				for _, x := range p.Shape() {
					n *= x
				}
				assert.Equal(t, len(p.Data), n, "%s: shape %v", p.Name, p.Shape())
				byName[p.Name] = p.Data
			}
			back, err := pbgio.Relations(m, byName, rels, d)
			require.NoError(t, err)
			assert.Equal(t, rel, back)
			op, err := pbgio.Operator(m)
			require.NoError(t, err)
			cmp := pbgio.Comparator(m)
			for r := 0; r < rels; r++ {
				s, dst := make([]float32, d), make([]float32, d)
				for k := range s {
					s[k], dst[k] = float32(rng.NormFloat64()), float32(rng.NormFloat64())
				}
				wantDst, wantSrc := ourScores(m, rel[r*w:(r+1)*w], s, dst)
				var gotDst, gotSrc float64
				if pbgio.Dynamic(m) {
					// PBG's dynamic relations: c(g_r(u), v) when
					// destinations are corrupted, c(u, h_r(v)) when sources are.
					gotDst = pbgCompare(cmp, pbgOp(op, byName, "relations/0/operator/lhs/", r, s), dst)
					gotSrc = pbgCompare(cmp, s, pbgOp(op, byName, "relations/0/operator/rhs/", r, dst))
				} else {
					// Static relations: the rhs operator, c(u, f_r(v)).
					gotDst = pbgCompare(cmp, s, pbgOp(op, byName, fmt.Sprintf("relations/%d/operator/rhs/", r), -1, dst))
					gotSrc = gotDst
				}
				assert.InDelta(t, wantDst, gotDst, 1e-4, "relation %d, destination side", r)
				assert.InDelta(t, wantSrc, gotSrc, 1e-4, "relation %d, source side", r)
			}
		})
	}
}

// The score functions PBG cannot express are refused in one line naming
// why; the layout of the dynamic relations is PBG's (names, keys, shapes).
func TestPBGForms(t *testing.T) {
	for _, tc := range []struct {
		model string
		why   string // "" has a PBG form
	}{
		{"dot", ""}, {"distmult", ""}, {"complex", ""}, {"transe-l2", ""}, {"linear+cos", ""}, {"none+l2", ""},
		{"transe-l1", "l1 comparator"}, {"diagonal+l1", "l1 comparator"}, {"affine+l1", "l1 comparator"}, {"rotate", "RotatE"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			m, err := workload.ParseModel(tc.model)
			require.NoError(t, err)
			op, err := pbgio.Operator(m)
			_, perr := pbgio.RelationParams(m, make([]float32, 2*m.RelWidth(4)), 2, 4)
			if tc.why == "" {
				require.NoError(t, err)
				require.NoError(t, perr)
				assert.Equal(t, string(m.Operator()), op)
				assert.Empty(t, pbgio.NoPBGForm(m))
				return
			}
			assert.ErrorContains(t, err, tc.why)
			assert.ErrorContains(t, perr, tc.why)
			assert.NotContains(t, err.Error(), "\n")
			assert.Contains(t, pbgio.NoPBGForm(m), tc.why)
		})
	}
	m := workload.Model("affine+cos")
	params, err := pbgio.RelationParams(m, make([]float32, 3*m.RelWidth(2)), 3, 2)
	require.NoError(t, err)
	var got []string
	for _, p := range params {
		got = append(got, fmt.Sprintf("%s %s %v", p.Name, p.Key, p.Shape()))
	}
	assert.Equal(t, []string{
		"relations/0/operator/lhs/linear_transformations lhs_operators.0.linear_transformations [3 2 2]",
		"relations/0/operator/lhs/translations lhs_operators.0.translations [3 2]",
		"relations/0/operator/rhs/linear_transformations rhs_operators.0.linear_transformations [3 2 2]",
		"relations/0/operator/rhs/translations rhs_operators.0.translations [3 2]",
	}, got)
}
