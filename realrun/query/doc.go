// Package query answers questions of a trained work directory — the
// nearest nodes of a node, the best tails or heads of a (head, relation,
// ?) query, the score and rank of a triple — by streaming its partitions
// once within a memory budget, exactly, or approximately through an HNSW
// index; in a typed work directory the candidates are the nodes of the
// entity type the question asks for.
package query
