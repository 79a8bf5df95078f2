"""Read a checkpoint directory the way PyTorch-BigGraph's loader does.

Usage: read_pbg.py DIR [LHS REL RHS ...]

It reads checkpoint_version.txt, config.json, every entity partition's
embeddings_<entity>_<part>.v<version>.h5 (checking the root attribute
format_version == 1, reading the "embeddings" dataset with read_direct
into a float32 array), its entity_names_/entity_count_ files, and the
model file's parameters under the "model" group (visititems, as PBG's
load_model_state_dict does). It prints one JSON object: the embeddings by
entity name, the parameters by public name with their state_dict_key
attributes, the relation names, and, for each LHS REL RHS triple given,
the score PBG computes: the rhs operator applied to the right-hand
embedding, then the dot comparator.
"""
import json
import os
import sys

import h5py
import numpy as np


def check_version(hf, path):
    if hf.attrs.get("format_version", None) != 1:
        raise RuntimeError("Version mismatch in " + path)


def main():
    d = sys.argv[1]
    with open(os.path.join(d, "checkpoint_version.txt")) as f:
        version = int(f.read().strip() or 0)
    with open(os.path.join(d, "config.json")) as f:
        config = json.load(f)
    dim = config["dimension"]
    out = {"version": version, "dimension": dim, "entities": {}, "params": {}, "keys": {}}
    for entity, ecfg in config["entities"].items():
        for part in range(ecfg["num_partitions"]):
            path = os.path.join(d, "embeddings_%s_%d.v%d.h5" % (entity, part, version))
            with h5py.File(path, "r") as hf:
                check_version(hf, path)
                ds = hf["embeddings"]
                emb = np.empty(ds.shape, dtype=np.float32)
                if ds.size > 0:
                    ds.read_direct(emb)
            with open(os.path.join(config["entity_path"], "entity_names_%s_%d.json" % (entity, part))) as f:
                names = json.load(f)
            with open(os.path.join(config["entity_path"], "entity_count_%s_%d.txt" % (entity, part))) as f:
                count = int(f.read().strip())
            if count != len(names) or emb.shape != (count, dim):
                raise RuntimeError("partition %d: count %d, %d names, shape %s" % (part, count, len(names), emb.shape))
            for name, row in zip(names, emb):
                out["entities"][name] = row.tolist()
    path = os.path.join(d, "model.v%d.h5" % version)
    with h5py.File(path, "r") as hf:
        check_version(hf, path)

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out["params"][name] = obj[...].tolist()
                key = obj.attrs.get("state_dict_key")
                out["keys"][name] = key.decode() if isinstance(key, bytes) else key

        hf["model"].visititems(visit)
    with open(os.path.join(config["entity_path"], "dynamic_rel_names.json")) as f:
        out["relation_names"] = json.load(f)
    scores = []
    args = sys.argv[2:]
    for i in range(0, len(args), 3):
        lhs = np.array(out["entities"][args[i]], dtype=np.float32)
        rel = int(args[i + 1])
        rhs = np.array(out["entities"][args[i + 2]], dtype=np.float32)
        op = config["relations"][rel]["operator"]
        pre = "relations/%d/operator/rhs/" % rel
        if op == "diagonal":
            rhs = np.array(out["params"][pre + "diagonal"], dtype=np.float32) * rhs
        elif op == "complex_diagonal":
            h = dim // 2
            re_b = np.array(out["params"][pre + "real"], dtype=np.float32)
            im_b = np.array(out["params"][pre + "imag"], dtype=np.float32)
            re_a, im_a = rhs[:h], rhs[h:]
            rhs = np.concatenate([re_a * re_b - im_a * im_b, re_a * im_b + im_a * re_b])
        scores.append(float(np.dot(lhs, rhs)))
    out["scores"] = scores
    json.dump(out, sys.stdout)


main()
