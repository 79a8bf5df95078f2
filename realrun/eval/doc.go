// Package eval reads trained embeddings back from a work directory: it
// ranks test edges against every node (filtered) or against sampled ones
// (MRR, Hits@k, with the random baseline) — in a typed work directory
// against the nodes of the side's entity type only —, exports the
// embeddings in input id order as .npy or TSV, and holds the one rule by
// which a checkpoint's partitions (and resident table) are streamed
// within a memory budget (Budget, Stream, Gather), which queries
// (realrun/query) read through too.
package eval
