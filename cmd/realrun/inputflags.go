package main

import (
	"flag"

	"github.com/tierflow/tierflow/cmd/internal/cli"
	"github.com/tierflow/tierflow/realrun/graph"
)

// registerInputFlags adds the flags that say how --edges, --valid and
// --test are read (graph.Format).
func registerInputFlags(fs *flag.FlagSet, f *graph.Format) {
	registerFormatFlags(fs, f)
	cli.EnumVar(fs, &f.Unseen, "unseen", graph.UnseenSkip, "what becomes of --valid and --test edges with a node or relation not in --edges: skip (left out, counted) or error")
}

// registerFormatFlags adds the flags that say how an edge file's lines
// are read: --delimiter, --header and --columns (realrun and realrun
// gnn).
func registerFormatFlags(fs *flag.FlagSet, f *graph.Format) {
	cli.EnumVar(fs, &f.Delimiter, "delimiter", graph.DelimAuto, "field separator: tab (single tabs: ids may hold spaces), comma (CSV, quoted fields), space (runs of blanks) or auto (tab, else comma, if the first edge line has one)")
	cli.EnumVar(fs, &f.Header, "header", graph.HeaderAuto, "does each file's first line name its columns? yes, no or auto (yes when all are well-known names: src, subject, relation, dst, tail, …)")
	fs.StringVar(&f.Columns, "columns", "", "the `COLS` holding src,rel,dst or src,dst: header names (subject,predicate,object) or numbers from 1 (2,4,3); others ignored (default: by position or header names)")
}
