"""Write a checkpoint as PyTorch-BigGraph's storage writes one, with h5py.

Usage: write_pbg.py CKPT_DIR ENTITY_DIR DIM

Entity type "all" in 2 partitions, version 5, global embeddings on; the
entity names (ent_00 ... ent_19, then one name no graph has) live in
ENTITY_DIR as PBG's importer writes them, and config.json points there.
Row k of the whole table is [k, k + 0.5, ...] (k·DIM + j + 0.25 in column
j); the global embedding is 0.125 in every column. A relation parameter
and an optimizer state blob are written too, as PBG writes them.
"""
import json
import os
import sys

import h5py
import numpy as np

ckpt, ents, dim = sys.argv[1], sys.argv[2], int(sys.argv[3])
os.makedirs(ckpt, exist_ok=True)
os.makedirs(ents, exist_ok=True)
names = ["ent_%02d" % i for i in range(20)] + ["not in the graph"]
parts = [names[:11], names[11:]]
version = 5
config = {
    "entities": {"all": {"num_partitions": 2}},
    "relations": [{"name": "r", "lhs": "all", "rhs": "all", "operator": "complex_diagonal"}],
    "dimension": dim,
    "global_emb": True,
    "comparator": "dot",
    "entity_path": ents,
    "edge_paths": [],
    "checkpoint_path": ckpt,
}
k = 0
for p, pnames in enumerate(parts):
    with open(os.path.join(ents, "entity_count_all_%d.txt" % p), "wt") as f:
        f.write("%d\n" % len(pnames))
    with open(os.path.join(ents, "entity_names_all_%d.json" % p), "wt") as f:
        json.dump(pnames, f, indent=4)
    emb = np.array([[(k + i) * dim + j + 0.25 for j in range(dim)] for i in range(len(pnames))], dtype=np.float32)
    k += len(pnames)
    with h5py.File(os.path.join(ckpt, "embeddings_all_%d.v%d.h5" % (p, version)), "w") as hf:
        hf.attrs["format_version"] = 1
        hf.attrs["config/json"] = json.dumps(config)
        hf.create_dataset("embeddings", data=emb)
        hf.create_dataset("optimizer/state_dict", data=np.frombuffer(b"opaque", dtype=np.dtype("V1")))
with h5py.File(os.path.join(ckpt, "model.v%d.h5" % version), "w") as hf:
    hf.attrs["format_version"] = 1
    g = hf.create_group("model", track_order=True)
    ds = g.create_dataset("relations/0/operator/rhs/real", data=np.ones(dim // 2, dtype=np.float32))
    ds.attrs["state_dict_key"] = "rhs_operators.0.real"
    ds = g.create_dataset("entities/all/global_embedding", data=np.full(dim, 0.125, dtype=np.float32))
    ds.attrs["state_dict_key"] = "global_embs.emb_all"
with open(os.path.join(ckpt, "config.json"), "wt") as f:
    json.dump(config, f, indent=4)
with open(os.path.join(ckpt, "checkpoint_version.txt"), "wt") as f:
    f.write("%d\n" % version)
