#!/usr/bin/env python3
"""pbg_side_selftest.py: checks scripts/pbg_side.py against a brute-force
ranking written from tierflow's formulas, on a small random graph.

    PBG_SRC=DIR pbg_side_selftest.py

For ComplEx and TransE-L2 (PBG relation types, operator on the
destination) and linear+cos (dynamic relations, one operator per side),
it trains PBG for two epochs through pbg_side.run, reads the checkpoint
back and scores every test edge on both sides against every entity with
numpy in float64 from the formulas the module doc of pbg_side.py states:
  complex    f = Re sum s * conj(r_pbg) * conj(d)        (tierflow's ComplEx
             with r = conj r_pbg)
  transe-l2  f = -||s + r - d||, r = -t_pbg              (tierflow's TransE-L2)
  linear+cos dst side cos(A_r s, c), src side cos(c, B_r d)
then filters by every known edge, takes mid-ranks, and wants the script's
ranks equal (all but near-ties in float32) and its MRR within 1e-3.
Exits non-zero on a mismatch. Needs torch, h5py, attrs, numpy.
"""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pbg_side  # noqa: E402  (imports concurrent.futures first)


def graph(rng, n_ent=60, n_rel=3, n_edges=700):
    seen, out = set(), []
    while len(out) < n_edges:
        t = (int(rng.integers(n_ent)), int(rng.integers(n_rel)), int(rng.integers(n_ent)))
        if t[0] != t[2] and t not in seen:
            seen.add(t)
            out.append(t)
    return out


def write(path, ts):
    with open(path, "w") as f:
        for s, r, d in ts:
            f.write(f"e{s}\tr{r}\te{d}\n")


def brute(model_name, emb, params, te, known, n_ent):
    import numpy as np
    E = emb.astype(np.float64)
    half = E.shape[1] // 2
    ranks = np.zeros((2, len(te)))
    for k, (s, r, d) in enumerate(te):
        for side in (0, 1):
            if model_name == "complex":
                rr = params["real"][r] - 1j * params["imag"][r]  # r = conj(r_pbg)
                cx = E[:, :half] + 1j * E[:, half:]
                if side == 0:
                    sc = np.real((cx[s] * rr) @ np.conj(cx).T)
                else:
                    sc = np.real((cx * rr) @ np.conj(cx[d]))
            elif model_name == "transe-l2":
                rv = -params["translation"][r]
                if side == 0:
                    sc = -np.linalg.norm(E[s] + rv - E, axis=1)
                else:
                    sc = -np.linalg.norm(E + rv - E[d], axis=1)
            else:  # linear+cos
                def unit(x):
                    return x / np.linalg.norm(x, axis=-1, keepdims=True)
                if side == 0:
                    sc = unit(E) @ unit(params["lhs"][r] @ E[s])
                else:
                    sc = unit(E) @ unit(params["rhs"][r] @ E[d])
            truth = d if side == 0 else s
            key = (0, s, r) if side == 0 else (1, d, r)
            ts = sc[truth]
            mask = np.ones(n_ent, bool)
            mask[known[key]] = False
            higher = np.sum(sc[mask] > ts)
            equal = np.sum(sc[mask] == ts)
            ranks[side, k] = 1 + higher + equal / 2
    return ranks.reshape(-1)


def check(model_name, rng, tmp):
    import numpy as np
    import torch
    from torchbiggraph.checkpoint_manager import CheckpointManager
    from torchbiggraph.config import ConfigSchema
    from torchbiggraph.model import make_model
    from torchbiggraph.types import Partition
    import json

    ts = graph(rng)
    tr, va, te = ts[:600], ts[600:650], ts[650:]
    d = os.path.join(tmp, model_name.replace("+", "_"))
    os.makedirs(d)
    for name, part in (("train", tr), ("valid", va), ("test", te)):
        write(os.path.join(d, name + ".tsv"), part)
    a = pbg_side.parse_args([
        "--train", os.path.join(d, "train.tsv"), "--valid", os.path.join(d, "valid.tsv"),
        "--test", os.path.join(d, "test.tsv"), "--model", model_name, "--dim", "8",
        "--epochs", "2", "--negatives", "10", "--batch", "100", "--lr", "0.1",
        "--workers", "1", "--threads", "1", "--seed", "1", "--workdir", os.path.join(d, "work"),
        "--init-scale", "0.3"])
    out = pbg_side.run(a, keep_ranks=True)
    ent, rel = out["entity_ids"], out["relation_ids"]
    # The script's ids are first appearance in train: map ours to them.
    te_ids = out["test_ids"]

    with open(os.path.join(d, "work", "config.json")) as f:
        config = ConfigSchema.from_dict(json.load(f))
    cm = CheckpointManager(config.checkpoint_path)
    model = make_model(config)
    state, _ = cm.read_model()
    model.load_state_dict(state, strict=False)
    emb = cm.read("all", Partition(0))[0].numpy()
    params = {}
    with torch.no_grad():
        if model_name == "complex":
            params["real"] = np.stack([op.real.numpy() for op in model.rhs_operators]).astype(np.float64)
            params["imag"] = np.stack([op.imag.numpy() for op in model.rhs_operators]).astype(np.float64)
        elif model_name == "transe-l2":
            params["translation"] = np.stack([op.translation.numpy() for op in model.rhs_operators]).astype(np.float64)
        else:
            params["lhs"] = model.lhs_operators[0].linear_transformations.numpy().astype(np.float64)
            params["rhs"] = model.rhs_operators[0].linear_transformations.numpy().astype(np.float64)
    known = {}
    for s, r, dd in (tuple(int(x) for x in row) for row in
                     [(ent[f"e{s}"], rel[f"r{r}"], ent[f"e{dd}"]) for s, r, dd in ts if f"e{s}" in ent and f"e{dd}" in ent]):
        known.setdefault((0, s, r), []).append(dd)
        known.setdefault((1, dd, r), []).append(s)
    want = brute(model_name, emb, params, [tuple(int(x) for x in row) for row in te_ids], known, len(ent))
    got = np.asarray(out["ranks"])
    same = np.mean(np.abs(want - got) < 1e-9)
    mrr_want = float(np.mean(1 / want))
    ok = same >= 0.97 and abs(mrr_want - out["test"]["mrr"]) < 1e-3 and out["trained_edges"] == 2 * len(tr)
    print(f"{model_name}: {len(got)} queries, {100 * same:.1f}% equal ranks, MRR {out['test']['mrr']:.4f} "
          f"(brute force {mrr_want:.4f}), trained {out['trained_edges']} edges in {out['train_seconds']:.2f} s: "
          f"{'ok' if ok else 'MISMATCH'}")
    return ok


SCHEMA = """entities:
  user: {partitions: 2}
  item: {partitions: 1}
relations:
  - {name: bought, lhs: user, rhs: item}
  - {name: follows, lhs: user, rhs: user}
  - {name: similar, lhs: item, rhs: item}
"""
TYPED_RELS = [("bought", "u", "i"), ("follows", "u", "u"), ("similar", "i", "i")]


def check_typed(model_name, rng, tmp):
    """A typed graph (--schema: users in 2 partitions, items resident,
    "u7" the user and "i7" the item, also a user "x" and an item "x" that
    are two nodes): pbg_side's ranks against a brute force over the
    candidates of the right type, in float64 from the checkpoint."""
    import numpy as np
    import torch
    from torchbiggraph.checkpoint_manager import CheckpointManager
    from torchbiggraph.config import ConfigSchema
    from torchbiggraph.model import make_model
    from torchbiggraph.types import Partition
    import json

    n_users, n_items = 50, 20
    seen, ts = set(), []
    while len(ts) < 700:
        r = int(rng.integers(3))
        name, lp, rp = TYPED_RELS[r]
        s = int(rng.integers(n_users if lp == "u" else n_items))
        d = int(rng.integers(n_users if rp == "u" else n_items))
        t = (f"{lp}{s}", name, f"{rp}{d}")
        if (lp != rp or s != d) and t not in seen:
            seen.add(t)
            ts.append(t)
    ts[:0] = [("x", "bought", "x"), ("u1", "bought", "x"), ("x", "follows", "u1"), ("x", "similar", "i1")]
    tr, va, te = ts[:600], ts[600:650], ts[650:]
    d = os.path.join(tmp, "typed_" + model_name.replace("+", "_"))
    os.makedirs(d)
    for name, part in (("train", tr), ("valid", va), ("test", te)):
        with open(os.path.join(d, name + ".tsv"), "w") as f:
            for t in part:
                f.write("\t".join(t) + "\n")
    with open(os.path.join(d, "schema.yaml"), "w") as f:
        f.write(SCHEMA)
    a = pbg_side.parse_args([
        "--train", os.path.join(d, "train.tsv"), "--valid", os.path.join(d, "valid.tsv"),
        "--test", os.path.join(d, "test.tsv"), "--schema", os.path.join(d, "schema.yaml"),
        "--model", model_name, "--dim", "8",
        "--epochs", "2", "--negatives", "10", "--batch", "100", "--lr", "0.1",
        "--workers", "1", "--threads", "1", "--seed", "1", "--workdir", os.path.join(d, "work"),
        "--init-scale", "0.3"])
    out = pbg_side.run(a, keep_ranks=True)
    dicts = out["type_dicts"]  # per type (user, item): names in id order
    types = {"user": 0, "item": 1}
    counts = {e["name"]: e["nodes"] for e in out["entity_types"]}
    with open(os.path.join(d, "work", "config.json")) as f:
        config = ConfigSchema.from_dict(json.load(f))
    cm = CheckpointManager(config.checkpoint_path)
    model = make_model(config)
    state, _ = cm.read_model()
    model.load_state_dict(state, strict=False)
    emb = {
        "user": np.concatenate([cm.read("user", Partition(p))[0].numpy() for p in range(2)]).astype(np.float64),
        "item": cm.read("item", Partition(0))[0].numpy().astype(np.float64),
    }
    sides = {"bought": ("user", "item"), "follows": ("user", "user"), "similar": ("item", "item")}
    rels = ["bought", "follows", "similar"]
    with torch.no_grad():
        ops = [model.rhs_operators[r] for r in range(3)]
        if model_name == "transe-l2":
            par = [op.translation.numpy().astype(np.float64) for op in ops]
        else:  # complex
            par = [(op.real.numpy().astype(np.float64), op.imag.numpy().astype(np.float64)) for op in ops]

    def idx(tname, name):
        return dicts[types[tname]].index(name)

    def f(r, S, D):
        """PBG's C(s, op_r(d)) for rows S against rows D (broadcast)."""
        if model_name == "transe-l2":
            return -np.linalg.norm(S - (D + par[r]), axis=-1)
        re, im = par[r]
        h = S.shape[-1] // 2
        dr = D[..., :h] * re - D[..., h:] * im
        di = D[..., :h] * im + D[..., h:] * re
        return np.sum(S[..., :h] * dr + S[..., h:] * di, axis=-1)

    known = {}
    for s, rn, dd in ts:
        lt, rt = sides[rn]
        known.setdefault((0, idx(lt, s), rn), []).append(idx(rt, dd))
        known.setdefault((1, idx(rt, dd), rn), []).append(idx(lt, s))
    te_ids = out["test_ids"]
    want = np.zeros((2, len(te_ids)))
    for k, (s, r, dd) in enumerate(te_ids):
        rn = rels[int(r)]
        lt, rt = sides[rn]
        for side in (0, 1):
            if side == 0:
                sc = f(int(r), emb[lt][s], emb[rt])
                truth, key, n = dd, (0, int(s), rn), counts[rt]
            else:
                sc = f(int(r), emb[lt], emb[rt][dd])
                truth, key, n = s, (1, int(dd), rn), counts[lt]
            assert len(sc) == n
            ts_ = sc[truth]
            mask = np.ones(n, bool)
            mask[known[key]] = False
            want[side, k] = 1 + np.sum(sc[mask] > ts_) + np.sum(sc[mask] == ts_) / 2
    want = want.reshape(-1)
    got = np.asarray(out["ranks"])
    same = np.mean(np.abs(want - got) < 1e-9)
    mrr_want = float(np.mean(1 / want))
    ok = (same >= 0.97 and abs(mrr_want - out["test"]["mrr"]) < 1e-3 and out["trained_edges"] == 2 * len(tr)
          and counts == {"user": len(dicts[0]), "item": len(dicts[1])} and "x" in dicts[0] and "x" in dicts[1])
    print(f"typed {model_name}: {counts['user']} users in 2 partitions, {counts['item']} items resident, "
          f"{out['buckets']} buckets, {len(got)} queries, {100 * same:.1f}% equal ranks, MRR {out['test']['mrr']:.4f} "
          f"(brute force {mrr_want:.4f}, random {out['test']['random_mrr']:.4f}), trained {out['trained_edges']} edges: "
          f"{'ok' if ok else 'MISMATCH'}")
    return ok


def main():
    import numpy as np
    pbg_side.load_pbg(os.environ.get("PBG_SRC", ""))
    rng = np.random.default_rng(7)
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        for m in ("complex", "transe-l2", "linear+cos"):
            ok = check(m, rng, tmp) and ok
        for m in ("transe-l2", "complex"):
            ok = check_typed(m, rng, tmp) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
