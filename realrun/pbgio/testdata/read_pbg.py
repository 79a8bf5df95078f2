"""Read a checkpoint directory the way PyTorch-BigGraph's loader does.

Usage: read_pbg.py DIR [LHS REL RHS ...]

It reads checkpoint_version.txt, config.json, every entity partition's
embeddings_<entity>_<part>.v<version>.h5 (checking the root attribute
format_version == 1, reading the "embeddings" dataset with read_direct
into a float32 array), its entity_names_/entity_count_ files, and the
model file's parameters under the "model" group (visititems, as PBG's
load_model_state_dict does). It prints one JSON object: the embeddings by
entity name (by "TYPE/NAME" when the config has several entity types,
whose names are per type; the triples name their nodes so too), the parameters by public name with their state_dict_key
attributes, the relation names, and, for each LHS REL RHS triple given,
the score PBG computes with the config's operator and comparator: for
static relations the relation's rhs operator applied to the right-hand
embedding ("scores"); for dynamic relations (one relation type whose
parameters hold a row per relation) the lhs operator applied to the
left-hand embedding ("scores", destinations corrupted) and the rhs
operator to the right-hand one ("src_scores", sources corrupted).
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
    out = {"version": version, "dimension": dim, "entities": {}, "params": {}, "shapes": {}, "keys": {}}
    typed = len(config["entities"]) > 1
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
                out["entities"][entity + "/" + name if typed else name] = row.tolist()
    path = os.path.join(d, "model.v%d.h5" % version)
    with h5py.File(path, "r") as hf:
        check_version(hf, path)

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out["params"][name] = obj[...].reshape(-1).tolist()
                out["shapes"][name] = list(obj.shape)
                key = obj.attrs.get("state_dict_key")
                out["keys"][name] = key.decode() if isinstance(key, bytes) else key

        hf["model"].visititems(visit)
    with open(os.path.join(config["entity_path"], "dynamic_rel_names.json")) as f:
        out["relation_names"] = json.load(f)
    dynamic = config.get("dynamic_relations", False)
    if dynamic:
        with open(os.path.join(config["entity_path"], "dynamic_rel_count.txt")) as f:
            out["relation_count"] = int(f.read().strip())
    comparator = config.get("comparator", "cos")

    def param(name, rel, side):
        """An operator parameter: static relations' one per relation type,
        dynamic relations' row rel of relation type 0's."""
        if dynamic:
            key = "relations/0/operator/%s/%s" % (side, name)
            shape = out["shapes"][key]
            return np.array(out["params"][key], dtype=np.float32).reshape(shape)[rel]
        key = "relations/%d/operator/%s/%s" % (rel, side, name)
        return np.array(out["params"][key], dtype=np.float32).reshape(out["shapes"][key])

    def operator(op, x, rel, side):
        """PBG's operators (torchbiggraph/operators.py) applied to x."""
        s = "s" if dynamic else ""
        if op == "none":
            return x
        if op == "diagonal":
            return param("diagonal" + s, rel, side) * x
        if op == "translation":
            return x + param("translation" + s, rel, side)
        if op == "linear":
            name = "linear_transformations" if dynamic else "linear_transformation"
            return np.matmul(param(name, rel, side), x)
        if op == "affine":
            name = "linear_transformations" if dynamic else "linear_transformation"
            return np.matmul(param(name, rel, side), x) + param("translation" + s, rel, side)
        if op == "complex_diagonal":
            h = dim // 2
            re_b, im_b = param("real", rel, side), param("imag", rel, side)
            re_a, im_a = x[:h], x[h:]
            return np.concatenate([re_a * re_b - im_a * im_b, re_a * im_b + im_a * re_b])
        raise RuntimeError("unknown operator " + op)

    def compare(a, b):
        """PBG's comparators (torchbiggraph/model.py)."""
        if comparator == "dot":
            return float(np.dot(a, b))
        if comparator == "cos":
            return float(np.dot(a / np.linalg.norm(a), b / np.linalg.norm(b)))
        sq = float(np.sum((a - b) ** 2))
        if comparator == "l2":
            return -float(np.sqrt(max(sq, 1e-30)))
        if comparator == "squared_l2":
            return -sq
        raise RuntimeError("unknown comparator " + comparator)

    scores, src_scores = [], []
    args = sys.argv[2:]
    for i in range(0, len(args), 3):
        lhs = np.array(out["entities"][args[i]], dtype=np.float32)
        rel = int(args[i + 1])
        rhs = np.array(out["entities"][args[i + 2]], dtype=np.float32)
        if dynamic:
            op = config["relations"][0]["operator"]
            # Destinations corrupted: c(g_r(u), v); sources: c(u, h_r(v)).
            scores.append(compare(operator(op, lhs, rel, "lhs"), rhs))
            src_scores.append(compare(lhs, operator(op, rhs, rel, "rhs")))
        else:
            op = config["relations"][rel]["operator"]
            scores.append(compare(lhs, operator(op, rhs, rel, "rhs")))
            src_scores.append(scores[-1])
    out["scores"] = scores
    out["src_scores"] = src_scores
    json.dump(out, sys.stdout)


main()
