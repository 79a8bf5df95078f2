// Package initemb starts training from existing embeddings (realrun
// --init FILE): a checkpoint directory in PyTorch-BigGraph's layout (PBG's
// own or an --export-format pbg export), an .npy export (row i is the node
// with original id i) or a .tsv export ("name<TAB>v1 v2 …"). Rows are
// matched to the graph's nodes by name (ids.tsv; decimal ids for a
// generated graph) for PBG directories and tsv, by original id for npy;
// nodes the file lacks keep their seeded random initial embedding, and
// every Adagrad state starts at zero. The rows are gathered into a scratch
// file in store order first, so that checkpoint 0 is then written one
// partition at a time, however the file orders them.
package initemb
