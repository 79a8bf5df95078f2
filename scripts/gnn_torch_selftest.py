#!/usr/bin/env python3
"""gnn_torch_selftest.py: checks scripts/gnn_torch.py without realrun.

  1. Each layer's vectorised forward against a naive per-node loop in
     numpy on a small random block (sage-mean both ways round — narrowing
     and widening —, sage-pool, sage-lstm with the LSTM's equations
     written out, gat with concatenated and averaged heads, mlp), and the
     chunked whole-graph inference against the block forward over a
     full-graph block.
  2. A small planted-partition graph directory and random block files in
     the spec's format (a seeded numpy neighbour sampler with fanouts), the
     script run on them for every model: finite, falling loss and test
     accuracy well above chance (the features alone say little; the
     neighbourhood says a lot).
  3. Corrupted inputs are refused with a message (bad magic, truncated
     file, a block whose edges are not in the graph).

Usage: /usr/bin/python3 scripts/gnn_torch_selftest.py [--keep DIR]
Exit status 0 when every check passes.
"""
import argparse
import json
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gnn_torch as gt  # noqa: E402

FAILS = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        FAILS.append(what)


# ------------------------------------------------------------ naive loops

def lin(x, layer):
    w = layer.weight.detach().numpy().astype(np.float64)
    y = x @ w.T
    if layer.bias is not None:
        y = y + layer.bias.detach().numpy()
    return y


def sig(v):
    return 1 / (1 + np.exp(-v))


def naive(layer, kind, x, nd, ptr, nbr):
    """The layer on a block, one destination at a time, in float64."""
    x = x.astype(np.float64)
    out = []
    for i in range(nd):
        ns = nbr[ptr[i]:ptr[i + 1]]
        if kind == "mlp":
            out.append(lin(x[i:i + 1], layer.fc)[0])
            continue
        if kind == "gat":
            W = layer.fc.weight.detach().numpy().astype(np.float64)
            H, O = layer.h, layer.o
            al, ar = layer.attn_l.detach().numpy(), layer.attn_r.detach().numpy()
            b = layer.bias.detach().numpy()
            js = list(ns) + [i]
            zi = (W @ x[i]).reshape(H, O)
            heads = []
            for h in range(H):
                es = []
                for j in js:
                    zj = (W @ x[j]).reshape(H, O)
                    v = zj[h] @ al[h] + zi[h] @ ar[h]
                    es.append(v if v > 0 else 0.2 * v)
                es = np.array(es)
                a = np.exp(es - es.max())
                a /= a.sum()
                heads.append(sum(a[k] * (W @ x[j]).reshape(H, O)[h] for k, j in enumerate(js)) + b[h])
            heads = np.array(heads)
            out.append(heads.reshape(-1) if layer.concat else heads.mean(0))
            continue
        d = x.shape[1]
        if len(ns) == 0:
            agg = np.zeros(d)
        elif kind == "sage-mean":
            agg = x[ns].mean(0)
        elif kind == "sage-pool":
            agg = np.max(np.maximum(lin(x[ns], layer.fc_pool), 0), axis=0)
        elif kind == "sage-lstm":
            P = {n: p.detach().numpy().astype(np.float64) for n, p in layer.lstm.named_parameters()}
            h, c = np.zeros(d), np.zeros(d)
            for j in ns:  # gates i, f, g, o
                gates = P["weight_ih_l0"] @ x[j] + P["bias_ih_l0"] + P["weight_hh_l0"] @ h + P["bias_hh_l0"]
                gi, gf, gg, go = np.split(gates, 4)
                c = sig(gf) * c + sig(gi) * np.tanh(gg)
                h = sig(go) * np.tanh(c)
            agg = h
        out.append(lin(x[i:i + 1], layer.fc_self)[0] + lin(agg[None], layer.fc_neigh)[0])
    return np.array(out)


def random_block(rng, ns, nd, maxdeg):
    ptr = [0]
    nbr = []
    for i in range(nd):
        k = int(rng.integers(0, maxdeg + 1)) if i % 5 else 0  # every 5th has none
        cand = [j for j in range(ns) if j != i]
        nbr += list(rng.choice(cand, size=min(k, len(cand)), replace=False))
        ptr.append(len(nbr))
    return np.array(ptr, dtype=np.int64), np.array(nbr, dtype=np.int64)


def layer_checks():
    torch.manual_seed(3)
    rng = np.random.default_rng(7)
    ns, nd = 23, 9
    ptr, nbr = random_block(rng, ns, nd, 6)
    cases = [
        ("mlp", lambda i, o: gt.MLPLayer(i, o), 6, 4),
        ("sage-mean", lambda i, o: gt.SAGEMean(i, o), 6, 4),   # narrowing: projection first
        ("sage-mean", lambda i, o: gt.SAGEMean(i, o), 4, 7),   # widening: mean first
        ("sage-pool", lambda i, o: gt.SAGEPool(i, o), 5, 3),
        ("sage-lstm", lambda i, o: gt.SAGELSTM(i, o), 5, 3),
        ("gat", lambda i, o: gt.GAT(i, o, 3, True), 5, 2),
        ("gat", lambda i, o: gt.GAT(i, o, 3, False), 5, 4),
    ]
    for kind, make, fin, fout in cases:
        layer = make(fin, fout)
        with torch.no_grad():  # non-zero biases, so they are checked too
            for n, p in layer.named_parameters():
                if "bias" in n:
                    p.uniform_(-0.5, 0.5)
        x = rng.standard_normal((ns, fin)).astype(np.float32)
        m = kind if kind != "mlp" else "mlp"
        mptr, mnbr = (np.zeros(nd + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)) if kind == "mlp" else (ptr, nbr)
        adj = gt.Adj(nd, mptr, mnbr, None, m)
        xt = torch.from_numpy(x)
        with torch.no_grad():
            got = layer.post(layer.pre(xt), xt, adj).numpy()
        want = naive(layer, kind, x, nd, mptr, mnbr)
        err = float(np.abs(got - want).max())
        tag = f"{kind} {fin}->{fout}" + (f" {'concat' if layer.concat else 'mean'}" if kind == "gat" else "")
        check(got.shape == want.shape and err < 1e-4, f"layer {tag}: block forward == per-node loop (max |diff| {err:.2e})")


# ------------------------------------------------------ graph and blocks

def make_graph(d, seed=1, n=600, classes=4, feats=16):
    """Planted partition: edges mostly within a class; features are the
    class's one-hot direction buried in noise (weak on its own)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, classes, n)
    edges = set()
    for u in range(n):
        for _ in range(4):
            same = rng.random() < 0.9
            pool = np.flatnonzero((y == y[u]) if same else (y != y[u]))
            v = int(rng.choice(pool))
            if v != u:
                edges.add((min(u, v), max(u, v)))
    x = rng.standard_normal((n, feats)).astype(np.float32)
    x[np.arange(n), y] += 1.0
    names = [f"node {i}" for i in range(n)]  # names with spaces
    perm = rng.permutation(n)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "nodes.txt"), "w") as f:
        f.writelines(s + "\n" for s in names)
    np.save(os.path.join(d, "features.npy"), x)
    with open(os.path.join(d, "labels.tsv"), "w") as f:
        f.writelines(f"{names[i]}\tclass-{'abcd'[y[i]]}\n" for i in range(n))
    with open(os.path.join(d, "edges.tsv"), "w") as f:
        f.writelines(f"{names[u]}\t{names[v]}\n" for u, v in sorted(edges))
    parts = {"train": perm[: n // 2], "valid": perm[n // 2: 3 * n // 4], "test": perm[3 * n // 4:]}
    for s, ids in parts.items():
        with open(os.path.join(d, s + ".txt"), "w") as f:
            f.writelines(names[i] + "\n" for i in ids)
    return parts


def sample(g, seeds, fanouts, rng):
    """A batch of blocks (DGL order: fanouts[0] for the input layer),
    sampled without replacement, destinations first among the sources."""
    blocks = []
    dst = list(seeds)
    for fan in reversed(fanouts):
        pos = {v: i for i, v in enumerate(dst)}
        src = list(dst)
        ptr, nbr = [0], []
        for v in dst:
            ns = g.nbr[g.ptr[v]:g.ptr[v + 1]]
            if fan >= 0 and len(ns) > fan:
                ns = rng.choice(ns, size=fan, replace=False)
            for u in ns:
                u = int(u)
                if u not in pos:
                    pos[u] = len(src)
                    src.append(u)
                nbr.append(pos[u])
            ptr.append(len(nbr))
        blocks.append((np.array(src), len(dst), np.array(ptr), np.array(nbr, dtype=np.int64)))
        dst = src
    return blocks[::-1]


def write_blocks(path, batches):
    with open(path, "wb") as f:
        f.write(b"TFGNNBLK" + struct.pack("<II", 1, len(batches)))
        for blocks in batches:
            f.write(struct.pack("<I", len(blocks)))
            for src, nd, ptr, nbr in blocks:
                f.write(struct.pack("<III", len(src), nd, len(nbr)))
                for a in (src, ptr, nbr):
                    f.write(np.asarray(a, dtype="<i4").tobytes())


def write_epochs(g, train, d, fanouts, epochs, batch, seed):
    rng = np.random.default_rng(seed)
    os.makedirs(d, exist_ok=True)
    for e in range(1, epochs + 1):
        order = rng.permutation(train)
        bs = [sample(g, order[i:i + batch], fanouts, rng) for i in range(0, len(order), batch)]
        write_blocks(os.path.join(d, f"epoch-{e:04d}.blocks"), bs)


def run(args):
    p = subprocess.run([sys.executable, os.path.join(HERE, "gnn_torch.py")] + args, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def end_to_end(base):
    gdir = os.path.join(base, "graph")
    make_graph(gdir)
    g = gt.Graph(gdir)
    train = g.split["train"]
    write_epochs(g, train, os.path.join(base, "b2"), [10, 5], 8, 32, 1)
    write_epochs(g, train, os.path.join(base, "b0"), [0, 0], 8, 32, 1)
    # inference over chunks == the block forward over one full-graph block
    torch.manual_seed(5)
    for kind in gt.MODELS:
        m = gt.Model(kind, 2, g.x.shape[1], 8, g.classes, 2, 0.0)
        x = torch.from_numpy(g.x)
        full = [gt.Adj(g.n, g.ptr if kind != "mlp" else np.zeros(g.n + 1, dtype=np.int64),
                       g.nbr if kind != "mlp" else np.zeros(0, dtype=np.int64), None, kind) for _ in range(2)]
        m.eval()
        with torch.no_grad():
            want = m(x, full)
        got = m.infer(x, gt.full_chunks(g, kind, max_edges=500))
        err = float((got - want).abs().max())
        check(err < 1e-4, f"{kind}: chunked layer-wise inference == full-graph block forward (max |diff| {err:.2e})")
    results = {}
    for kind in gt.MODELS:
        bdir = os.path.join(base, "b0" if kind == "mlp" else "b2")
        rc, out, err = run(["--graph", gdir, "--blocks", bdir, "--model", kind, "--layers", "2", "--hidden", "32",
                            "--heads", "4", "--dropout", "0.2", "--lr", "0.01", "--threads", "2", "--seed", "1"])
        if rc != 0:
            check(False, f"{kind}: gnn_torch.py exited {rc}: {err.strip()}")
            continue
        r = json.loads(out)
        results[kind] = r
        losses = [e["loss"] for e in r["epochs"]]
        check(len(losses) == 8 and all(np.isfinite(losses)) and losses[-1] < 0.8 * losses[0],
              f"{kind}: 8 epochs, loss {losses[0]:.3f} -> {losses[-1]:.3f}, {r['train_s']:.2f} s training")
        floor = 0.4 if kind == "mlp" else 0.8
        check(r["test_acc"] > floor, f"{kind}: test accuracy {r['test_acc']:.3f} (valid {r['valid_acc']:.3f}) > {floor} (chance 0.25)")
    if "mlp" in results and "sage-mean" in results:
        check(results["sage-mean"]["test_acc"] > results["mlp"]["test_acc"] + 0.1,
              "sage-mean clearly above mlp on a graph whose neighbourhoods carry the signal")
    # same seed, same blocks: the same run
    rc, out, _ = run(["--graph", gdir, "--blocks", os.path.join(base, "b2"), "--model", "sage-mean", "--hidden", "32",
                      "--dropout", "0.2", "--lr", "0.01", "--seed", "1", "--epochs", "2", "--no-eval"])
    rc2, out2, _ = run(["--graph", gdir, "--blocks", os.path.join(base, "b2"), "--model", "sage-mean", "--hidden", "32",
                        "--dropout", "0.2", "--lr", "0.01", "--seed", "1", "--epochs", "2", "--no-eval"])
    check(rc == rc2 == 0 and [e["loss"] for e in json.loads(out)["epochs"]] == [e["loss"] for e in json.loads(out2)["epochs"]],
          "same seed and blocks: the same losses")
    # refusals
    bad = os.path.join(base, "bad")
    os.makedirs(bad, exist_ok=True)
    good = open(os.path.join(base, "b2", "epoch-0001.blocks"), "rb").read()
    for name, data, want in [("magic", b"XXXXXXXX" + good[8:], "not a block file"),
                             ("truncated", good[:-7], "truncated"),
                             ("version", good[:8] + struct.pack("<I", 2) + good[12:], "version 2")]:
        with open(os.path.join(bad, "epoch-0001.blocks"), "wb") as f:
            f.write(data)
        rc, _, err = run(["--graph", gdir, "--blocks", bad, "--model", "sage-mean"])
        check(rc == 1 and want in err, f"refuses a {name} block file: {err.strip()}")
    # a block naming a non-edge (ids shifted by one)
    rng = np.random.default_rng(2)
    bs = [sample(g, train[:16], [3, 3], rng)]
    bs[0] = [((src + 1) % g.n, nd, ptr, nbr) for src, nd, ptr, nbr in bs[0]]
    write_blocks(os.path.join(bad, "epoch-0001.blocks"), bs)
    rc, _, err = run(["--graph", gdir, "--blocks", bad, "--model", "sage-mean"])
    check(rc == 1 and "not in the graph" in err, f"refuses blocks numbered differently from nodes.txt: {err.strip()}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="build in DIR and keep it")
    a = ap.parse_args()
    torch.set_num_threads(2)
    layer_checks()
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
        end_to_end(a.keep)
    else:
        with tempfile.TemporaryDirectory() as d:
            end_to_end(d)
    print(f"{len(FAILS)} failed" if FAILS else "all passed")
    sys.exit(1 if FAILS else 0)


if __name__ == "__main__":
    main()
