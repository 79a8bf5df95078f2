package pbgio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/workload"
)

// Checkpoint is a checkpoint directory in PBG's layout (PBG's own or one
// Export wrote) opened for reading, as PBG's loader reads it: the
// version from checkpoint_version.txt (0 when absent), each HDF5 file's
// format_version checked, embeddings by entity partition with the
// entity's global embedding added when the config has one.
type Checkpoint struct {
	Dir     string
	Version int
	// Entity is the checkpoint's one entity type, Parts its partitions
	// (OpenCheckpoint; the first of Entities for OpenTyped), Dim the
	// dimension.
	Entity string
	Parts  int
	Dim    int
	// Entities are every entity type with its partitions, by name.
	Entities []EntitySummary
	Config   Config
	names    string               // the directory of the entity_names files
	global   map[string][]float32 // each entity's global embedding, if any
}

// OpenCheckpoint opens a PBG-layout checkpoint directory: its config.json,
// checkpoint_version.txt and, where the config has global embeddings, the
// model file's global embedding of its entity type. It holds one entity
// type (an untyped graph's; OpenTyped reads several).
func OpenCheckpoint(dir string) (*Checkpoint, error) { return open(dir, false) }

// OpenTyped is OpenCheckpoint for a checkpoint of any number of entity
// types (a typed work directory's export, or PBG's): each is read by
// EntityPartition.
func OpenTyped(dir string) (*Checkpoint, error) { return open(dir, true) }

func open(dir string, many bool) (*Checkpoint, error) {
	if !HDF5 {
		return nil, fmt.Errorf("%s: a PBG checkpoint: %w", dir, ErrNoHDF5)
	}
	cfg, err := readConfig(dir)
	if err != nil {
		return nil, fmt.Errorf("%s: not a PBG checkpoint directory: %w", dir, err)
	}
	c := &Checkpoint{Dir: dir, Config: cfg, Dim: cfg.Dimension}
	if data, err := os.ReadFile(filepath.Join(dir, VersionFile)); err == nil {
		if s := strings.TrimSpace(string(data)); s != "" {
			if c.Version, err = strconv.Atoi(s); err != nil {
				return nil, fmt.Errorf("%s: %s holds %q, not a version", dir, VersionFile, s)
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	var types []string
	for name := range cfg.Entities {
		types = append(types, name)
	}
	slices.Sort(types)
	if len(types) != 1 && !many || len(types) == 0 {
		return nil, fmt.Errorf("%s: %d entity types (%s); tierflow reads a checkpoint of one", dir, len(types), strings.Join(types, ", "))
	}
	c.Entity, c.Parts = types[0], cfg.Entities[types[0]].NumPartitions
	if c.Dim < 1 {
		return nil, fmt.Errorf("%s: %s has dimension %d", dir, ConfigFile, c.Dim)
	}
	for _, t := range types {
		n := cfg.Entities[t].NumPartitions
		if n < 1 {
			return nil, fmt.Errorf("%s: %s gives entity %s %d partitions", dir, ConfigFile, t, n)
		}
		c.Entities = append(c.Entities, EntitySummary{Name: t, Partitions: n})
	}
	c.names = dir
	if _, err := os.Stat(filepath.Join(dir, NamesFile(c.Entity, 0))); err != nil && cfg.EntityPath != "" {
		c.names = cfg.EntityPath
		if !filepath.IsAbs(c.names) {
			if _, err := os.Stat(c.names); err != nil {
				c.names = filepath.Join(dir, cfg.EntityPath)
			}
		}
	}
	if cfg.GlobalEmb {
		model := filepath.Join(dir, ModelFile(c.Version))
		if _, err := os.Stat(model); err == nil {
			c.global = map[string][]float32{}
			for _, t := range types {
				_, g, err := readH5(model, modelGroup+"/entities/"+t+"/global_embedding")
				switch {
				case errors.Is(err, errNoDataset):
				case err != nil:
					return nil, err
				case len(g) != c.Dim:
					return nil, fmt.Errorf("%s: global embedding of %s has %d floats, the dimension is %d", model, t, len(g), c.Dim)
				default:
					c.global[t] = g
				}
			}
		}
	}
	return c, nil
}

// Names are the names of partition p's entities, in row order.
func (c *Checkpoint) Names(p int) ([]string, error) { return c.EntityNames(c.Entity, p) }

// EntityNames are the names of partition p of entity type entity, in row
// order.
func (c *Checkpoint) EntityNames(entity string, p int) ([]string, error) {
	path := filepath.Join(c.names, NamesFile(entity, p))
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s: entity names: %w", c.Dir, err)
	}
	var names []string
	if err := json.Unmarshal(data, &names); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return names, nil
}

// Partition returns partition p's entity names and embeddings (one row of
// Dim floats per name), the global embedding added.
func (c *Checkpoint) Partition(p int) ([]string, []float32, error) {
	return c.EntityPartition(c.Entity, p)
}

// EntityPartition is Partition of partition p of entity type entity.
func (c *Checkpoint) EntityPartition(entity string, p int) ([]string, []float32, error) {
	names, err := c.EntityNames(entity, p)
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(c.Dir, EmbeddingsFile(entity, p, c.Version))
	dims, emb, err := readH5(path, embeddingsName)
	if err != nil {
		return nil, nil, err
	}
	if len(dims) != 2 || dims[0] != len(names) || dims[1] != c.Dim {
		return nil, nil, fmt.Errorf("%s: embeddings of shape %v, want (%d, %d) for %d names at dimension %d", path, dims, len(names), c.Dim, len(names), c.Dim)
	}
	if g := c.global[entity]; g != nil {
		for i := range emb {
			emb[i] += g[i%c.Dim]
		}
	}
	return names, emb, nil
}

// Relations reads the relation parameters of score function m (rels
// rows of m.RelWidth(Dim) floats; nil for a model without any) back from
// the model file (see Relations).
func (c *Checkpoint) Relations(m workload.Model, rels int) ([]float32, error) {
	if !m.UsesRelations() {
		return nil, nil
	}
	path := filepath.Join(c.Dir, ModelFile(c.Version))
	want, err := ParamNames(m, rels, c.Dim)
	if err != nil {
		return nil, err
	}
	params := map[string][]float32{}
	for _, p := range want {
		_, v, err := readH5(path, modelGroup+"/"+p.Name)
		if err != nil {
			return nil, err
		}
		params[p.Name] = v
	}
	out, err := Relations(m, params, rels, c.Dim)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}
