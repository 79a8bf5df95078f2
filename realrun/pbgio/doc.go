// Package pbgio writes and reads a work directory's embeddings in the
// layout of PyTorch-BigGraph's checkpoints: per entity type and partition
// an HDF5 file embeddings_ENTITY_PART.vVERSION.h5 (dataset "embeddings",
// root attribute format_version = 1), the relation parameters in
// model.vVERSION.h5 under PBG's public state-dict names, checkpoint_version.txt,
// a config.json PBG's loader accepts, and the entity_count_/entity_names_
// files its importer writes.
//
// Our p node partitions map one to one to PBG's partitions of the single
// entity type "node": row r of embeddings_node_i is the node with store id
// i·Rows+r, and entity_names_node_i.json names it. Relations are PBG
// relation types, one per relation, applied on the right-hand side as PBG
// does (operator "none" for dot, "diagonal" for distmult,
// "complex_diagonal" for complex). A ComplEx row of d floats is d/2 real
// parts followed by d/2 imaginary parts (PBG's layout); our score
// Re(Σ s·r·conj(t)) equals PBG's rhs operator score with the imaginary
// parts of r negated, which is what the export writes, so that PBG scores
// every edge as we do.
//
// HDF5 goes through gonum.org/v1/hdf5 (cgo, libhdf5): only a build with
// -tags hdf5 reads and writes it (make build-hdf5); the default build has
// no cgo and its Export and Open report that in one line.
package pbgio
