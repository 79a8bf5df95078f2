package pbgio

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
	cfg := Config{Entities: map[string]EntityConfig{Entity: {NumPartitions: st.M.P}}, Dimension: st.M.Dim, Comparator: Comparator(m), LossFn: "softmax",
		EntityPath: abs, EdgePaths: []string{}, CheckpointPath: abs, NumEpochs: st.Current, DynamicRelations: Dynamic(m)}
	if cfg.DynamicRelations {
		// PBG's dynamic relations: one entry for every relation, whose
		// count is dynamic_rel_count.txt.
		cfg.Relations = []RelationConfig{{Name: "all_edges", LHS: Entity, RHS: Entity, Operator: sum.Operator}}
	} else {
		for _, name := range relNames {
			cfg.Relations = append(cfg.Relations, RelationConfig{Name: name, LHS: Entity, RHS: Entity, Operator: sum.Operator})
		}
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
	names, err := spillNames(tmp, st, perm)
	if err != nil {
		return sum, err
	}
	perm = nil
	if err := writePartitions(tmp, st, string(cfgJSON), names); err != nil {
		return sum, err
	}
	var sets []h5Set
	for _, p := range params {
		sets = append(sets, h5Set{Path: modelGroup + "/" + p.Name, Dims: p.Shape(), Data: p.Data, Key: p.Key})
	}
	if err := writeH5(filepath.Join(tmp, ModelFile(sum.Version)), string(cfgJSON), []string{modelGroup}, sets); err != nil {
		return sum, err
	}
	files := map[string][]byte{ConfigFile: append(cfgJSON, '\n'), VersionFile: []byte(strconv.Itoa(sum.Version) + "\n"),
		RelationCount: []byte(strconv.Itoa(st.M.Relations) + "\n")}
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

// spillNames sorts the node names by partition without holding them all:
// one pass over ids.tsv (in input id order; a generated graph's nodes are
// named by their decimal ids) appends "row<TAB>name" lines to one spill
// file per partition in dir, row being the node's place in its partition
// under the relabelling perm. The returned function reads partition p's
// names back in row order and removes its spill file: memory holds one
// partition's names at a time.
func spillNames(dir string, st *store.Store, perm []int32) (func(p int) ([]string, error), error) {
	spill := func(p int) string { return filepath.Join(dir, fmt.Sprintf(".names-%04d", p)) }
	files := make([]*os.File, st.M.P)
	ws := make([]*bufio.Writer, st.M.P)
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for p := range files {
		f, err := os.Create(spill(p))
		if err != nil {
			closeAll()
			return nil, err
		}
		files[p], ws[p] = f, bufio.NewWriterSize(f, 16<<10)
	}
	add := func(orig int64, name string) error {
		if orig < 0 || orig >= int64(len(perm)) {
			return fmt.Errorf("ids.tsv: id %d outside the %d nodes", orig, len(perm))
		}
		s := int64(perm[orig])
		_, err := fmt.Fprintf(ws[s/st.M.Rows], "%d\t%s\n", s%st.M.Rows, name)
		return err
	}
	var err error
	if f, oerr := os.Open(filepath.Join(st.Dir, "ids.tsv")); oerr == nil {
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for err == nil && sc.Scan() {
			id, name, ok := strings.Cut(sc.Text(), "\t")
			n, perr := strconv.ParseInt(id, 10, 64)
			if !ok || perr != nil {
				err = fmt.Errorf("ids.tsv: %q is not \"id<TAB>name\"", sc.Text())
				break
			}
			err = add(n, name)
		}
		if err == nil {
			err = sc.Err()
		}
		f.Close()
	} else if errors.Is(oerr, os.ErrNotExist) {
		for orig := range int64(len(perm)) {
			if err = add(orig, strconv.FormatInt(orig, 10)); err != nil {
				break
			}
		}
	} else {
		err = oerr
	}
	for p := range ws {
		if ferr := ws[p].Flush(); err == nil {
			err = ferr
		}
	}
	closeAll()
	if err != nil {
		return nil, err
	}
	return func(p int) ([]string, error) {
		first := int64(p) * st.M.Rows
		count := max(min(st.M.Rows, st.M.Nodes-first), 0)
		names := make([]string, count)
		f, err := os.Open(spill(p))
		if err != nil {
			return nil, err
		}
		defer os.Remove(spill(p))
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			row, name, _ := strings.Cut(sc.Text(), "\t")
			if r, err := strconv.ParseInt(row, 10, 64); err == nil && r >= 0 && r < count {
				names[r] = name
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		for r, n := range names {
			if n == "" {
				return nil, fmt.Errorf("ids.tsv names no node at row %d of partition %d", r, p)
			}
		}
		return names, nil
	}, nil
}

// writePartitions writes every partition's embeddings, count and names
// (names(p), in row order) into dir, reading one partition (checked
// against its checksum) at a time.
func writePartitions(dir string, st *store.Store, cfg string, names func(p int) ([]string, error)) error {
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
		pn, err := names(p)
		if err != nil {
			return err
		}
		js, err := json.MarshalIndent(pn, "", "    ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, NamesFile(Entity, p)), js, 0o644); err != nil {
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

// StoredRelations are the relation parameters (Relations × RelWidth(Dim) floats;
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
