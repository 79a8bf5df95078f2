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

// Operator is PBG's relation operator for a score function.
func Operator(m workload.Model) (string, error) {
	switch m {
	case workload.Dot:
		return "none", nil
	case workload.DistMult:
		return "diagonal", nil
	case workload.ComplEx:
		return "complex_diagonal", nil
	}
	return "", fmt.Errorf("score function %q has no PBG operator", m)
}

// Param is one relation parameter as PBG's model file holds it: its
// public name (a dataset under the "model" group), the private state-dict
// key PBG attaches as an attribute, and its values.
type Param struct {
	Name, Key string
	Data      []float32
}

// RelationParams turns our relation embeddings (rels × d floats, nil for
// dot) into PBG's parameters of the rhs operators: relation i's
// "relations/i/operator/rhs/diagonal" (distmult), or ".../real" and
// ".../imag" (complex, the imaginary parts negated: see the package
// doc).
func RelationParams(m workload.Model, rel []float32, rels, d int) ([]Param, error) {
	if !m.UsesRelations() {
		return nil, nil
	}
	if len(rel) < rels*d {
		return nil, fmt.Errorf("%d relation floats for %d relations of dimension %d", len(rel), rels, d)
	}
	var out []Param
	for i := 0; i < rels; i++ {
		row := rel[i*d : (i+1)*d]
		param := func(name string, data []float32) Param {
			return Param{Name: fmt.Sprintf("relations/%d/operator/rhs/%s", i, name), Key: fmt.Sprintf("rhs_operators.%d.%s", i, name), Data: data}
		}
		if m == workload.DistMult {
			out = append(out, param("diagonal", append([]float32(nil), row...)))
			continue
		}
		h := d / 2
		imag := make([]float32, h)
		for k := range imag {
			imag[k] = -row[h+k]
		}
		out = append(out, param("real", append([]float32(nil), row[:h]...)), param("imag", imag))
	}
	return out, nil
}

// Relations turns PBG's rhs operator parameters back into our relation
// embeddings (the inverse of RelationParams); params maps public names to
// values.
func Relations(m workload.Model, params map[string][]float32, rels, d int) ([]float32, error) {
	if !m.UsesRelations() {
		return nil, nil
	}
	out := make([]float32, rels*d)
	get := func(i int, name string, n int) ([]float32, error) {
		key := fmt.Sprintf("relations/%d/operator/rhs/%s", i, name)
		v, ok := params[key]
		if !ok {
			return nil, fmt.Errorf("no parameter %s", key)
		}
		if len(v) != n {
			return nil, fmt.Errorf("parameter %s holds %d floats, want %d", key, len(v), n)
		}
		return v, nil
	}
	for i := 0; i < rels; i++ {
		row := out[i*d : (i+1)*d]
		if m == workload.DistMult {
			v, err := get(i, "diagonal", d)
			if err != nil {
				return nil, err
			}
			copy(row, v)
			continue
		}
		h := d / 2
		re, err := get(i, "real", h)
		if err != nil {
			return nil, err
		}
		im, err := get(i, "imag", h)
		if err != nil {
			return nil, err
		}
		copy(row, re)
		for k, x := range im {
			row[h+k] = -x
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
	Entities       map[string]EntityConfig `json:"entities"`
	Relations      []RelationConfig        `json:"relations"`
	Dimension      int                     `json:"dimension"`
	Comparator     string                  `json:"comparator"`
	LossFn         string                  `json:"loss_fn"`
	GlobalEmb      bool                    `json:"global_emb"`
	Bias           bool                    `json:"bias"`
	EntityPath     string                  `json:"entity_path"`
	EdgePaths      []string                `json:"edge_paths"`
	CheckpointPath string                  `json:"checkpoint_path"`
	NumEpochs      int                     `json:"num_epochs"`
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
