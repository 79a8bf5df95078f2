#!/usr/bin/env python3
"""pbg_side.py: train PyTorch-BigGraph on the edge files tierflow trains on
(realrun --edges/--valid/--test: "src rel dst" per line, tab-separated)
and rank the test edges the way realrun ranks them, for the side-by-side
comparison of `make reproduce-models-pbg` (experiments/models_pbg.go).

    PBG_SRC=DIR pbg_side.py --train train.tsv --valid valid.tsv \
        --test test.tsv --model complex --dim 100 --epochs 5 \
        --negatives 100 --batch 1000 --lr 0.3 --workers 2 --seed 1 \
        --workdir WORK

PBG's source is not fetched: PBG_SRC (or --pbg-src) names a checkout of
github.com/facebookresearch/PyTorch-BigGraph (pure Python; PBG_INSTALL_CPP
is not needed; PBG_COMMIT names its commit when DIR is not a git
checkout, e.g. a `git archive` export); it needs torch, h5py, attrs and numpy (Debian:
python3-torch python3-h5py python3-attr python3-numpy; python3-yaml for
--schema).

Models (tierflow's --model; PBG's operator and comparator):
  dot        none + dot               distmult  diagonal + dot
  complex    complex_diagonal + dot   transe-l2 translation + l2
  OP+CMP     any PBG operator and comparator (e.g. linear+cos)
A named model is trained with one PBG relation type per relation and
dynamic_relations off: PBG then scores an edge (s, r, d) as C(s, op_r(d))
on both sides with one operator per relation, the same family as
tierflow's named model (shared relation row, both sides score the same
f(s, r, d)): complex is Re<s, conj(r·d)> = Re<s·conj(r), conj(d)>
(tierflow's with r -> conj r); transe-l2 is -||s - d - r|| (tierflow's
-||s + r - d|| with r -> -r). An OP+CMP pair is trained with dynamic
relations, two operators per relation (lhs g_r, rhs h_r), as tierflow's
pairs are. --relations overrides (types or dynamic).

Typed graphs (--schema FILE, realrun --schema's YAML: entity types with
their partition counts, relations with their lhs and rhs types): PBG's
config gets the same entities ({user: {num_partitions: 4}, item:
{num_partitions: 1}}) and one relation type per schema relation with its
lhs, rhs and the model's operator (an OP+CMP pair too: PBG's dynamic
relations need every relation between the same two types). Node names
are per type; each type's names are shuffled with --seed and cut into
its partitions by PBG's Dictionary, as torchbiggraph_import_from_tsv
does, and each training edge is stored in bucket (lhs partition, rhs
partition), an unpartitioned side in partition 0 (PBG's importer). A test
edge's destination is ranked against every node of the relation's rhs
type, its source against every node of its lhs type; the JSON adds
entity_types, relation_sides, buckets, test.random_mrr (a random
scorer's expected MRR over the same filtered candidates) and
test.relations (MRR and Hits@10 per relation).

Negatives: num_batch_negs 0 and num_uniform_negs = --negatives, so that
PBG's chunk is --negatives edges sharing --negatives uniform negatives per
side, as realrun's chunk of --negatives edges shares --negatives uniform
negatives on knowledge graphs (--degree-frac 0). eval_fraction is 0 (all
training edges train), global_emb off, one partition.

Evaluation (computed here from PBG's checkpoint, with PBG's own model
code: make_model, its operators and comparator): every test edge is ranked
on both sides against every entity, the candidates that form a known edge
(train, valid or test) with the query removed, the true entity's score
taken from the same score row; rank = 1 + higher + equal/2 (realrun's
mid-rank for ties); MRR and Hits@k over the 2 x test edges. self_above
is the share of queries whose own entity (the source when the
destination is replaced, and the other way round) outscores the truth:
realrun does not filter it either, and a model with identity-like
relations ranks it first. Valid and test
edges with an entity or relation not in the training file are left out
(realrun's --unseen skip). PBG's own torchbiggraph.eval ranks against
sampled negatives only, so it is not used.

Timing: train_seconds sums PBG's own per-bucket training times (its log
line "Trained N edges in T s": the Hogwild workers' batches, without
start-up, checkpoints or I/O); wall_seconds is the whole train() call
(spawning the worker pool, initialising, checkpointing included).
edges_per_second = train edges x epochs / train_seconds. PBG samples
negatives with torch's generator seeded by each worker's pid (PBG's
_pool_init), so only the initial embeddings follow --seed.

Prints one JSON object on stdout; PBG's log goes to WORK/pbg.log.
"""
import argparse
import concurrent.futures  # noqa: F401 (see below)
import json
import logging
import os
import re
import subprocess
import sys
import time

# OpenMP threads that spin at barriers lose their time slice on a shared
# machine (see scripts/gnn_torch.py); set before torch loads libgomp.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
# PBG's checkpoint_manager.py names concurrent.futures after a bare
# `import concurrent`, which Python 3.11 no longer loads as a side effect:
# it is imported above, at the top, so that PBG's spawned workers (which
# import this file as __mp_main__) have it too.

NAMED = {
    "dot": ("none", "dot"),
    "distmult": ("diagonal", "dot"),
    "complex": ("complex_diagonal", "dot"),
    "transe-l2": ("translation", "l2"),
}
NOT_IN_PBG = {
    "transe-l1": "PBG has no l1 comparator",
    "rotate": "PBG has no modulus_l1 comparator (RotatE)",
}


def fail(msg):
    print("pbg_side: " + msg, file=sys.stderr)
    sys.exit(2)


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--train", required=True)
    p.add_argument("--valid", default="")
    p.add_argument("--test", required=True)
    p.add_argument("--pbg-src", default=os.environ.get("PBG_SRC", ""),
                   help="PyTorch-BigGraph checkout (default $PBG_SRC)")
    p.add_argument("--schema", default="",
                   help="entity types and relations (realrun --schema's YAML): a typed graph")
    p.add_argument("--model", default="complex")
    p.add_argument("--relations", choices=["auto", "types", "dynamic"], default="auto")
    p.add_argument("--dim", type=int, default=100)
    p.add_argument("--epochs", type=int, default=1)
    p.add_argument("--batch", type=int, default=1000)
    p.add_argument("--negatives", type=int, default=100)
    p.add_argument("--batch-negs", type=int, default=0,
                   help="PBG's num_batch_negs (0: uniform negatives only, as realrun)")
    p.add_argument("--loss", choices=["softmax", "ranking", "logistic"], default="softmax")
    p.add_argument("--margin", type=float, default=0.1)
    p.add_argument("--lr", type=float, default=0.3)
    p.add_argument("--reg-coef", type=float, default=0.0,
                   help="PBG's regularization_coef (its N3 regulariser; 0: none)")
    p.add_argument("--init-scale", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--threads", type=int, default=2, help="torch threads of the evaluation")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workdir", required=True)
    p.add_argument("--eval-block", type=int, default=256, help="queries scored per block")
    return p.parse_args(argv)


def read_triples(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) != 3:
                fail(f"{path}:{n}: want 3 tab-separated fields (src rel dst), got {len(parts)}")
            out.append(tuple(parts))
    return out


def load_pbg(src):
    if not src:
        fail("PyTorch-BigGraph's source is not given: set PBG_SRC=DIR (a checkout of "
             "github.com/facebookresearch/PyTorch-BigGraph) or --pbg-src DIR")
    if not os.path.isfile(os.path.join(src, "torchbiggraph", "train.py")):
        fail(f"{src}: no torchbiggraph/train.py there (PBG_SRC must be a PyTorch-BigGraph checkout)")
    src = os.path.abspath(src)
    sys.path.insert(0, src)
    # PBG's spawned workers import it too.
    os.environ["PYTHONPATH"] = src + os.pathsep + os.environ.get("PYTHONPATH", "")


def pbg_version(src):
    v = {"source": os.path.abspath(src)}
    try:
        v["commit"] = subprocess.run(["git", "-C", src, "rev-parse", "HEAD"], capture_output=True,
                                     text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        if os.environ.get("PBG_COMMIT"):
            v["commit"] = os.environ["PBG_COMMIT"]  # an exported tree (git archive)
    try:
        with open(os.path.join(src, "torchbiggraph", "VERSION.txt")) as f:
            v["version"] = f.read().strip()
    except OSError:
        pass
    return v


class TrainTimes(logging.Handler):
    """Collects PBG's per-bucket "Trained N edges in T s" log lines."""
    pat = re.compile(r"Trained (\d+) edges in ([0-9.]+) s")

    def __init__(self):
        super().__init__()
        self.edges, self.seconds, self.buckets = 0, 0.0, 0

    def emit(self, record):
        m = self.pat.search(record.getMessage())
        if m:
            self.edges += int(m.group(1))
            self.seconds += float(m.group(2))
            self.buckets += 1


def start_log(work):
    """PBG's log to WORK/pbg.log, and its per-bucket training times."""
    log = logging.getLogger("torchbiggraph")
    log.setLevel(logging.INFO)
    fh = logging.FileHandler(os.path.join(work, "pbg.log"), mode="w")
    fh.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
    log.addHandler(fh)
    times = TrainTimes()
    log.addHandler(times)
    log.propagate = False
    return fh, times


def stop_log(fh, times):
    log = logging.getLogger("torchbiggraph")
    log.removeHandler(fh)
    log.removeHandler(times)
    fh.close()


def main(argv):
    out = run(parse_args(argv))
    json.dump(out, sys.stdout, indent=1)
    print()


def train_pbg(a, work, fh, times, cmp, layout):
    """PBG's config from the run's flags and the graph's layout (paths,
    entities, relations, dynamic_relations), written to work/config.json,
    then PBG's training; returns the config and the training's wall
    seconds. The parent draws the initial embeddings (PBG's coordinator);
    workers reseed from their pid."""
    import numpy as np
    import torch
    from torchbiggraph.config import parse_config
    from torchbiggraph.train import train
    from torchbiggraph.util import SubprocessInitializer, setup_logging
    cfg = dict(layout,
        dimension=a.dim, init_scale=a.init_scale, global_emb=False, comparator=cmp,
        num_epochs=a.epochs, batch_size=a.batch,
        num_batch_negs=a.batch_negs, num_uniform_negs=a.negatives,
        loss_fn=a.loss, margin=a.margin, lr=a.lr,
        regularization_coef=a.reg_coef,
        eval_fraction=0, workers=a.workers, verbose=0,
    )
    if a.reg_coef > 0:
        cfg["regularizer"] = "N3"
    config = parse_config(cfg)
    with open(os.path.join(work, "config.json"), "w") as f:
        json.dump(config.to_dict(), f, indent=1, sort_keys=True)
    torch.manual_seed(a.seed)
    np.random.seed(a.seed)
    sub = SubprocessInitializer()
    sub.register(setup_logging, config.verbose)
    t0 = time.perf_counter()
    try:
        train(config, subprocess_init=sub)
    finally:
        stop_log(fh, times)
    return config, time.perf_counter() - t0


def run(a, keep_ranks=False):
    """Trains and evaluates as a (parse_args' namespace) says and returns
    the JSON object; keep_ranks adds the per-query ranks and the test edges
    (as entity and relation ids) under "ranks" and "test_ids"."""
    if a.model in NOT_IN_PBG:
        fail(f"--model {a.model}: {NOT_IN_PBG[a.model]}")
    if a.model in NAMED:
        op, cmp = NAMED[a.model]
        mode = "types"
    elif "+" in a.model:
        op, cmp = a.model.split("+", 1)
        mode = "dynamic"
    else:
        fail(f"--model {a.model}: want one of {', '.join(NAMED)} or OPERATOR+COMPARATOR")
    if a.relations != "auto":
        mode = a.relations
    load_pbg(a.pbg_src)
    if a.schema:
        return run_typed(a, op, cmp, mode, keep_ranks)

    import numpy as np
    import torch
    from torchbiggraph.model import make_model
    from torchbiggraph.checkpoint_manager import CheckpointManager
    from torchbiggraph.graph_storages import (EDGE_STORAGES, ENTITY_STORAGES,
                                              RELATION_TYPE_STORAGES)
    from torchbiggraph.edgelist import EdgeList
    from torchbiggraph.entitylist import EntityList
    from torchbiggraph.types import Partition

    os.makedirs(a.workdir, exist_ok=True)
    work = os.path.abspath(a.workdir)
    fh, times = start_log(work)

    # Entities and relations in order of first appearance in the training
    # file; held-out edges with anything else are left out.
    train_t = read_triples(a.train)
    ent, rel = {}, {}
    for s, r, d in train_t:
        for x in (s, d):
            if x not in ent:
                ent[x] = len(ent)
        if r not in rel:
            rel[r] = len(rel)

    def ids(ts):
        kept = [(ent[s], rel[r], ent[d]) for s, r, d in ts if s in ent and d in ent and r in rel]
        return np.array(kept, dtype=np.int64).reshape(-1, 3), len(ts) - len(kept)

    tr, _ = ids(train_t)
    va, va_skip = ids(read_triples(a.valid)) if a.valid else (np.zeros((0, 3), np.int64), 0)
    te, te_skip = ids(read_triples(a.test))

    entity_path = os.path.join(work, "entities")
    edge_path = os.path.join(work, "edges_train")
    ckpt = os.path.join(work, "checkpoints")
    es = ENTITY_STORAGES.make_instance(entity_path)
    es.prepare()
    es.save_count("all", 0, len(ent))
    rs = RELATION_TYPE_STORAGES.make_instance(entity_path)
    rs.prepare()
    rs.save_count(len(rel))
    store = EDGE_STORAGES.make_instance(edge_path)
    store.prepare()
    store.save_edges(Partition(0), Partition(0), EdgeList(
        EntityList.from_tensor(torch.from_numpy(tr[:, 0].copy())),
        EntityList.from_tensor(torch.from_numpy(tr[:, 2].copy())),
        torch.from_numpy(tr[:, 1].copy())))

    if mode == "types":
        rels = [{"name": name, "lhs": "all", "rhs": "all", "operator": op} for name in rel]
    else:
        rels = [{"name": "all_edges", "lhs": "all", "rhs": "all", "operator": op}]
    config, wall = train_pbg(a, work, fh, times, cmp, dict(
        entity_path=entity_path, edge_paths=[edge_path], checkpoint_path=ckpt,
        entities={"all": {"num_partitions": 1}}, relations=rels,
        dynamic_relations=(mode == "dynamic")))

    torch.set_num_threads(a.threads)
    t1 = time.perf_counter()
    res = evaluate(config, CheckpointManager, make_model, Partition, torch, np, mode,
                   len(ent), tr, va, te, a.eval_block)
    res["seconds"] = time.perf_counter() - t1
    res["valid_skipped"], res["test_skipped"] = va_skip, te_skip

    out = {
        "engine": "pbg",
        "pbg": pbg_version(a.pbg_src),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "model": a.model, "operator": op, "comparator": cmp, "relations": mode,
        "entities": len(ent), "relation_types": len(rel), "train_edges": int(len(tr)),
        "dim": a.dim, "epochs": a.epochs, "batch_size": a.batch,
        "num_uniform_negs": a.negatives, "num_batch_negs": a.batch_negs,
        "loss": a.loss, "margin": a.margin, "lr": a.lr, "regularization_coef": a.reg_coef,
        "init_scale": a.init_scale, "workers": a.workers, "seed": a.seed,
        "train_seconds": times.seconds, "wall_seconds": wall,
        "trained_edges": times.edges,
        "edges_per_second": times.edges / times.seconds if times.seconds > 0 else None,
        "test": res,
    }
    if keep_ranks:
        out["ranks"], out["test_ids"] = res.pop("_ranks"), te
        out["entity_ids"], out["relation_ids"] = ent, rel
    else:
        res.pop("_ranks")
    return out


def read_schema(path):
    """realrun --schema's file (PBG's vocabulary): entities (a mapping of
    type names to {partitions: N}, 1 = unpartitioned) and relations (a
    list of {name, lhs, rhs}). Returns ([(type, partitions)], [(name,
    lhs, rhs)]) in the file's order. The Go side (workload.ParseSchema)
    is the strict check; this one refuses what PBG could not train."""
    try:
        import yaml
    except ImportError:
        fail("--schema needs PyYAML (Debian: python3-yaml; make pbg-deps installs it)")
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    if not isinstance(doc, dict) or not isinstance(doc.get("entities"), dict) or not doc["entities"]:
        fail(f"{path}: want entities: a mapping of type names to {{partitions: N}}")
    if not isinstance(doc.get("relations"), list) or not doc["relations"]:
        fail(f"{path}: want relations: a list of {{name, lhs, rhs}}")
    types = []
    for name, body in doc["entities"].items():
        parts = (body or {}).get("partitions", 1)
        if not isinstance(parts, int) or parts < 1:
            fail(f"{path}: entities.{name}.partitions: want a positive integer, got {parts!r}")
        types.append((str(name), parts))
    names = {t for t, _ in types}
    counts = {p for _, p in types if p > 1}
    if len(counts) > 1:
        fail(f"{path}: partitioned types with different partition counts {sorted(counts)} (PBG needs one)")
    rels = []
    for i, r in enumerate(doc["relations"]):
        if not isinstance(r, dict) or not all(k in r for k in ("name", "lhs", "rhs")):
            fail(f"{path}: relations[{i}]: want {{name, lhs, rhs}}")
        for side in ("lhs", "rhs"):
            if r[side] not in names:
                fail(f"{path}: relations[{i}].{side}: no entity type {r[side]!r}")
        rels.append((str(r["name"]), str(r["lhs"]), str(r["rhs"])))
    if len({r[0] for r in rels}) != len(rels):
        fail(f"{path}: duplicate relation names")
    return types, rels


def run_typed(a, op, cmp, mode, keep_ranks):
    """run() for a typed graph (--schema): PBG's config has the schema's
    entity types, each with its partition count (1: unpartitioned), and
    one relation type per schema relation with its lhs and rhs types and
    the model's operator (dynamic relations need every relation between
    the same two types in PBG, so an OP+CMP pair is trained with one
    operator per relation too, on the destination side, as the named
    models are). Node names are per type; each type's names are shuffled
    with --seed and cut into its partitions by PBG's own Dictionary (as
    torchbiggraph_import_from_tsv does), and every training edge goes to
    the bucket (lhs partition, rhs partition), an unpartitioned side's
    partition being 0 (PBG's importer). Evaluation ranks a test edge's
    destination against every node of its relation's rhs type and its
    source against every node of the lhs type (evaluate_typed)."""
    if a.relations == "dynamic":
        fail("--relations dynamic with --schema: PBG's dynamic relations need every relation between the same two types")
    mode = "types"
    types, rels = read_schema(a.schema)
    import random

    import numpy as np
    import torch
    from torchbiggraph.converters.dictionary import Dictionary
    from torchbiggraph.model import make_model
    from torchbiggraph.checkpoint_manager import CheckpointManager
    from torchbiggraph.graph_storages import (EDGE_STORAGES, ENTITY_STORAGES,
                                              RELATION_TYPE_STORAGES)
    from torchbiggraph.edgelist import EdgeList
    from torchbiggraph.entitylist import EntityList
    from torchbiggraph.types import Partition

    os.makedirs(a.workdir, exist_ok=True)
    work = os.path.abspath(a.workdir)
    fh, times = start_log(work)

    rel_id = {name: i for i, (name, _, _) in enumerate(rels)}
    tindex = {t: i for i, (t, _) in enumerate(types)}
    side_types = [(tindex[lhs], tindex[rhs]) for _, lhs, rhs in rels]
    train_t = read_triples(a.train)
    names = [dict() for _ in types]  # per type: name -> first appearance
    for n, (s, r, d) in enumerate(train_t, 1):
        if r not in rel_id:
            fail(f"{a.train}:{n}: relation {r!r} is not in the schema")
        lt, rt = side_types[rel_id[r]]
        names[lt].setdefault(s, len(names[lt]))
        names[rt].setdefault(d, len(names[rt]))
    rng = random.Random(a.seed)
    dicts = []
    for (t, parts), nm in zip(types, names):
        lst = list(nm)
        rng.shuffle(lst)
        dicts.append(Dictionary(lst, num_parts=parts))

    def ids(ts, path):
        """Edges as (lhs type-local id, relation, rhs type-local id)."""
        kept = []
        for n, (s, r, d) in enumerate(ts, 1):
            if r not in rel_id:
                fail(f"{path}:{n}: relation {r!r} is not in the schema")
            ri = rel_id[r]
            lt, rt = side_types[ri]
            if s in dicts[lt].word_to_ix and d in dicts[rt].word_to_ix:
                kept.append((dicts[lt].get_id(s), ri, dicts[rt].get_id(d)))
        return np.array(kept, dtype=np.int64).reshape(-1, 3), len(ts) - len(kept)

    tr, _ = ids(train_t, a.train)
    va, va_skip = ids(read_triples(a.valid), a.valid) if a.valid else (np.zeros((0, 3), np.int64), 0)
    te, te_skip = ids(read_triples(a.test), a.test)

    entity_path = os.path.join(work, "entities")
    edge_path = os.path.join(work, "edges_train")
    ckpt = os.path.join(work, "checkpoints")
    es = ENTITY_STORAGES.make_instance(entity_path)
    es.prepare()
    for (t, parts), dct in zip(types, dicts):
        for part in range(parts):
            es.save_count(t, part, dct.part_size(part))
            es.save_names(t, part, dct.get_part_list(part))
    rs = RELATION_TYPE_STORAGES.make_instance(entity_path)
    rs.prepare()
    rs.save_names([name for name, _, _ in rels])
    store = EDGE_STORAGES.make_instance(edge_path)
    store.prepare()
    buckets = {}
    for s, r, d in tr:
        lt, rt = side_types[r]
        lp, lo = dicts[lt].get_partition(dicts[lt].ix_to_word[s])
        rp, ro = dicts[rt].get_partition(dicts[rt].ix_to_word[d])
        buckets.setdefault((lp, rp), []).append((lo, r, ro))
    for (lp, rp), es_ in sorted(buckets.items()):
        arr = np.array(es_, dtype=np.int64)
        store.save_edges(Partition(lp), Partition(rp), EdgeList(
            EntityList.from_tensor(torch.from_numpy(arr[:, 0].copy())),
            EntityList.from_tensor(torch.from_numpy(arr[:, 2].copy())),
            torch.from_numpy(arr[:, 1].copy())))

    config, wall = train_pbg(a, work, fh, times, cmp, dict(
        entity_path=entity_path, edge_paths=[edge_path], checkpoint_path=ckpt,
        entities={t: {"num_partitions": parts} for t, parts in types},
        relations=[{"name": name, "lhs": lhs, "rhs": rhs, "operator": op} for name, lhs, rhs in rels],
        dynamic_relations=False))

    torch.set_num_threads(a.threads)
    t1 = time.perf_counter()
    res = evaluate_typed(config, CheckpointManager, make_model, Partition, torch, np,
                         types, rels, side_types, dicts, tr, va, te, a.eval_block)
    res["seconds"] = time.perf_counter() - t1
    res["valid_skipped"], res["test_skipped"] = va_skip, te_skip

    out = {
        "engine": "pbg",
        "pbg": pbg_version(a.pbg_src),
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "model": a.model, "operator": op, "comparator": cmp, "relations": mode,
        "entities": sum(d.size() for d in dicts), "relation_types": len(rels), "train_edges": int(len(tr)),
        "entity_types": [{"name": t, "partitions": parts, "nodes": d.size()} for (t, parts), d in zip(types, dicts)],
        "relation_sides": [{"name": name, "lhs": lhs, "rhs": rhs} for name, lhs, rhs in rels],
        "buckets": len(buckets),
        "dim": a.dim, "epochs": a.epochs, "batch_size": a.batch,
        "num_uniform_negs": a.negatives, "num_batch_negs": a.batch_negs,
        "loss": a.loss, "margin": a.margin, "lr": a.lr, "regularization_coef": a.reg_coef,
        "init_scale": a.init_scale, "workers": a.workers, "seed": a.seed,
        "train_seconds": times.seconds, "wall_seconds": wall,
        "trained_edges": times.edges,
        "edges_per_second": times.edges / times.seconds if times.seconds > 0 else None,
        "test": res,
    }
    if keep_ranks:
        out["ranks"], out["test_ids"] = res.pop("_ranks"), te
        out["type_dicts"] = [d.ix_to_word for d in dicts]
    else:
        res.pop("_ranks")
    return out


def evaluate_typed(config, CheckpointManager, make_model, Partition, torch, np,
                   types, rels, side_types, dicts, tr, va, te, block):
    """Filtered ranking of te (type-local ids) on both sides: the
    destination against every node of the relation's rhs type, the source
    against every node of its lhs type, PBG's score C(s, op_r(d)) (one
    operator per relation, on the destination side); the candidates that
    form a known edge of the same relation are removed, ties at the
    mid-rank. Also the MRR a random scorer would get (per query the mean of
    1/rank over the uniform ranks among its filtered candidates)."""
    cm = CheckpointManager(config.checkpoint_path)
    model = make_model(config)
    state, _ = cm.read_model()
    model.load_state_dict(state, strict=False)
    model.eval()
    # Each type's table in its Dictionary's order (partitions in turn).
    emb = []
    for (t, parts) in types:
        emb.append(torch.cat([cm.read(t, Partition(p))[0].float() for p in range(parts)]))

    known = {}
    for s, r, d in np.concatenate([tr, va, te]):
        known.setdefault((0, int(s), int(r)), []).append(int(d))
        known.setdefault((1, int(d), int(r)), []).append(int(s))

    rk2 = np.zeros((2, len(te)))
    rand2 = np.zeros((2, len(te)))
    harmonic = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, max(e.shape[0] for e in emb) + 2))])
    self_above = 0
    order = np.lexsort((te[:, 1],))
    tes = te[order]
    with torch.no_grad():
        for side in (0, 1):
            i, cache = 0, {}
            while i < len(tes):
                j = min(i + block, len(tes))
                j = i + int(np.searchsorted(tes[i:j, 1], tes[i, 1], side="right"))
                blk = tes[i:j]
                rid = int(blk[0, 1])
                lt, rt = side_types[rid]
                name_l, name_r = types[lt][0], types[rt][0]
                op = model.rhs_operators[rid]
                if side == 0:  # C(s, op_r(c)), c of the rhs type
                    x, truth, qt, ct = blk[:, 0], blk[:, 2], lt, rt
                    q = model.adjust_embs(emb[lt][torch.from_numpy(x)].clone(), rid, name_l, None)
                    if rid not in cache:
                        cache = {rid: model.adjust_embs(emb[rt].clone(), rid, name_r, op)}
                else:  # C(c, op_r(d)), c of the lhs type
                    x, truth, qt, ct = blk[:, 2], blk[:, 0], rt, lt
                    q = model.adjust_embs(emb[rt][torch.from_numpy(x)].clone(), rid, name_r, op)
                    if rid not in cache:
                        cache = {rid: model.adjust_embs(emb[lt].clone(), rid, name_l, None)}
                cand = cache[rid]
                q3, c3 = q.unsqueeze(0), cand.unsqueeze(0)
                _, _, sc = model.comparator(q3, q3, c3[:, :1], c3)
                sc = sc[0]
                ts = sc[torch.arange(len(blk)), torch.from_numpy(truth)].clone()
                own = sc[torch.arange(len(blk)), torch.from_numpy(x)] if qt == ct else None
                n_cand = sc.shape[1]
                for k, (s, r, d) in enumerate(blk):
                    key = (0, int(s), int(r)) if side == 0 else (1, int(d), int(r))
                    sc[k, known[key]] = float("-inf")
                    # candidates left: the truth and every non-known node
                    m = n_cand - len(set(known[key])) + 1
                    rand2[side, order[i + k]] = harmonic[m] / m
                    if own is not None and int(x[k]) not in known[key] and own[k] > ts[k]:
                        self_above += 1
                tcol = ts.unsqueeze(1)
                higher = (sc > tcol).sum(1).double()
                equal = (sc == tcol).sum(1).double()
                rk2[side, order[i:j]] = (1 + higher + equal / 2).numpy()
                i = j
    rk = rk2.reshape(-1)
    per_rel = {}
    for ri, (name, _, _) in enumerate(rels):
        sel = np.concatenate([te[:, 1] == ri, te[:, 1] == ri])
        if sel.any():
            per_rel[name] = {"queries": int(sel.sum()), "mrr": float(np.mean(1 / rk[sel])),
                             "hits10": float(np.mean(rk[sel] <= 10))}
    return {
        "edges": int(len(te)), "queries": int(len(rk)),
        "mrr": float(np.mean(1 / rk)) if len(rk) else None,
        "hits1": float(np.mean(rk <= 1)) if len(rk) else None,
        "hits3": float(np.mean(rk <= 3)) if len(rk) else None,
        "hits10": float(np.mean(rk <= 10)) if len(rk) else None,
        "random_mrr": float(np.mean(rand2)) if len(rk) else None,
        "self_above": self_above / len(rk) if len(rk) else None,
        "relations": per_rel,
        "entities": {t: d.size() for (t, _), d in zip(types, dicts)},
        "_ranks": rk,
    }


def evaluate(config, CheckpointManager, make_model, Partition, torch, np, mode, n_ent, tr, va, te, block):
    """Filtered ranking of te on both sides against every entity (see the
    module's doc)."""
    cm = CheckpointManager(config.checkpoint_path)
    model = make_model(config)
    state, _ = cm.read_model()
    model.load_state_dict(state, strict=False)
    model.eval()
    emb, _ = cm.read("all", Partition(0))
    emb = emb.float()

    known = {}
    for s, r, d in np.concatenate([tr, va, te]):
        known.setdefault((0, int(s), int(r)), []).append(int(d))
        known.setdefault((1, int(d), int(r)), []).append(int(s))

    def score(side, x, r):
        """Scores (n x n_ent) of the queries x (entity ids, one relation id
        each in r) against every entity: side 0 replaces the destination,
        side 1 the source."""
        xe = emb[torch.from_numpy(x)]
        if mode == "types":
            rid = int(r[0])
            op = model.rhs_operators[rid]
            if side == 0:  # C(s, op_r(c))
                q = model.adjust_embs(xe.clone(), rid, "all", None)
                cand = model.adjust_embs(emb.clone(), rid, "all", op)
            else:  # C(c, op_r(d))
                q = model.adjust_embs(xe.clone(), rid, "all", op)
                cand = model.adjust_embs(emb.clone(), rid, "all", None)
        else:
            rt = torch.from_numpy(r)
            op = model.lhs_operators[0] if side == 0 else model.rhs_operators[0]
            q = model.adjust_embs(xe.clone(), rt, "all", op)  # g_r(s) or h_r(d)
            cand = model.adjust_embs(emb.clone(), 0, "all", None)
        q3, c3 = q.unsqueeze(0), cand.unsqueeze(0)
        _, _, sc = model.comparator(q3, q3, c3[:, :1], c3)
        return sc[0]

    rk2 = np.zeros((2, len(te)))  # [side, test edge]
    self_above = 0
    order = np.lexsort((te[:, 1],)) if mode == "types" else np.arange(len(te))
    tes = te[order]
    with torch.no_grad():
        for side in (0, 1):
            i = 0
            while i < len(tes):
                j = min(i + block, len(tes))
                if mode == "types":
                    j = i + int(np.searchsorted(tes[i:j, 1], tes[i, 1], side="right"))
                blk = tes[i:j]
                x = blk[:, 0] if side == 0 else blk[:, 2]
                truth = blk[:, 2] if side == 0 else blk[:, 0]
                sc = score(side, x, blk[:, 1])
                ts = sc[torch.arange(len(blk)), torch.from_numpy(truth)].clone()
                # The query's own entity, unless it is a known partner
                # (filtered), is a candidate as in realrun: count how often
                # it outranks the truth (a reflexive bias of the model).
                own = sc[torch.arange(len(blk)), torch.from_numpy(x)]
                for k, (s, r, d) in enumerate(blk):
                    key = (0, int(s), int(r)) if side == 0 else (1, int(d), int(r))
                    sc[k, known[key]] = float("-inf")
                    if int(x[k]) not in known[key] and own[k] > ts[k]:
                        self_above += 1
                tcol = ts.unsqueeze(1)
                higher = (sc > tcol).sum(1).double()
                equal = (sc == tcol).sum(1).double()
                rk2[side, order[i:j]] = (1 + higher + equal / 2).numpy()
                i = j
    rk = rk2.reshape(-1)
    return {
        "edges": int(len(te)), "queries": int(len(rk)),
        "mrr": float(np.mean(1 / rk)) if len(rk) else None,
        "hits1": float(np.mean(rk <= 1)) if len(rk) else None,
        "hits3": float(np.mean(rk <= 3)) if len(rk) else None,
        "hits10": float(np.mean(rk <= 10)) if len(rk) else None,
        "self_above": self_above / len(rk) if len(rk) else None,
        "entities": n_ent,
        "_ranks": rk,
    }


if __name__ == "__main__":
    main(sys.argv[1:])
