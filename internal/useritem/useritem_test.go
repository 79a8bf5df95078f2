package useritem

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tierflow/tierflow/workload"
)

var small = Config{Users: 2000, Items: 300, Communities: 10, P: 2, Valid: 300, Test: 300, Seed: 7}

func write(t *testing.T, c Config) string {
	t.Helper()
	g, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := g.Write(dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

func read(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDeterministic(t *testing.T) {
	a, b := write(t, small), write(t, small)
	other := small
	other.Seed++
	c := write(t, other)
	for _, f := range []string{"train.tsv", "valid.tsv", "test.tsv", "schema.yaml"} {
		if !bytes.Equal(read(t, a, f), read(t, b, f)) {
			t.Errorf("%s differs between two runs with seed %d", f, small.Seed)
		}
		if f != "schema.yaml" && bytes.Equal(read(t, a, f), read(t, c, f)) {
			t.Errorf("%s is the same with seeds %d and %d", f, small.Seed, other.Seed)
		}
	}
}

func TestSchemaParses(t *testing.T) {
	for _, similar := range []bool{true, false} {
		for _, p := range []int{1, 4} {
			s, err := workload.ParseSchema([]byte(Schema(p, similar)))
			if err != nil {
				t.Fatalf("p %d similar %v: %v", p, similar, err)
			}
			if s.P() != p {
				t.Errorf("p %d: schema's P() = %d", p, s.P())
			}
			want := 2
			if similar {
				want = 3
			}
			if len(s.Types) != 2 || len(s.Relations) != want {
				t.Errorf("p %d similar %v: %d types, %d relations", p, similar, len(s.Types), len(s.Relations))
			}
			if i, ok := s.TypeIndex("item"); !ok || s.Partitioned(i) {
				t.Errorf("item: want an unpartitioned type")
			}
		}
	}
	dir := write(t, small)
	if _, err := workload.ParseSchema(read(t, dir, "schema.yaml")); err != nil {
		t.Fatal(err)
	}
}

// TestSides checks every line against the schema: the source's name is
// of the relation's lhs type, the destination's of its rhs type, and
// every held-out node (by type) is in the training file.
func TestSides(t *testing.T) {
	dir := write(t, small)
	s, err := workload.ParseSchema(read(t, dir, "schema.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	prefix := map[string]string{"user": "u", "item": "i"}
	seen := map[string]bool{} // type + name
	for _, f := range []string{"train.tsv", "valid.tsv", "test.tsv"} {
		lines := strings.Split(strings.TrimSuffix(string(read(t, dir, f)), "\n"), "\n")
		if len(lines) < 100 {
			t.Fatalf("%s: %d lines", f, len(lines))
		}
		rels := map[string]int{}
		for n, line := range lines {
			fs := strings.Split(line, "\t")
			if len(fs) != 3 {
				t.Fatalf("%s:%d: %q", f, n+1, line)
			}
			ri, ok := s.RelationIndex(fs[1])
			if !ok {
				t.Fatalf("%s:%d: relation %q not in the schema", f, n+1, fs[1])
			}
			rels[fs[1]]++
			r := s.Relations[ri]
			for _, side := range []struct{ typ, name string }{{r.Lhs, fs[0]}, {r.Rhs, fs[2]}} {
				if !strings.HasPrefix(side.name, prefix[side.typ]) {
					t.Fatalf("%s:%d: %q is not a %s", f, n+1, side.name, side.typ)
				}
				key := side.typ + " " + side.name
				if f == "train.tsv" {
					seen[key] = true
				} else if !seen[key] {
					t.Fatalf("%s:%d: %s appears in no training edge", f, n+1, key)
				}
			}
		}
		if len(rels) != 3 {
			t.Errorf("%s: relations %v, want all three", f, rels)
		}
	}
}

// TestPlanted checks the communities: most purchases and follows stay in
// the user's community (far above the 1/Communities of chance).
func TestPlanted(t *testing.T) {
	g, err := Generate(small)
	if err != nil {
		t.Fatal(err)
	}
	in, all := map[string]int{}, map[string]int{}
	for _, e := range g.Train {
		var a, b int32
		switch e.Rel {
		case Bought:
			a, b = g.UserCommunity[e.Src], g.ItemCommunity[e.Dst]
		case Follows:
			a, b = g.UserCommunity[e.Src], g.UserCommunity[e.Dst]
		case Similar:
			a, b = g.ItemCommunity[e.Src], g.ItemCommunity[e.Dst]
		}
		all[e.Rel]++
		if a == b {
			in[e.Rel]++
		}
	}
	for _, r := range []string{Bought, Follows, Similar} {
		share := float64(in[r]) / float64(all[r])
		if share < 0.6 {
			t.Errorf("%s: %.2f of the edges within a community, want most", r, share)
		}
	}
	if g.Config.Valid != 300 || len(g.Valid) == 0 || len(g.Test) == 0 {
		t.Errorf("valid %d test %d", len(g.Valid), len(g.Test))
	}
}

func TestNoSimilar(t *testing.T) {
	c := small
	c.SimilarPerItem = -1
	g, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	if n := Counts(g.Train)[Similar]; n != 0 {
		t.Errorf("%d similar edges with SimilarPerItem < 0", n)
	}
	if strings.Contains(Schema(c.P, false), Similar) {
		t.Error("schema names similar")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []Config{{Users: 1}, {Communities: 100000}, {Own: 0.9, Second: 0.2}, {P: -1}} {
		if _, err := Generate(c); err == nil {
			t.Errorf("%+v: want an error", c)
		}
	}
}
