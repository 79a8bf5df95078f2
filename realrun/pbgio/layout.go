package pbgio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tierflow/tierflow/workload"
)

// ErrNoHDF5 is what a build without -tags hdf5 returns for any HDF5 file.
var ErrNoHDF5 = errors.New("HDF5 needs a build with -tags hdf5 (cgo and Debian's libhdf5-dev: make build-hdf5); the default build has no cgo")

// Entity is the entity type our nodes have in the PBG layout.
const Entity = "node"

// The file names and HDF5 names of PBG's checkpoint and entity layout.
const (
	VersionFile      = "checkpoint_version.txt"
	ConfigFile       = "config.json"
	RelationNames    = "dynamic_rel_names.json"
	RelationCount    = "dynamic_rel_count.txt"
	FormatVersion    = 1
	formatVersionKey = "format_version"
	configAttr       = "config/json"
	embeddingsName   = "embeddings"
	modelGroup       = "model"
	stateDictKeyAttr = "state_dict_key"
)

// EmbeddingsFile is the name of an entity partition's embeddings.
func EmbeddingsFile(entity string, part, version int) string {
	return fmt.Sprintf("embeddings_%s_%d.v%d.h5", entity, part, version)
}

// ModelFile is the name of the file holding the relation parameters.
func ModelFile(version int) string { return fmt.Sprintf("model.v%d.h5", version) }

// CountFile and NamesFile are the names of an entity partition's count and
// names (PBG's importer writes them into its entity_path).
func CountFile(entity string, part int) string {
	return fmt.Sprintf("entity_count_%s_%d.txt", entity, part)
}

// NamesFile is the JSON list of an entity partition's names, in row order.
func NamesFile(entity string, part int) string {
	return fmt.Sprintf("entity_names_%s_%d.json", entity, part)
}

// NoPBGForm is why a score function has no PyTorch-BigGraph form ("" when
// it has one): PBG has neither an l1 comparator nor RotatE's rotation.
func NoPBGForm(m workload.Model) string {
	switch {
	case !m.Valid():
		return fmt.Sprintf("%q is no score function", string(m))
	case m == workload.RotatE:
		return "RotatE's rotation (modulus_l1 of s·e^{iθ} − d) is no PBG operator and comparator"
	case m.Comparator() == workload.CmpL1:
		return fmt.Sprintf("%s scores with the l1 comparator, which PBG does not have (its comparators: dot, cos, l2, squared_l2)", m)
	}
	return ""
}

// Operator is PBG's relation operator for a score function: none,
// diagonal and complex_diagonal for dot, distmult and complex, translation
// for transe-l2, the pair's operator for a PBG pair. A score function
// with no PBG form is an error saying why (NoPBGForm).
func Operator(m workload.Model) (string, error) {
	if why := NoPBGForm(m); why != "" {
		return "", fmt.Errorf("score function %s has no PyTorch-BigGraph form: %s", m, why)
	}
	return string(m.Operator()), nil
}

// Comparator is PBG's comparator for a score function with a PBG form.
func Comparator(m workload.Model) string { return string(m.Comparator()) }

// Dynamic reports whether m is exported as PBG's dynamic relations (a PBG
// pair: one lhs and one rhs operator per relation, each dataset holding
// every relation's parameters); the named models export one rhs operator
// per relation type, as PBG's static relations.
func Dynamic(m workload.Model) bool { return !m.Named() }

// Param is one relation parameter as PBG's model file holds it: its
// public name (a dataset under the "model" group), the private state-dict
// key PBG attaches as an attribute, its shape (nil: one dimension) and its
// values (row-major).
type Param struct {
	Name, Key string
	Dims      []int
	Data      []float32
}

// Shape is p's shape: Dims, or len(Data) when Dims is nil.
func (p Param) Shape() []int {
	if p.Dims == nil {
		return []int{len(p.Data)}
	}
	return p.Dims
}

// opParam is one parameter tensor of a PBG operator: its name and its
// floats in our row of the operator (at offset off, n floats).
type opParam struct {
	name   string
	off, n int
	dims   []int // one operator's shape
}

// dynamicParams are the parameters of PBG's dynamic operator o at
// dimension d (torchbiggraph/operators.py), in our row's layout:
// diagonals, translations (d); linear_transformations (d×d, row-major:
// PBG's matmul(A, x)); affine's linear_transformations then translations;
// complex_diagonal's real then imag halves (d/2 each).
func dynamicParams(o workload.Operator, d int) []opParam {
	switch o {
	case workload.OpDiagonal:
		return []opParam{{"diagonals", 0, d, []int{d}}}
	case workload.OpTranslation:
		return []opParam{{"translations", 0, d, []int{d}}}
	case workload.OpLinear:
		return []opParam{{"linear_transformations", 0, d * d, []int{d, d}}}
	case workload.OpAffine:
		return []opParam{{"linear_transformations", 0, d * d, []int{d, d}}, {"translations", d * d, d, []int{d}}}
	case workload.OpComplexDiagonal:
		return []opParam{{"real", 0, d / 2, []int{d / 2}}, {"imag", d / 2, d / 2, []int{d / 2}}}
	}
	return nil
}

// pbgSides are a pair's operators in our relation row, [g | h]: g, the
// left-hand one, is PBG's lhs operator; h is its rhs operator.
var pbgSides = []string{"lhs", "rhs"}

// RelationParams turns our relation parameters (rels rows of
// m.RelWidth(d) floats, nil for a model without any) into PBG's:
//   - distmult: relation i's rhs operator "relations/i/operator/rhs/diagonal";
//   - complex: ".../real" and ".../imag", the imaginary parts negated (see
//     the package doc);
//   - transe-l2: ".../translation" = −r: PBG scores l2(s, d + t) and we
//     −‖s + r − d‖ = −‖s − (d − r)‖;
//   - a PBG pair: the dynamic relations' one operator per side,
//     "relations/0/operator/lhs/<param>" and ".../rhs/<param>", each
//     holding every relation's parameters (a leading dimension of rels):
//     our g the lhs operator (applied to sources, scored against
//     destinations), h the rhs one.
//
// A model with no PBG form is an error (Operator).
func RelationParams(m workload.Model, rel []float32, rels, d int) ([]Param, error) {
	if _, err := Operator(m); err != nil {
		return nil, err
	}
	if !m.UsesRelations() {
		return nil, nil
	}
	w := m.RelWidth(d)
	if len(rel) < rels*w {
		return nil, fmt.Errorf("%d relation floats for %d relations of %d floats (%s, d=%d)", len(rel), rels, w, m, d)
	}
	if Dynamic(m) {
		return dynamicRelationParams(m, rel, rels, d), nil
	}
	var out []Param
	for i := 0; i < rels; i++ {
		row := rel[i*w : (i+1)*w]
		param := func(name string, data []float32) Param {
			return Param{Name: fmt.Sprintf("relations/%d/operator/rhs/%s", i, name), Key: fmt.Sprintf("rhs_operators.%d.%s", i, name), Data: data}
		}
		switch m {
		case workload.DistMult:
			out = append(out, param("diagonal", append([]float32(nil), row...)))
		case workload.TransEL2:
			t := make([]float32, d)
			for k, x := range row {
				t[k] = -x
			}
			out = append(out, param("translation", t))
		case workload.ComplEx:
			h := d / 2
			imag := make([]float32, h)
			for k := range imag {
				imag[k] = -row[h+k]
			}
			out = append(out, param("real", append([]float32(nil), row[:h]...)), param("imag", imag))
		}
	}
	return out, nil
}

func dynamicRelationParams(m workload.Model, rel []float32, rels, d int) []Param {
	w := m.RelWidth(d)
	ow := w / 2
	var out []Param
	for side, name := range pbgSides {
		for _, p := range dynamicParams(m.Operator(), d) {
			data := make([]float32, 0, rels*p.n)
			for i := 0; i < rels; i++ {
				o := i*w + side*ow + p.off
				data = append(data, rel[o:o+p.n]...)
			}
			out = append(out, Param{Name: fmt.Sprintf("relations/0/operator/%s/%s", name, p.name), Key: fmt.Sprintf("%s_operators.0.%s", name, p.name),
				Dims: append([]int{rels}, p.dims...), Data: data})
		}
	}
	return out
}

// ParamSize is a parameter's public name and the floats it holds.
type ParamSize struct {
	Name   string
	Floats int
}

// ParamNames are the parameters RelationParams writes for m with rels
// relations, in its order.
func ParamNames(m workload.Model, rels, d int) ([]ParamSize, error) {
	if _, err := Operator(m); err != nil {
		return nil, err
	}
	var out []ParamSize
	if !m.UsesRelations() {
		return out, nil
	}
	if Dynamic(m) {
		for _, side := range pbgSides {
			for _, p := range dynamicParams(m.Operator(), d) {
				out = append(out, ParamSize{fmt.Sprintf("relations/0/operator/%s/%s", side, p.name), rels * p.n})
			}
		}
		return out, nil
	}
	names := map[workload.Model][]string{workload.DistMult: {"diagonal"}, workload.TransEL2: {"translation"}, workload.ComplEx: {"real", "imag"}}[m]
	n := d
	if m == workload.ComplEx {
		n = d / 2
	}
	for i := 0; i < rels; i++ {
		for _, name := range names {
			out = append(out, ParamSize{fmt.Sprintf("relations/%d/operator/rhs/%s", i, name), n})
		}
	}
	return out, nil
}

// Relations turns PBG's operator parameters back into our relation
// parameters (the inverse of RelationParams); params maps public names to
// values.
func Relations(m workload.Model, params map[string][]float32, rels, d int) ([]float32, error) {
	want, err := ParamNames(m, rels, d)
	if err != nil {
		return nil, err
	}
	if !m.UsesRelations() {
		return nil, nil
	}
	for _, p := range want {
		v, ok := params[p.Name]
		if !ok {
			return nil, fmt.Errorf("no parameter %s", p.Name)
		}
		if len(v) != p.Floats {
			return nil, fmt.Errorf("parameter %s holds %d floats, want %d", p.Name, len(v), p.Floats)
		}
	}
	w := m.RelWidth(d)
	out := make([]float32, rels*w)
	if Dynamic(m) {
		for side, name := range pbgSides {
			for _, p := range dynamicParams(m.Operator(), d) {
				v := params[fmt.Sprintf("relations/0/operator/%s/%s", name, p.name)]
				for i := 0; i < rels; i++ {
					copy(out[i*w+side*(w/2)+p.off:], v[i*p.n:(i+1)*p.n])
				}
			}
		}
		return out, nil
	}
	for i := 0; i < rels; i++ {
		row := out[i*w : (i+1)*w]
		get := func(name string) []float32 { return params[fmt.Sprintf("relations/%d/operator/rhs/%s", i, name)] }
		switch m {
		case workload.DistMult:
			copy(row, get("diagonal"))
		case workload.TransEL2:
			for k, x := range get("translation") {
				row[k] = -x
			}
		case workload.ComplEx:
			h := d / 2
			copy(row, get("real"))
			for k, x := range get("imag") {
				row[h+k] = -x
			}
		}
	}
	return out, nil
}

// Config is the part of PBG's config.json the layout needs: the entity
// types and their partitions, the relation types and their operators,
// the dimension and the score (PBG's ConfigSchema field names; every
// other field keeps PBG's default). GlobalEmb is false: our embeddings
// have no per-type global vector.
type Config struct {
	Entities   map[string]EntityConfig `json:"entities"`
	Relations  []RelationConfig        `json:"relations"`
	Dimension  int                     `json:"dimension"`
	Comparator string                  `json:"comparator"`
	// DynamicRelations: one entry in Relations stands for every relation
	// (dynamic_rel_count.txt and dynamic_rel_names.json in EntityPath);
	// a PBG pair's export.
	DynamicRelations bool     `json:"dynamic_relations"`
	LossFn           string   `json:"loss_fn"`
	GlobalEmb        bool     `json:"global_emb"`
	Bias             bool     `json:"bias"`
	EntityPath       string   `json:"entity_path"`
	EdgePaths        []string `json:"edge_paths"`
	CheckpointPath   string   `json:"checkpoint_path"`
	NumEpochs        int      `json:"num_epochs"`
}

// EntityConfig is one entity type of Config.
type EntityConfig struct {
	NumPartitions int `json:"num_partitions"`
}

// RelationConfig is one relation type of Config.
type RelationConfig struct {
	Name     string `json:"name"`
	LHS      string `json:"lhs"`
	RHS      string `json:"rhs"`
	Operator string `json:"operator"`
}

// readConfig reads a checkpoint directory's config.json (PBG's or ours);
// unknown fields are ignored.
func readConfig(dir string) (Config, error) {
	var c Config
	data, err := os.ReadFile(filepath.Join(dir, ConfigFile))
	if err != nil {
		return c, err
	}
	c.GlobalEmb = true // PBG's default
	if err := json.Unmarshal(data, &c); err != nil {
		return c, fmt.Errorf("%s: %w", filepath.Join(dir, ConfigFile), err)
	}
	return c, nil
}
