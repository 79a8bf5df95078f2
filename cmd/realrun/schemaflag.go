package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/job"
	"github.com/tierflow/tierflow/workload"
)

const schemaHelp = "the graph's entity types and relations, PyTorch-BigGraph's vocabulary, from this YAML (or JSON) `FILE`: entities: {user: {partitions: 4}, item: {partitions: 1}} and relations: [{name: bought, lhs: user, rhs: item}]; node names are per type, a node's type its edge's relation's lhs (source) or rhs (destination); unpartitioned types stay in memory for the whole run; p is the partitioned types' count (with --edges, the CPU engine, one trainer)"

// applySchema reads --schema into o.Schema (nothing without it) and
// resolves p and c against it: --p omitted takes the schema's count
// (unless a --plan fixes p), --c omitted is at most that p; a --p that
// differs is refused by job.Configure, naming both. Several trainers are
// refused here (their flags are realrun's alone).
func applySchema(fs *flag.FlagSet, o *cmdOptions, file string) error {
	if file == "" {
		return nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return cli.Usagef("--schema: %w", err)
	}
	s, err := workload.ParseSchema(data)
	if se := (*workload.SchemaError)(nil); errors.As(err, &se) {
		if se.Field == "" {
			return cli.Usagef("--schema %s: %s", file, oneLine(se.Err.Error()))
		}
		return cli.Usagef("--schema %s: %s: %s", file, se.Field, oneLine(se.Err.Error()))
	} else if err != nil {
		return cli.Usagef("--schema %s: %s", file, oneLine(err.Error()))
	}
	if o.dist.Trainers != 0 || dflagSet(fs) {
		return cli.Usagef("--schema: entity types are trained by one trainer only for now (not --trainers)")
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if !set["p"] && o.PlanFile == "" {
		o.P = s.P()
		if !set["c"] && o.C > o.P {
			o.C = max(o.P, 2)
		}
	}
	o.Schema = &s
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// typesSummary is a typed run's entity types in a line ("2 entity
// types: user 9,000 nodes in 4 partitions, item 1,000 nodes resident");
// "" for an untyped run.
func typesSummary(out job.Output) string {
	if len(out.EntityTypes) == 0 {
		return ""
	}
	parts := make([]string, len(out.EntityTypes))
	for i, t := range out.EntityTypes {
		where := fmt.Sprintf("in %d partitions", t.Partitions)
		if t.Resident {
			where = "resident (in memory)"
		}
		parts[i] = fmt.Sprintf("%s %s nodes %s", t.Name, thousands(t.Nodes), where)
	}
	return fmt.Sprintf("%d entity types: %s", len(parts), strings.Join(parts, ", "))
}

// thousands writes n with commas between groups of three digits.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
