package query

import (
	"slices"
	"strconv"
	"strings"

	"github.com/tierflow/tierflow/internal/inputerr"
)

// Typed work directories (entity types, issue 44): node names are per
// type (ids.tsv lines "id<TAB>type<TAB>name"), so a question's node is
// looked up among the nodes of the type its place asks for — the
// relation's lhs type for a head, its rhs type for a tail —, and only
// nodes of the type asked for are candidates: (head, relation, ?) ranks
// the relation's rhs type, (?, relation, tail) its lhs type. Without a
// relation (nearest neighbours by a metric, or a model without relation
// parameters) a node is found by its name in whichever type has it
// ("TYPE:NAME" where several do) and its candidates are the nodes of its
// own type, or, for a model without relation parameters on a graph of
// one relation, that relation's other side.

// resolveTyped is resolve for a typed work directory: it sets the
// questions' store ids (known, target, exclude, relIdx) and candidate
// types.
func (s *searcher) resolveTyped(relNames []string) error {
	st, qs := s.st, s.qs
	var err error
	if s.of, err = st.NodeTypes(); err != nil {
		return err
	}
	if s.perm, err = st.Permutation(); err != nil {
		return err
	}
	typeIdx := map[string]int{}
	var typeNames []string
	for i, t := range st.M.Types {
		typeIdx[t.Name] = i
		typeNames = append(typeNames, t.Name)
	}
	// found[name][type] is the input id of every asked name, plain or
	// after a "TYPE:" prefix.
	found := map[string]map[int]int64{}
	for _, q := range qs {
		for _, name := range []string{q.Head, q.Tail} {
			if name == Unknown {
				continue
			}
			found[name] = map[int]int64{}
			if tn, n, ok := strings.Cut(name, ":"); ok {
				if _, ok := typeIdx[tn]; ok {
					found[n] = map[int]int64{}
				}
			}
		}
	}
	err = eachName(st, func(id int64, line string) {
		tn, name, ok := strings.Cut(line, "\t")
		if !ok {
			return
		}
		if m, asked := found[name]; asked {
			if t, ok := typeIdx[tn]; ok {
				m[t] = id
			}
		}
	}, func() {
		// No ids.tsv: nodes are named by their input ids.
		for name, m := range found {
			if id, err := strconv.ParseInt(name, 10, 64); err == nil && id >= 0 && id < st.M.Nodes {
				m[int(s.of[s.perm[id]])] = id
			}
		}
	})
	if err != nil {
		return err
	}
	// node finds a question's node of type t (-1: any one type).
	node := func(q Question, name string, t int) (int32, int, error) {
		if m := found[name]; len(m) > 0 {
			if id, ok := m[t]; ok && t >= 0 {
				return s.perm[id], t, nil
			}
			if t < 0 && len(m) == 1 {
				for tt, id := range m {
					return s.perm[id], tt, nil
				}
			}
			if t < 0 {
				var in []string
				for tt := range m {
					in = append(in, st.M.Types[tt].Name)
				}
				slices.Sort(in)
				return 0, 0, inputerr.Errorf("%snode %q is of several entity types (%s): write %s:%s or the like", q.where(), name, strings.Join(in, ", "), in[0], name)
			}
		}
		if tn, n, ok := strings.Cut(name, ":"); ok {
			if tt, ok := typeIdx[tn]; ok && (t < 0 || tt == t) {
				if id, ok := found[n][tt]; ok {
					return s.perm[id], tt, nil
				}
			}
		}
		if t >= 0 {
			return 0, 0, inputerr.Errorf("%sunknown %s %q: no node of entity type %s has that name in %s", q.where(), st.M.Types[t].Name, name, st.M.Types[t].Name, idsPath(st))
		}
		return 0, 0, inputerr.Errorf("%sunknown node %q: not in %s (entity types %s)", q.where(), name, idsPath(st), strings.Join(typeNames, ", "))
	}
	n := len(qs)
	s.ctype = make([]uint16, n)
	for i, q := range qs {
		s.target[i], s.exclude[i], s.relIdx[i] = -1, -1, -1
		lhs, rhs := -1, -1
		if q.Relation != "" {
			r := slices.Index(relNames, q.Relation)
			if r < 0 {
				return inputerr.Errorf("%sunknown relation %q: not in %s", q.where(), q.Relation, relationsPath(st))
			}
			s.relIdx[i] = int32(r)
			lhs, rhs = st.M.RelationTypes[r][0], st.M.RelationTypes[r][1]
		} else if s.metric == Score && st.M.Relations == 1 {
			lhs, rhs = st.M.RelationTypes[0][0], st.M.RelationTypes[0][1]
		}
		switch q.Kind() {
		case Tails, Triple:
			v, t, err := node(q, q.Head, lhs)
			if err != nil {
				return err
			}
			s.known[i], s.ctype[i] = v, uint16(t)
			if rhs >= 0 {
				s.ctype[i] = uint16(rhs)
			}
			if q.Kind() == Triple {
				if s.target[i], _, err = node(q, q.Tail, int(s.ctype[i])); err != nil {
					return err
				}
			}
		case Heads:
			v, t, err := node(q, q.Tail, rhs)
			if err != nil {
				return err
			}
			s.known[i], s.ctype[i] = v, uint16(t)
			if lhs >= 0 {
				s.ctype[i] = uint16(lhs)
			}
		}
		if s.metric != Score {
			s.exclude[i] = s.known[i]
		}
	}
	return nil
}

// candidate reports whether store node id is a candidate of question i
// (always, in an untyped work directory).
func (s *searcher) candidate(i int, id int32) bool {
	return s.of == nil || s.of[id] == s.ctype[i]
}
