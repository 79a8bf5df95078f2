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
	// Entities are the entity types written, with their partitions and
	// nodes: Entity alone for an untyped work directory.
	Entities []EntitySummary `json:"entities"`
	// Bytes is the size of every file written (10^6 bytes are a MB).
	Bytes int64 `json:"bytes"`
}

// Layout says how the export lays out the nodes, for the line a run
// prints: "P partitions of entity "node"" for an untyped work directory,
// "entities user (4 partitions, 1000 nodes), item (1 partition, 50
// nodes)" for a typed one.
func (s Summary) Layout() string {
	if len(s.Entities) == 1 && s.Entities[0].Name == Entity {
		return fmt.Sprintf("%d partitions of entity %q", s.Partitions, Entity)
	}
	parts := make([]string, len(s.Entities))
	for i, e := range s.Entities {
		unit := "partitions"
		if e.Partitions == 1 {
			unit = "partition"
		}
		parts[i] = fmt.Sprintf("%s (%d %s, %d nodes)", e.Name, e.Partitions, unit, e.Nodes)
	}
	return "entities " + strings.Join(parts, ", ")
}

// EntitySummary is one entity type of an export.
type EntitySummary struct {
	Name       string `json:"name"`
	Partitions int    `json:"partitions"`
	Nodes      int64  `json:"nodes"`
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
	lay, err := newLayout(st)
	if err != nil {
		return sum, err
	}
	sum.Entities = lay.entities()
	cfg := Config{Entities: map[string]EntityConfig{}, Dimension: st.M.Dim, Comparator: Comparator(m), LossFn: "softmax",
		EntityPath: abs, EdgePaths: []string{}, CheckpointPath: abs, NumEpochs: st.Current, DynamicRelations: Dynamic(m)}
	for _, e := range sum.Entities {
		cfg.Entities[e.Name] = EntityConfig{NumPartitions: e.Partitions}
	}
	sides, err := RelationSides(st.M)
	if err != nil {
		return sum, err
	}
	if cfg.DynamicRelations {
		// PBG's dynamic relations: one entry for every relation, whose
		// count is dynamic_rel_count.txt (CheckDynamic: every relation
		// joins the same types).
		if err := CheckDynamic(st.M); err != nil {
			return sum, err
		}
		cfg.Relations = []RelationConfig{{Name: "all_edges", LHS: sides[0][0], RHS: sides[0][1], Operator: sum.Operator}}
	} else {
		for r, name := range relNames {
			cfg.Relations = append(cfg.Relations, RelationConfig{Name: name, LHS: sides[r][0], RHS: sides[r][1], Operator: sum.Operator})
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
	names, err := lay.spillNames(tmp, st, perm)
	if err != nil {
		return sum, err
	}
	perm = nil
	if err := lay.writePartitions(tmp, st, string(cfgJSON), names); err != nil {
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

// segment is one entity partition of the export: its entity type, its
// partition and how many nodes it holds.
type segment struct {
	entity string
	part   int
	count  int64
}

// layout is how a work directory's store nodes map to PBG's entity
// partitions. Untyped: entity Entity, partition p holds the store
// partition p, row r its store node p·Rows + r. Typed: each entity type
// is its own entity; a partitioned type's partition p holds the nodes of
// that type in store partition p, in store id order (every partitioned
// type shares the store's P partitions, as PBG's partitioned types share
// their count, so an edge's bucket is the same in PBG's layout); an
// unpartitioned type is partition 0 of 1: its rows of the resident table,
// in order.
type layout struct {
	m    store.Manifest
	segs []segment
	// typed only: the type of every store node, each node's row in its
	// segment, and the first segment of each type.
	of   []uint16
	row  []int32
	base []int
}

// newLayout lays out st's nodes (reading a typed directory's node types).
func newLayout(st *store.Store) (*layout, error) {
	l := &layout{m: st.M}
	m := st.M
	if !m.Typed() {
		for p := 0; p < m.P; p++ {
			lo := int64(p) * m.Rows
			l.segs = append(l.segs, segment{Entity, p, max(min(m.Rows, m.Nodes-lo), 0)})
		}
		return l, nil
	}
	of, err := st.NodeTypes()
	if err != nil {
		return nil, err
	}
	l.of, l.row, l.base = of, make([]int32, m.Nodes), make([]int, len(m.Types))
	for t, et := range m.Types {
		l.base[t] = len(l.segs)
		if et.Partitioned {
			for p := 0; p < m.P; p++ {
				l.segs = append(l.segs, segment{et.Name, p, 0})
			}
		} else {
			l.segs = append(l.segs, segment{et.Name, 0, 0})
		}
	}
	for v := range of {
		k := l.seg(int64(v))
		l.row[v] = int32(l.segs[k].count)
		l.segs[k].count++
	}
	return l, nil
}

// seg is the segment of store node v.
func (l *layout) seg(v int64) int {
	if l.of == nil {
		return int(v / l.m.Rows)
	}
	t := l.of[v]
	if !l.m.Types[t].Partitioned {
		return l.base[t]
	}
	return l.base[t] + int(v/l.m.Rows)
}

// place is store node v's segment and row in it.
func (l *layout) place(v int64) (int, int64) {
	if l.of == nil {
		return int(v / l.m.Rows), v % l.m.Rows
	}
	return l.seg(v), int64(l.row[v])
}

// entities are the entity types, each with its partition count, in the
// order of the segments.
func (l *layout) entities() []EntitySummary {
	var out []EntitySummary
	for _, sg := range l.segs {
		if len(out) == 0 || out[len(out)-1].Name != sg.entity {
			out = append(out, EntitySummary{Name: sg.entity})
		}
		e := &out[len(out)-1]
		e.Partitions++
		e.Nodes += sg.count
	}
	return out
}

// spillNames sorts the node names by entity partition without holding
// them all: one pass over ids.tsv (in input id order; a generated graph's
// nodes are named by their decimal ids; a typed directory's lines are
// "id<TAB>type<TAB>name") appends "row<TAB>name" lines to one spill file
// per entity partition (segment) in dir, row being the node's place in
// it under the relabelling perm. The returned function reads segment k's
// names back in row order and removes its spill file: memory holds one
// partition's names at a time.
func spillNames(dir string, st *store.Store, perm []int32) (func(k int) ([]string, error), error) {
	l, err := newLayout(st)
	if err != nil {
		return nil, err
	}
	return l.spillNames(dir, st, perm)
}

func (l *layout) spillNames(dir string, st *store.Store, perm []int32) (func(k int) ([]string, error), error) {
	spill := func(k int) string { return filepath.Join(dir, fmt.Sprintf(".names-%04d", k)) }
	files := make([]*os.File, len(l.segs))
	ws := make([]*bufio.Writer, len(l.segs))
	closeAll := func() {
		for _, f := range files {
			if f != nil {
				f.Close()
			}
		}
	}
	for k := range files {
		f, err := os.Create(spill(k))
		if err != nil {
			closeAll()
			return nil, err
		}
		files[k], ws[k] = f, bufio.NewWriterSize(f, 16<<10)
	}
	add := func(orig int64, name string) error {
		if orig < 0 || orig >= int64(len(perm)) {
			return fmt.Errorf("ids.tsv: id %d outside the %d nodes", orig, len(perm))
		}
		k, row := l.place(int64(perm[orig]))
		if l.of != nil {
			// "type<TAB>name": the type is the segment's.
			if typ, n, ok := strings.Cut(name, "\t"); ok && typ == l.segs[k].entity {
				name = n
			} else {
				return fmt.Errorf("ids.tsv: node %d is %q, want \"%s<TAB>name\" (its type)", orig, name, l.segs[k].entity)
			}
		}
		_, err := fmt.Fprintf(ws[k], "%d\t%s\n", row, name)
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
			name := strconv.FormatInt(orig, 10)
			if l.of != nil {
				name = l.segs[l.seg(int64(perm[orig]))].entity + "\t" + name
			}
			if err = add(orig, name); err != nil {
				break
			}
		}
	} else {
		err = oerr
	}
	for k := range ws {
		if ferr := ws[k].Flush(); err == nil {
			err = ferr
		}
	}
	closeAll()
	if err != nil {
		return nil, err
	}
	return func(k int) ([]string, error) {
		sg := l.segs[k]
		names := make([]string, sg.count)
		f, err := os.Open(spill(k))
		if err != nil {
			return nil, err
		}
		defer os.Remove(spill(k))
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 16<<20)
		for sc.Scan() {
			row, name, _ := strings.Cut(sc.Text(), "\t")
			if r, err := strconv.ParseInt(row, 10, 64); err == nil && r >= 0 && r < sg.count {
				names[r] = name
			}
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		for r, n := range names {
			if n == "" {
				return nil, fmt.Errorf("ids.tsv names no node at row %d of partition %d of %s", r, sg.part, sg.entity)
			}
		}
		return names, nil
	}, nil
}

// writePartitions writes every entity partition's embeddings, count and
// names (names(k), in row order) into dir, reading one store partition
// (checked against its checksum) at a time, then a typed directory's
// resident table.
func (l *layout) writePartitions(dir string, st *store.Store, cfg string, names func(k int) ([]string, error)) error {
	ck := st.CurrentDir()
	sums, err := st.PartitionSums(ck)
	if err != nil {
		return err
	}
	d := int64(st.M.Dim)
	write := func(k int, emb []float32) error {
		sg := l.segs[k]
		set := h5Set{Path: embeddingsName, Dims: []int{int(sg.count), int(d)}, Data: emb[:sg.count*d]}
		if err := writeH5(filepath.Join(dir, EmbeddingsFile(sg.entity, sg.part, st.Current)), cfg, nil, []h5Set{set}); err != nil {
			return err
		}
		pn, err := names(k)
		if err != nil {
			return err
		}
		js, err := json.MarshalIndent(pn, "", "    ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, NamesFile(sg.entity, sg.part)), js, 0o644); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, CountFile(sg.entity, sg.part)), []byte(fmt.Sprintf("%d\n", sg.count)), 0o644)
	}
	// rows writes the segments of the store nodes [lo, lo+n) whose rows
	// are emb: each segment's rows copied out of emb in store order (a
	// typed directory's partitions hold nodes of several types).
	rows := func(lo, n int64, emb []float32, segs []int) error {
		if l.of == nil {
			return write(segs[0], emb)
		}
		out := map[int][]float32{}
		for _, k := range segs {
			out[k] = make([]float32, 0, l.segs[k].count*d)
		}
		for v := lo; v < lo+n; v++ {
			k := l.seg(v)
			out[k] = append(out[k], emb[(v-lo)*d:(v-lo+1)*d]...)
		}
		for _, k := range segs {
			if err := write(k, out[k]); err != nil {
				return err
			}
		}
		return nil
	}
	if st.M.PartitionedTypes() {
		buf, err := st.NewBuffer()
		if err != nil {
			return err
		}
		defer buf.Free()
		for p := 0; p < st.M.P; p++ {
			if _, err := store.ReadPartitionChecked(ck, p, buf, sums[p]); err != nil {
				return err
			}
			lo := int64(p) * st.M.Rows
			n := max(min(st.M.Rows, st.M.PartitionedNodes()-lo), 0)
			var segs []int
			for k, sg := range l.segs {
				if sg.part == p && l.partitioned(k) {
					segs = append(segs, k)
				}
			}
			if err := rows(lo, n, buf.Floats()[:n*d], segs); err != nil {
				return err
			}
		}
	}
	if st.M.Resident > 0 {
		buf, err := st.NewResidentBuffer()
		if err != nil {
			return err
		}
		defer buf.Free()
		if _, err := store.ReadPartitionChecked(ck, store.ResidentPart, buf, sums[store.ResidentPart]); err != nil {
			return err
		}
		var segs []int
		for k := range l.segs {
			if !l.partitioned(k) {
				segs = append(segs, k)
			}
		}
		if err := rows(st.M.PartitionedNodes(), st.M.Resident, buf.Floats()[:st.M.Resident*d], segs); err != nil {
			return err
		}
	}
	return nil
}

// partitioned reports whether segment k is a partition of a partitioned
// entity type (every segment of an untyped directory is).
func (l *layout) partitioned(k int) bool {
	if l.of == nil {
		return true
	}
	for t, b := range l.base {
		if k >= b && (t+1 == len(l.base) || k < l.base[t+1]) {
			return l.m.Types[t].Partitioned
		}
	}
	return false
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

// RelationSides are the entity types (lhs, rhs) of each relation as PBG's
// config names them: Entity for both sides of an untyped work
// directory's, the relation's types' names for a typed one's.
func RelationSides(m store.Manifest) ([][2]string, error) {
	out := make([][2]string, m.Relations)
	for r := range out {
		if !m.Typed() {
			out[r] = [2]string{Entity, Entity}
			continue
		}
		if r >= len(m.RelationTypes) {
			return nil, fmt.Errorf("relation %d has no entity types (%d relation types)", r, len(m.RelationTypes))
		}
		lr := m.RelationTypes[r]
		out[r] = [2]string{m.Types[lr[0]].Name, m.Types[lr[1]].Name}
	}
	return out, nil
}

// CheckDynamic refuses a typed work directory whose relations join
// different pairs of entity types when its model is exported as PBG's
// dynamic relations (a PBG pair: Dynamic): PBG's dynamic relations are
// one relation type, so every relation must have its lhs and rhs types.
func CheckDynamic(m store.Manifest) error {
	for r, lr := range m.RelationTypes {
		if lr != m.RelationTypes[0] {
			return fmt.Errorf("relations 0 (%s → %s) and %d (%s → %s) join different entity types, but a PBG pair model (%s) is PBG's dynamic relations, one relation type for every relation: export it as npy, tsv or csv",
				m.Types[m.RelationTypes[0][0]].Name, m.Types[m.RelationTypes[0][1]].Name, r, m.Types[lr[0]].Name, m.Types[lr[1]].Name, m.Model)
		}
	}
	return nil
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
