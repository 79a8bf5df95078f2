// Package workdir builds and recognises the real engine's work
// directories: it generates a preset graph or parses edge files into a
// store (built under a temporary name, renamed when complete), reuses a
// directory built from the same data and layout, and holds the lock that
// keeps one run per directory.
//
// Beside the store's files, a directory built from edge files holds the
// names of its nodes and relations:
//
//   - ids.tsv: one line per node, in original dense id order (the index
//     into perm.bin, store.Store.Permutation, which gives the node's id
//     in the store). Untyped: "id\tname". Typed (DataSpec.Schema):
//     "id\ttype\tname", the nodes numbered type after type in the
//     schema's order and, within a type, in first-seen order; names are
//     per type ("alice" the user and "alice" the item are two lines).
//     Names hold no tab or line break, so the name is the text after the
//     last tab in both forms (graph.ReadNames reads either).
//   - relations.tsv: "id\tname" per relation (untyped: first-seen order,
//     empty for a graph without relations; typed: the schema's relations
//     in its order, which are the relation ids of the edges and of
//     store.Manifest.RelationTypes).
//
// A typed directory records its schema (as JSON) in the manifest's
// InputFormat under SchemaKey: it is reused only for the same schema.
package workdir
