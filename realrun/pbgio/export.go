package pbgio

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tierflow/tierflow/realrun"
	"github.com/tierflow/tierflow/realrun/graph"
	"github.com/tierflow/tierflow/realrun/store"
	"github.com/tierflow/tierflow/workload"
)

// Summary is what Export wrote.
type Summary struct {
	Dir        string `json:"dir"`
	Version    int    `json:"version"`
	Partitions int    `json:"partitions"`
	Nodes      int64  `json:"nodes"`
	Relations  int    `json:"relations"`
	Operator   string `json:"operator"`
	// Bytes is the size of every file written (10^6 bytes are a MB).
	Bytes int64 `json:"bytes"`
}

// CheckOut checks, before any work, that Export may write outDir: it
// does not exist, is empty, or holds an earlier export (a
// checkpoint_version.txt), and its parent can be written.
func CheckOut(outDir string) error {
	if !HDF5 {
		return ErrNoHDF5
	}
	if fi, err := os.Stat(outDir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s exists and is not a directory (a PBG export is a directory)", outDir)
		}
		if !replaceable(outDir) {
			return fmt.Errorf("%s exists and holds no PBG export (no %s); choose an empty or new directory", outDir, VersionFile)
		}
	}
	parent := filepath.Dir(filepath.Clean(outDir))
	f, err := os.CreateTemp(parent, ".pbg-check-*")
	if err != nil {
		return fmt.Errorf("%s: cannot write in %s: %w", outDir, parent, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func replaceable(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, VersionFile))
	return len(entries) == 0 || err == nil
}

// Export writes the current checkpoint of a work directory into outDir
// in PyTorch-BigGraph's checkpoint layout (see the package doc), one
// partition in memory at a time: nothing is visible at outDir until every
// file is written (a directory beside it is renamed into place, replacing
// an earlier export). Nodes are named as ids.tsv names them (their
// decimal ids for a generated graph), relations as relations.tsv does.
// The version is the number of epochs the checkpoint completed.
func Export(outDir string, st *store.Store) (Summary, error) {
	sum := Summary{Dir: outDir, Version: st.Current, Partitions: st.M.P, Nodes: st.M.Nodes, Relations: st.M.Relations}
	if err := CheckOut(outDir); err != nil {
		return sum, err
	}
	m, err := workload.ParseModel(st.M.Model)
	if err != nil {
		return sum, err
	}
	if sum.Operator, err = Operator(m); err != nil {
		return sum, err
	}
	rel, err := StoredRelations(st)
	if err != nil {
		return sum, err
	}
	params, err := RelationParams(m, rel, st.M.Relations, st.M.Dim)
	if err != nil {
		return sum, err
	}
	nodeNames, err := graph.ReadNames(filepath.Join(st.Dir, "ids.tsv"), st.M.Nodes)
	if err != nil {
		return sum, err
	}
	relNames, err := graph.ReadNames(filepath.Join(st.Dir, "relations.tsv"), int64(st.M.Relations))
	if err != nil {
		return sum, err
	}
	perm, err := st.Permutation()
	if err != nil {
		return sum, err
	}
	abs, err := filepath.Abs(outDir)
	if err != nil {
		return sum, err
	}
	cfg := Config{Entities: map[string]EntityConfig{Entity: {NumPartitions: st.M.P}}, Dimension: st.M.Dim, Comparator: "dot", LossFn: "softmax",
		EntityPath: abs, EdgePaths: []string{}, CheckpointPath: abs, NumEpochs: st.Current}
	for _, name := range relNames {
		cfg.Relations = append(cfg.Relations, RelationConfig{Name: name, LHS: Entity, RHS: Entity, Operator: sum.Operator})
	}
	cfgJSON, err := json.MarshalIndent(cfg, "", "    ")
	if err != nil {
		return sum, err
	}
	parent := filepath.Dir(abs)
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".writing-*")
	if err != nil {
		return sum, err
	}
	defer os.RemoveAll(tmp)
	// Node names by store id: the inverse of the relabelling.
	byStore := make([]string, st.M.Nodes)
	for orig, s := range perm {
		byStore[s] = nodeNames[orig]
	}
	nodeNames = nil
	if err := writePartitions(tmp, st, string(cfgJSON), byStore); err != nil {
		return sum, err
	}
	var sets []h5Set
	for _, p := range params {
		sets = append(sets, h5Set{Path: modelGroup + "/" + p.Name, Dims: []int{len(p.Data)}, Data: p.Data, Key: p.Key})
	}
	if err := writeH5(filepath.Join(tmp, ModelFile(sum.Version)), string(cfgJSON), []string{modelGroup}, sets); err != nil {
		return sum, err
	}
	files := map[string][]byte{ConfigFile: append(cfgJSON, '\n'), VersionFile: []byte(strconv.Itoa(sum.Version) + "\n")}
	if files[RelationNames], err = json.MarshalIndent(relNames, "", "    "); err != nil {
		return sum, err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(tmp, name), data, 0o644); err != nil {
			return sum, err
		}
	}
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return sum, err
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			sum.Bytes += fi.Size()
		}
	}
	return sum, replaceDir(tmp, abs)
}

// writePartitions writes every partition's embeddings, count and names
// into dir, reading one partition (checked against its checksum) at a
// time.
func writePartitions(dir string, st *store.Store, cfg string, byStore []string) error {
	ck := st.CurrentDir()
	sums, err := st.PartitionSums(ck)
	if err != nil {
		return err
	}
	buf, err := st.NewBuffer()
	if err != nil {
		return err
	}
	defer buf.Free()
	d := st.M.Dim
	for p := 0; p < st.M.P; p++ {
		if _, err := store.ReadPartitionChecked(ck, p, buf, sums[p]); err != nil {
			return err
		}
		first := int64(p) * st.M.Rows
		count := max(min(st.M.Rows, st.M.Nodes-first), 0)
		emb := buf.Floats()[:count*int64(d)]
		set := h5Set{Path: embeddingsName, Dims: []int{int(count), d}, Data: emb}
		if err := writeH5(filepath.Join(dir, EmbeddingsFile(Entity, p, st.Current)), cfg, nil, []h5Set{set}); err != nil {
			return err
		}
		names, err := json.MarshalIndent(byStore[first:first+count], "", "    ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, NamesFile(Entity, p)), names, 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, CountFile(Entity, p)), []byte(fmt.Sprintf("%d\n", count)), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// replaceDir renames tmp to dir, replacing an earlier export at dir
// (moved aside first, removed once tmp is in place).
func replaceDir(tmp, dir string) error {
	if _, err := os.Stat(dir); err == nil {
		old := tmp + ".old"
		if err := os.Rename(dir, old); err != nil {
			return err
		}
		if err := os.Rename(tmp, dir); err != nil {
			os.Rename(old, dir)
			return err
		}
		return os.RemoveAll(old)
	}
	return os.Rename(tmp, dir)
}

// StoredRelations are the relation embeddings (Relations × Dim floats;
// nil for dot) of a work directory's current checkpoint: the engine
// state it holds (embeddings, then their Adagrad state), or, in the
// initial checkpoint, the seeded initial ones the engines start from.
func StoredRelations(st *store.Store) ([]float32, error) {
	m, err := workload.ParseModel(st.M.Model)
	if err != nil {
		return nil, err
	}
	if !m.UsesRelations() {
		return nil, nil
	}
	return realrun.CheckpointRelations(st, m, st.M.Seed)
}
