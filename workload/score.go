package workload

import (
	"fmt"
	"slices"
	"strings"
)

// Model names a score function. It is either one of the named models
// (Dot, DistMult, ComplEx, TransEL1, TransEL2, RotatE), whose relation
// parameters are one set per relation used by both corrupted sides, or a
// PyTorch-BigGraph operator and comparator written "operator+comparator"
// (e.g. "linear+cos"), trained as PBG trains a graph with dynamic
// relations: each relation holds two operators, the left-hand one applied
// to the source when destinations are corrupted and the right-hand one
// applied to the destination when sources are corrupted. A pair that is a
// named model ("complex_diagonal+dot") is that model (ParseModel and
// ParseTriple return its name).
//
// For a named model the score of an edge (s, r, d) is
//
//	Dot:       <s, d>
//	DistMult:  Σ s_k r_k d_k
//	ComplEx:   Re(Σ s_k r_k conj(d_k))            ([re | im] halves)
//	TransEL1:  −Σ |s_k + r_k − d_k|
//	TransEL2:  −‖s + r − d‖₂
//	RotatE:    −Σ_k |s_k·e^{iθ_k} − d_k|            (complex k, θ: d/2 phases)
//
// and both corrupted sides score the same function: the destination side
// compares the query q = op_r(s) (s, s∘r, s·r, s + r, s·e^{iθ}) with each
// candidate destination x, the source side compares the query
// q′ = op*_r(d) (d, d∘r, (Re, −Im) of r·conj(d), d − r, d·e^{−iθ}) with each
// candidate source x, by the model's comparator (Operator, Comparator).
// For a PBG pair the destination side compares g_r(s) with x and the
// source side h_r(d) with x, g and h the relation's two operators.
type Model string

// The named score functions.
const (
	// Dot scores an edge as <s, d>; it has no relation parameters.
	Dot Model = "dot"
	// DistMult scores an edge as Σ s_k r_k d_k.
	DistMult Model = "distmult"
	// ComplEx scores an edge as Re(Σ s_k r_k conj(d_k)) with vectors of even
	// length d laid out as [real parts (d/2) | imaginary parts (d/2)].
	ComplEx Model = "complex"
	// TransEL1 is TransE (Bordes et al. 2013) with the L1 distance:
	// −Σ|s + r − d|.
	TransEL1 Model = "transe-l1"
	// TransEL2 is TransE with the L2 distance, −‖s + r − d‖₂ (PBG's
	// translation operator with the l2 comparator).
	TransEL2 Model = "transe-l2"
	// RotatE (Sun et al. 2019) rotates each complex coordinate of s by the
	// relation's phase θ_k (d/2 phases a relation) and scores
	// −Σ_k |s_k e^{iθ_k} − d_k|, the sum of complex moduli.
	RotatE Model = "rotate"
)

// Models lists the named score functions in a stable order.
var Models = []Model{Dot, DistMult, ComplEx, TransEL1, TransEL2, RotatE}

// Operator is a relation's transformation of an embedding (PBG's names,
// plus Rotate for RotatE).
type Operator string

// The operators.
const (
	OpNone            Operator = "none"             // x
	OpDiagonal        Operator = "diagonal"         // r∘x (d parameters)
	OpTranslation     Operator = "translation"      // x + r (d)
	OpLinear          Operator = "linear"           // A·x (d×d, row-major)
	OpAffine          Operator = "affine"           // A·x + b (d×d, then d)
	OpComplexDiagonal Operator = "complex_diagonal" // r·x, complex ([re | im], d)
	OpRotate          Operator = "rotate"           // x·e^{iθ} (d/2 phases; RotatE only)
)

// Operators lists PBG's operators (Rotate is RotatE's alone and is not
// one of them).
var Operators = []Operator{OpNone, OpDiagonal, OpTranslation, OpLinear, OpAffine, OpComplexDiagonal}

// Comparator scores a query q against a candidate x (PBG's names, plus L1
// for TransE-L1 and ModulusL1 for RotatE).
type Comparator string

// The comparators; a larger score is a more likely edge.
const (
	CmpDot       Comparator = "dot"        // <q, x>
	CmpCos       Comparator = "cos"        // <q, x> / (‖q‖ ‖x‖)
	CmpL2        Comparator = "l2"         // −‖q − x‖₂ (PBG: √ of max(‖q − x‖², 1e−30))
	CmpSquaredL2 Comparator = "squared_l2" // −‖q − x‖²
	CmpL1        Comparator = "l1"         // −Σ|q − x| (tierflow's, for TransE-L1)
	CmpModulusL1 Comparator = "modulus_l1" // −Σ_k |q_k − x_k|, complex k (RotatE)
)

// Comparators lists the comparators a PBG-style pair may use: PBG's four
// and L1 (ModulusL1 is RotatE's alone).
var Comparators = []Comparator{CmpDot, CmpCos, CmpL2, CmpSquaredL2, CmpL1}

type named struct {
	m   Model
	op  Operator
	cmp Comparator
}

// namedModels is the one table of the named models' operator and
// comparator (the order of Models).
var namedModels = []named{
	{Dot, OpNone, CmpDot},
	{DistMult, OpDiagonal, CmpDot},
	{ComplEx, OpComplexDiagonal, CmpDot},
	{TransEL1, OpTranslation, CmpL1},
	{TransEL2, OpTranslation, CmpL2},
	{RotatE, OpRotate, CmpModulusL1},
}

// modelAliases are other spellings of the named models (DGL-KE's and the
// papers'), after lower-casing and '_' → '-'.
var modelAliases = map[string]Model{
	"transe":    TransEL2,
	"transe-2":  TransEL2,
	"transe-1":  TransEL1,
	"dist-mult": DistMult,
}

// ParseOperator returns the named PBG operator (case-insensitive).
func ParseOperator(s string) (Operator, error) {
	o := Operator(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Operators, o) {
		return o, nil
	}
	if o == OpRotate {
		return "", fmt.Errorf("operator %q is RotatE's and has no PBG comparator pairing; use the model %q", s, RotatE)
	}
	return "", fmt.Errorf("unknown operator %q (want one of %s)", s, joinNames(Operators))
}

// ParseComparator returns the named comparator (case-insensitive).
func ParseComparator(s string) (Comparator, error) {
	c := Comparator(strings.ToLower(strings.TrimSpace(s)))
	if slices.Contains(Comparators, c) {
		return c, nil
	}
	return "", fmt.Errorf("unknown comparator %q (want one of %s)", s, joinNames(Comparators))
}

// ParseTriple returns the model of a PBG operator and comparator: the
// named model when the pair is one ("diagonal", "dot" → DistMult), the
// pair "operator+comparator" otherwise.
func ParseTriple(op, cmp string) (Model, error) {
	o, err := ParseOperator(op)
	if err != nil {
		return "", err
	}
	c, err := ParseComparator(cmp)
	if err != nil {
		return "", err
	}
	for _, n := range namedModels {
		if n.op == o && n.cmp == c {
			return n.m, nil
		}
	}
	return Model(string(o) + "+" + string(c)), nil
}

// ParseModel returns the score function a name gives: a named model
// (case-insensitive; "ComplEx", "TransE_l2" and "transe-l2" are accepted)
// or a PBG pair "operator+comparator" (ParseTriple).
func ParseModel(s string) (Model, error) {
	t := strings.ReplaceAll(strings.ToLower(strings.TrimSpace(s)), "_", "-")
	for _, m := range Models {
		if string(m) == t {
			return m, nil
		}
	}
	if m, ok := modelAliases[t]; ok {
		return m, nil
	}
	if op, cmp, ok := strings.Cut(strings.ToLower(strings.TrimSpace(s)), "+"); ok {
		m, err := ParseTriple(op, cmp)
		if err != nil {
			return "", fmt.Errorf("model %q: %w", s, err)
		}
		return m, nil
	}
	return "", fmt.Errorf("unknown model %q (want one of %s, or a PBG operator+comparator such as linear+cos)", s, joinNames(Models))
}

// Valid reports whether m is a named model or a well-formed PBG pair.
func (m Model) Valid() bool {
	_, _, ok := m.parts()
	return ok
}

// parts returns m's operator and comparator.
func (m Model) parts() (Operator, Comparator, bool) {
	for _, n := range namedModels {
		if n.m == m {
			return n.op, n.cmp, true
		}
	}
	op, cmp, ok := strings.Cut(string(m), "+")
	if !ok || !slices.Contains(Operators, Operator(op)) || !slices.Contains(Comparators, Comparator(cmp)) {
		return "", "", false
	}
	for _, n := range namedModels { // a named pair is only ever spelled by its name
		if n.op == Operator(op) && n.cmp == Comparator(cmp) {
			return "", "", false
		}
	}
	return Operator(op), Comparator(cmp), true
}

// Operator is m's relation operator ("" for an invalid model).
func (m Model) Operator() Operator { o, _, _ := m.parts(); return o }

// Comparator is m's comparator ("" for an invalid model).
func (m Model) Comparator() Comparator { _, c, _ := m.parts(); return c }

// Named reports whether m is one of Models (one parameter set a relation,
// shared by both sides); false for a PBG pair (two operators a relation).
func (m Model) Named() bool { return slices.Contains(Models, m) }

// OperatorWidth is the number of float32 parameters one operator of o
// holds at dimension d.
func OperatorWidth(o Operator, d int) int {
	switch o {
	case OpDiagonal, OpTranslation, OpComplexDiagonal:
		return d
	case OpLinear:
		return d * d
	case OpAffine:
		return d*d + d
	case OpRotate:
		return d / 2
	}
	return 0
}

// RelWidth is the number of float32 parameters one relation of m holds at
// dimension d (0: m has no relation parameters). A named model holds one
// operator; a PBG pair two, laid out [left-hand operator | right-hand
// operator] (the left-hand one, g, transforms sources; the right-hand one,
// h, destinations).
func (m Model) RelWidth(d int) int {
	w := OperatorWidth(m.Operator(), d)
	if !m.Named() {
		w *= 2
	}
	return w
}

// UsesRelations reports whether m has per-relation parameters.
func (m Model) UsesRelations() bool { return m.Valid() && m.Operator() != OpNone }

// Complex reports whether m treats an embedding as d/2 complex numbers
// ([re | im] halves): ComplEx, RotatE and every complex_diagonal pair.
func (m Model) Complex() bool {
	o := m.Operator()
	return o == OpComplexDiagonal || o == OpRotate
}

// Distance reports whether m's comparator is a negated distance (its
// scores are ≤ 0): l1, l2, squared_l2 and modulus_l1.
func (m Model) Distance() bool {
	switch m.Comparator() {
	case CmpL1, CmpL2, CmpSquaredL2, CmpModulusL1:
		return true
	}
	return false
}

// CheckDim reports whether d is a usable embedding dimension for m: d must
// be positive, and even for the complex models (first half real, second
// half imaginary parts). It also rejects an unknown model.
func (m Model) CheckDim(d int) error {
	if !m.Valid() {
		return fmt.Errorf("unknown model %q (want one of %s, or a PBG operator+comparator)", string(m), joinNames(Models))
	}
	if d <= 0 {
		return fmt.Errorf("embedding dimension %d must be positive", d)
	}
	if m.Complex() && d%2 != 0 {
		return fmt.Errorf("%s needs an even embedding dimension (real and imaginary halves), got %d", m, d)
	}
	return nil
}

// Loss names how a chunk's scores become its loss.
type Loss string

// The losses (PBG's names). Each query row has one positive score p and m
// negative scores n_k.
const (
	// Softmax is −log of p's share of the softmax over {p} ∪ {n_k}
	// (PBG's softmax, Marius' and tierflow's default).
	Softmax Loss = "softmax"
	// Ranking is Σ_k max(0, margin − p + n_k) (PBG's default).
	Ranking Loss = "ranking"
	// Logistic is softplus(−(p + γ)) + Σ_k w_k softplus(n_k + γ) with
	// w_k = 1/m (PBG's logistic when γ = 0) or, with self-adversarial
	// sampling, the softmax of α·(n_k) over the row's negatives, held
	// constant in the gradient (Sun et al. 2019; DGL-KE). γ is
	// Objective.Margin.
	Logistic Loss = "logistic"
)

// Losses lists the losses.
var Losses = []Loss{Softmax, Ranking, Logistic}

// Regularizer names the penalty on the parameters a chunk's positive edges
// read (their source and destination rows and their relation's
// parameters), times Objective.RegCoef.
type Regularizer string

// The regularizers.
const (
	// RegNone adds no penalty.
	RegNone Regularizer = "none"
	// RegL2 adds Σ θ² over the rows a positive edge reads.
	RegL2 Regularizer = "l2"
	// RegN3 adds Σ |θ|³ (Lacroix et al. 2018, PBG's N3): the modulus of
	// each complex coordinate for the complex models, |θ| otherwise.
	RegN3 Regularizer = "n3"
)

// Regularizers lists the regularizers.
var Regularizers = []Regularizer{RegNone, RegL2, RegN3}

// Objective is what a chunk minimises beside its score function: the loss
// and its options and the regularisation. The zero value is the softmax
// loss without regularisation (tierflow's behaviour before losses were
// options).
type Objective struct {
	Loss Loss `json:"loss,omitempty"`
	// Margin is the ranking loss's margin, or the logistic loss's γ (the
	// shift a distance model's scores get: RotatE's and DGL-KE's gamma).
	Margin float64 `json:"margin,omitempty"`
	// Adversarial is the self-adversarial temperature α of the logistic
	// and ranking losses (0: off, each negative weighs the same).
	Adversarial float64 `json:"adversarial,omitempty"`
	// Regularizer and RegCoef are the penalty and its coefficient.
	Regularizer Regularizer `json:"regularizer,omitempty"`
	RegCoef     float64     `json:"reg_coef,omitempty"`
}

// LossKind is o.Loss, or Softmax when unset.
func (o Objective) LossKind() Loss {
	if o.Loss == "" {
		return Softmax
	}
	return o.Loss
}

// Reg is o.Regularizer, or RegNone when unset.
func (o Objective) Reg() Regularizer {
	if o.Regularizer == "" {
		return RegNone
	}
	return o.Regularizer
}

// ParseLoss returns the named loss (case-insensitive; "" is Softmax).
func ParseLoss(s string) (Loss, error) {
	l := Loss(strings.ToLower(strings.TrimSpace(s)))
	if l == "" {
		return Softmax, nil
	}
	if slices.Contains(Losses, l) {
		return l, nil
	}
	return "", fmt.Errorf("unknown loss %q (want one of %s)", s, joinNames(Losses))
}

// ParseRegularizer returns the named regularizer (case-insensitive; "" is
// RegNone).
func ParseRegularizer(s string) (Regularizer, error) {
	r := Regularizer(strings.ToLower(strings.TrimSpace(s)))
	if r == "" {
		return RegNone, nil
	}
	if slices.Contains(Regularizers, r) {
		return r, nil
	}
	return "", fmt.Errorf("unknown regularizer %q (want one of %s)", s, joinNames(Regularizers))
}

// ObjectiveField names the field of an Objective an error is about, so that
// a command can print its own flag's name.
type ObjectiveField string

// The Objective's fields.
const (
	FieldLoss        ObjectiveField = "loss"
	FieldMargin      ObjectiveField = "margin"
	FieldAdversarial ObjectiveField = "adversarial"
	FieldRegularizer ObjectiveField = "regularizer"
	FieldRegCoef     ObjectiveField = "reg_coef"
)

// ObjectiveError is a bad Objective: the field at fault and why.
type ObjectiveError struct {
	Field ObjectiveField
	Err   error
}

func (e *ObjectiveError) Error() string { return fmt.Sprintf("%s: %v", e.Field, e.Err) }
func (e *ObjectiveError) Unwrap() error { return e.Err }

// Validate checks o for the model m: a known loss and regularizer,
// non-negative numbers, a margin only where the loss takes one, and
// self-adversarial weights only with the ranking or logistic loss (the
// softmax already weighs its negatives by their scores).
func (o Objective) Validate(m Model) error {
	bad := func(f ObjectiveField, format string, a ...any) error {
		return &ObjectiveError{Field: f, Err: fmt.Errorf(format, a...)}
	}
	if _, err := ParseLoss(string(o.Loss)); err != nil {
		return &ObjectiveError{Field: FieldLoss, Err: err}
	}
	if _, err := ParseRegularizer(string(o.Regularizer)); err != nil {
		return &ObjectiveError{Field: FieldRegularizer, Err: err}
	}
	switch {
	case o.Margin < 0:
		return bad(FieldMargin, "the margin must not be negative, got %g", o.Margin)
	case o.Adversarial < 0:
		return bad(FieldAdversarial, "the self-adversarial temperature must not be negative, got %g", o.Adversarial)
	case o.RegCoef < 0:
		return bad(FieldRegCoef, "the regularisation coefficient must not be negative, got %g", o.RegCoef)
	case o.LossKind() == Softmax && o.Margin != 0:
		return bad(FieldMargin, "the softmax loss takes no margin (the ranking loss's margin, the logistic loss's γ)")
	case o.LossKind() == Softmax && o.Adversarial != 0:
		return bad(FieldAdversarial, "self-adversarial weights go with the ranking or logistic loss; the softmax loss already weighs its negatives by their scores")
	case o.Reg() == RegNone && o.RegCoef != 0:
		return bad(FieldRegCoef, "a regularisation coefficient needs a regularizer (l2 or n3)")
	case o.Reg() != RegNone && o.RegCoef == 0:
		return bad(FieldRegCoef, "regularizer %s needs a positive coefficient", o.Reg())
	}
	return nil
}

// DefaultObjective is the objective a model trains with when none is
// given (printed with every run): the softmax loss without penalty, for
// every model.
//
// The logistic loss with self-adversarial weights (α = 1) trained
// DistMult and ComplEx better on the WordNet KG (below), and is what
// REPRODUCE recommends there; it is not the default because the gain was
// measured on one graph (Hits@10 falls a little while the MRR rises), an
// epoch takes 1.3–1.7× as long, and every validated prediction and
// published result of tierflow trains the softmax (a work directory
// trained before objectives were recorded resumes only under it).
//
// Filtered test MRR on the WN18-style WordNet KG (37,914 entities, 139,280
// training triples; `go run ./cmd/internal/wordnetkg /tmp/wn18`), d = 100,
// 100 negatives, lr 0.3, 2 workers, seeds 1, 2, 3; each run
// `realrun --edges train.tsv --valid valid.tsv --test test.tsv --model M
// --epochs 10 --seed S --eval end --loss L …`, measured 2026-11-27 on the
// CPU engine (2 shared cores):
//
//	objective, 10 epochs         distmult              complex
//	softmax                      0.773 0.765 0.764     0.878 0.879 0.879
//	ranking, margin 0.1 (PBG's)  0.201 0.203           0.196 0.198
//	ranking, margin 1            0.519                 0.587
//	logistic                     0.758 0.744 0.763     0.882 0.867 0.876
//	logistic, α = 0.5            0.814                 0.892
//	logistic, α = 1              0.815 0.810 0.820     0.890 0.888 0.888
//	logistic, α = 2              0.814                 0.881
//
// Hits@1 moves with the MRR (α = 1: DistMult 0.64–0.66 → 0.72–0.74,
// ComplEx 0.84 → 0.86–0.87); Hits@10 falls a little (DistMult 0.930–0.934
// → 0.925–0.930, ComplEx 0.934–0.937 → 0.923–0.929). At equal time, back
// to back: DistMult, seed 1, softmax 20 epochs (17.7 s of training) 0.788
// against α = 1 10 epochs (15.0 s) 0.810; ComplEx, seed 2, softmax 20
// epochs (19.6 s) 0.899 against α = 1 14 epochs (19.4 s) 0.911 (Hits@10
// 0.941 against 0.935). TransE-L2 (seed 1, 10 epochs): softmax 0.447,
// ranking margin 1 0.285, logistic α = 1 γ = 6 0.451.
func DefaultObjective(m Model) Objective {
	return Objective{Loss: Softmax, Regularizer: RegNone}
}

func joinNames[T ~string](xs []T) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = string(x)
	}
	return strings.Join(s, ", ")
}
