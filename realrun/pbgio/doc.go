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
// i·Rows+r, and entity_names_node_i.json names it. A typed work directory
// (entity types, issue 44) exports each type as PBG's entity of that name:
// a partitioned type's partition i holds its nodes of store partition i
// in store order (all partitioned types share the p partitions, as PBG's
// do, so every edge stays in its bucket), an unpartitioned type is
// partition 0 of 1 (its rows of the resident table); config.json gives
// every relation its lhs and rhs types, and OpenTyped reads such a
// checkpoint back by type and partition. Relations are PBG
// relation types, one per relation, applied on the right-hand side as PBG
// does (operator "none" for dot, "diagonal" for distmult,
// "complex_diagonal" for complex). A ComplEx row of d floats is d/2 real
// parts followed by d/2 imaginary parts (PBG's layout); our score
// Re(Σ s·r·conj(t)) equals PBG's rhs operator score with the imaginary
// parts of r negated, which is what the export writes, so that PBG scores
// every edge as we do. TransE-L2 is PBG's translation operator with the l2
// comparator: PBG scores −‖s − (d + t)‖ and we −‖s + r − d‖, so the export
// writes t = −r.
//
// A PBG pair (workload.Model "operator+comparator") is exported as PBG's
// dynamic relations, as PBG trains such a model: config.json has
// dynamic_relations true and one relation type whose operator and
// comparator are the pair's; dynamic_rel_count.txt and
// dynamic_rel_names.json list the relations; the model file holds that
// relation type's two dynamic operators, "relations/0/operator/lhs/<param>"
// (our left-hand operator g, applied to sources when destinations are
// corrupted) and ".../rhs/<param>" (h, applied to destinations when
// sources are corrupted), each parameter with a leading dimension of one
// row per relation (diagonals, translations, linear_transformations,
// real and imag, PBG's names). TransE-L1, RotatE and any pair with the l1
// comparator have no PBG form (NoPBGForm): PBG has neither the l1
// comparator nor RotatE's rotation, and their export is refused.
//
// HDF5 goes through gonum.org/v1/hdf5 (cgo, libhdf5): only a build with
// -tags hdf5 reads and writes it (make build-hdf5); the default build has
// no cgo and its Export and Open report that in one line.
package pbgio
