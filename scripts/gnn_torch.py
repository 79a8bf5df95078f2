#!/usr/bin/env python3
"""gnn_torch.py: a plain PyTorch implementation of realrun gnn's five
models (mlp, sage-mean, sage-pool, sage-lstm, gat), trained over the very
mini-batches `realrun gnn --save-blocks DIR` sampled, for the speed and
accuracy comparison of `make reproduce-gnn`. It needs torch and numpy only.

    gnn_torch.py --graph GRAPHDIR --blocks BLOCKDIR --model sage-mean \
        --layers 2 --hidden 256 --dropout 0.5 --lr 0.003 --threads 2 --seed 1

GRAPHDIR is a graph directory (nodes.txt, features.npy, labels.tsv,
edges.tsv, train.txt, valid.txt, test.txt); node i is line i of nodes.txt,
which is also the id the block files use. BLOCKDIR holds
epoch-0001.blocks … (little-endian: "TFGNNBLK", uint32 version 1, uint32
batches; per batch uint32 blocks; per block uint32 numSrc, numDst,
numEdges, int32 Src[numSrc], Ptr[numDst+1], Nbr[numEdges]).

The models (the definitions realrun's engine implements):
  Linear      y = x W^T + b, Glorot-uniform W (SAGE's and GAT's with the
              ReLU gain sqrt(2), as DGL and realrun), zero b
  sage-mean   h_i = fc_self(x_i) + fc_neigh(mean_j x_j)      (0 if no j)
  sage-pool   h_i = fc_self(x_i) + fc_neigh(max_j ReLU(fc_pool(x_j)))
  sage-lstm   h_i = fc_self(x_i) + fc_neigh(LSTM(x_j in Nbr order) last h)
  gat         z = fc(x); e_ij = LeakyReLU_0.2(<z_j,a_l> + <z_i,a_r>) over
              j in N(i) and i itself; out_i = sum_j softmax_j(e_ij) z_j + b;
              heads concatenated (hidden layers) or averaged (last layer)
  stack       ReLU (ELU for gat) then inverted dropout between layers;
              mean softmax cross-entropy; Adam with PyTorch's defaults.

OpenMP threads wait passively (OMP_WAIT_POLICY=PASSIVE unless set; why: at
the import of torch).

Timing: the block files are read and turned into index tensors before the
clock starts; an epoch's time is its batches' feature gather, forward,
loss, backward and Adam step, under torch.set_num_threads(--threads).
After the last epoch, valid and test accuracy come from layer-wise
inference over every node with every neighbour (no dropout).

Prints one JSON object (see main).
"""
import argparse
import glob
import json
import math
import os
import sys
import time
import warnings

# OpenMP threads that spin while waiting at a barrier lose their time
# slice to anything else on the machine: on a shared 2-core machine that
# made an epoch ten times slower (0.40 s against 0.04 s on a Cora-shaped
# sage-mean batch). Passive waiting is set before torch loads libgomp,
# unless the caller chose a policy.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402
from torch.nn.utils.rnn import PackedSequence  # noqa: E402

# scatter_reduce (max aggregation) is "beta" in torch 1.13 and says so on every call.
warnings.filterwarnings("ignore", message="scatter_reduce")

MAGIC = b"TFGNNBLK"
MODELS = ("mlp", "sage-mean", "sage-pool", "sage-lstm", "gat")


# ---------------------------------------------------------------- input

def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [ln.rstrip("\r\n") for ln in f if ln.strip() and not ln.startswith("#")]


class Graph:
    """A graph directory in memory: features X (N x F float32), labels y
    (class id, -1 unlabelled), the splits, and the CSR of in-neighbours
    (ascending, deduplicated, no self loops; both directions unless
    directed)."""

    def __init__(self, d, directed=False):
        self.names = read_lines(os.path.join(d, "nodes.txt"))
        ids = {n: i for i, n in enumerate(self.names)}
        if len(ids) != len(self.names):
            raise ValueError(f"{d}/nodes.txt: duplicate node names")
        n = len(self.names)
        x = np.load(os.path.join(d, "features.npy"))
        if x.ndim != 2 or x.shape[0] != n:
            raise ValueError(f"{d}/features.npy: shape {x.shape}, want ({n}, F)")
        self.x = np.ascontiguousarray(x, dtype=np.float32)
        self.y = np.full(n, -1, dtype=np.int64)
        labels = {}
        for ln in read_lines(os.path.join(d, "labels.tsv")):
            name, _, lab = ln.partition("\t")
            if name not in ids:
                raise ValueError(f"{d}/labels.tsv: unknown node {name!r}")
            labels[ids[name]] = lab
        classes = {c: k for k, c in enumerate(sorted(set(labels.values())))}  # class ids: the names sorted
        for v, lab in labels.items():
            self.y[v] = classes[lab]
        self.classes = len(classes)
        self.split = {}
        for s in ("train", "valid", "test"):
            try:
                self.split[s] = np.array([ids[v] for v in read_lines(os.path.join(d, s + ".txt"))], dtype=np.int64)
            except KeyError as e:
                raise ValueError(f"{d}/{s}.txt: unknown node {e}") from None
            if (self.y[self.split[s]] < 0).any():
                raise ValueError(f"{d}/{s}.txt: unlabelled node")
        src, dst = [], []
        for ln in read_lines(os.path.join(d, "edges.tsv")):
            f = ln.split("\t")
            if len(f) < 2:
                raise ValueError(f"{d}/edges.tsv: line {ln!r}: want src<TAB>dst")
            src.append(ids[f[0]])
            dst.append(ids[f[-1]])
        src = np.array(src, dtype=np.int64)
        dst = np.array(dst, dtype=np.int64)
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        keep = src != dst
        key = np.unique(dst[keep] * n + src[keep])  # sorted by dst, then src
        self.nbr = key % n
        self.ptr = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(key // n, minlength=n), out=self.ptr[1:])
        self.key = key
        self.n = n

    def has_edges(self, dst, src):
        """Whether every (dst reads src) pair is an edge of the graph."""
        k = dst.astype(np.int64) * self.n + src
        pos = np.searchsorted(self.key, k)
        pos = np.minimum(pos, len(self.key) - 1)
        return bool((self.key[pos] == k).all()) if len(k) else True


def read_blocks(path):
    """One epoch's batches: a list of batches, each a list of blocks
    (src, num_dst, ptr, nbr) as int64 numpy arrays."""
    with open(path, "rb") as f:
        buf = f.read()
    if buf[:8] != MAGIC:
        raise ValueError(f"{path}: not a block file (magic {buf[:8]!r})")
    ver, nb = np.frombuffer(buf, dtype="<u4", count=2, offset=8)
    if ver != 1:
        raise ValueError(f"{path}: block file version {ver}, want 1")
    off = 16
    batches = []

    def u32(k):
        nonlocal off
        if off + 4 * k > len(buf):
            raise ValueError(f"{path}: truncated at byte {off}")
        a = np.frombuffer(buf, dtype="<u4", count=k, offset=off)
        off += 4 * k
        return a

    def i32(k):
        nonlocal off
        if off + 4 * k > len(buf):
            raise ValueError(f"{path}: truncated at byte {off}")
        a = np.frombuffer(buf, dtype="<i4", count=k, offset=off).astype(np.int64)
        off += 4 * k
        return a

    for b in range(int(nb)):
        (nblk,) = u32(1)
        blocks = []
        for l in range(int(nblk)):
            ns, nd, ne = (int(v) for v in u32(3))
            src, ptr, nbr = i32(ns), i32(nd + 1), i32(ne)
            where = f"{path}: batch {b + 1} block {l + 1}"
            if nd > ns or ptr[0] != 0 or ptr[-1] != ne or (np.diff(ptr) < 0).any():
                raise ValueError(f"{where}: bad Ptr or NumDst")
            if ne and (nbr.min() < 0 or nbr.max() >= ns):
                raise ValueError(f"{where}: Nbr out of range")
            blocks.append((src, nd, ptr, nbr))
        for l in range(len(blocks) - 1):
            if not np.array_equal(blocks[l][0][: blocks[l][1]], blocks[l + 1][0]):
                raise ValueError(f"{path}: batch {b + 1}: block {l + 1}'s destinations are not block {l + 2}'s sources")
        batches.append(blocks)
    if off != len(buf):
        raise ValueError(f"{path}: {len(buf) - off} bytes after the last batch")
    return batches


def check_blocks(g, batches, path):
    """The block files name nodes by the row of nodes.txt: check that every
    sampled edge is an edge of the graph and every output node a training
    node, so a different numbering cannot pass unnoticed."""
    train = np.zeros(g.n, dtype=bool)
    train[g.split["train"]] = True
    for b, blocks in enumerate(batches):
        for src, nd, ptr, nbr in blocks:
            if len(src) and (src.min() < 0 or src.max() >= g.n):
                raise ValueError(f"{path}: batch {b + 1}: node id out of range (graph has {g.n} nodes)")
            dst = np.repeat(src[:nd], np.diff(ptr))
            if not g.has_edges(dst, src[nbr]):
                raise ValueError(f"{path}: batch {b + 1}: a sampled edge is not in the graph (do the block ids follow nodes.txt?)")
        src, nd = blocks[-1][0], blocks[-1][1]
        if not train[src[:nd]].all():
            raise ValueError(f"{path}: batch {b + 1}: an output node is not a training node")


# ---------------------------------------------------------- structures

class Adj:
    """One layer's edges as index tensors. Source rows are the rows of the
    tensor the layer reads; destination i is source row dst_rows[i] (the
    first nd rows when dst_rows is None, as in a block). Built once, before
    the clock, for what the model needs."""

    def __init__(self, nd, ptr, nbr, dst_rows, model):
        self.nd = nd
        deg = np.diff(ptr)
        self.dst_rows = None if dst_rows is None else torch.from_numpy(np.ascontiguousarray(dst_rows))
        self.esrc = torch.from_numpy(np.ascontiguousarray(nbr))
        self.edst = torch.from_numpy(np.repeat(np.arange(nd), deg))
        self.deg = torch.from_numpy(deg)
        if model in ("sage-mean",):
            self.inv = (1.0 / np.maximum(deg, 1)).astype(np.float32)
            self.inv = torch.from_numpy(self.inv).unsqueeze(1)
        if model == "gat":
            own = np.arange(nd) if dst_rows is None else dst_rows
            self.gsrc = torch.from_numpy(np.concatenate([nbr, own]))
            self.gdst = torch.from_numpy(np.concatenate([np.repeat(np.arange(nd), deg), np.arange(nd)]))
        if model == "sage-lstm":
            self.packed_index(ptr, nbr, deg)

    def packed_index(self, ptr, nbr, deg):
        """The neighbour sequences as a PackedSequence layout: nodes with
        neighbours sorted by length (longest first); step t holds the t-th
        neighbour of the first batch_sizes[t] of them."""
        order = np.argsort(-deg, kind="stable")
        order = order[deg[order] > 0]
        ds = deg[order]
        maxd = int(ds[0]) if len(ds) else 0
        cnt = np.bincount(ds, minlength=maxd + 1)
        bs = np.cumsum(cnt[::-1])[::-1][1:]  # bs[t] = #{d > t}, t = 0 … maxd-1
        t = np.repeat(np.arange(maxd), bs)
        first = np.concatenate([[0], np.cumsum(bs)[:-1]]) if maxd else np.zeros(0, dtype=np.int64)
        i = np.arange(len(t)) - np.repeat(first, bs)
        self.seq = torch.from_numpy(nbr[ptr[order[i]] + t]) if maxd else torch.zeros(0, dtype=torch.long)
        self.batch_sizes = torch.from_numpy(bs.astype(np.int64))
        self.seq_nodes = torch.from_numpy(order)


def rows(h, adj):
    return h[: adj.nd] if adj.dst_rows is None else h.index_select(0, adj.dst_rows)


# ---------------------------------------------------------------- layers

RELU_GAIN = math.sqrt(2.0)


def glorot_(w, gain=1.0, fans=None):
    """Glorot uniform, ±gain·sqrt(6/(fan_in+fan_out)); fans default to
    PyTorch's for an out x in matrix."""
    fan_out, fan_in = fans or (w.shape[0], w.shape[1])
    b = gain * math.sqrt(6.0 / (fan_in + fan_out))
    with torch.no_grad():
        w.uniform_(-b, b)
    return w


class Linear(nn.Module):
    """y = x W^T + b: W out x in, Glorot uniform (times gain); b zero.
    The initialisations are realrun's, which are DGL's: plain Glorot for
    the MLP's layers, the ReLU gain sqrt(2) for SAGEConv's and GATConv's
    (GATConv's xavier_normal_ variance, uniform), PyTorch's default for the
    LSTM."""

    def __init__(self, i, o, bias=True, gain=1.0):
        super().__init__()
        self.weight = nn.Parameter(glorot_(torch.empty(o, i), gain))
        self.bias = nn.Parameter(torch.zeros(o)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)


class MLPLayer(nn.Module):
    def __init__(self, i, o):
        super().__init__()
        self.fc = Linear(i, o)

    def pre(self, h):
        return h

    def post(self, p, h, adj):
        return self.fc(rows(h, adj))


def mean_agg(v, adj):
    out = torch.zeros(adj.nd, v.shape[1], dtype=v.dtype).index_add_(0, adj.edst, v.index_select(0, adj.esrc))
    return out * adj.inv


class SAGEMean(nn.Module):
    """fc_self(x_i) + fc_neigh(mean_j x_j). fc_neigh is linear, so when it
    narrows (in > out) it is applied to every source row before the mean,
    which is the same function with fewer operations."""

    def __init__(self, i, o):
        super().__init__()
        self.fc_self, self.fc_neigh = Linear(i, o, gain=RELU_GAIN), Linear(i, o, bias=False, gain=RELU_GAIN)
        self.project_first = i > o

    def pre(self, h):
        return self.fc_neigh(h) if self.project_first else h

    def post(self, p, h, adj):
        a = mean_agg(p, adj)
        if not self.project_first:
            a = self.fc_neigh(a)
        return self.fc_self(rows(h, adj)) + a


class SAGEPool(nn.Module):
    """fc_self(x_i) + fc_neigh(max_j ReLU(fc_pool(x_j))), 0 with no j."""

    def __init__(self, i, o):
        super().__init__()
        self.fc_pool = Linear(i, i, gain=RELU_GAIN)
        self.fc_self, self.fc_neigh = Linear(i, o, gain=RELU_GAIN), Linear(i, o, bias=False, gain=RELU_GAIN)

    def pre(self, h):
        return F.relu(self.fc_pool(h))

    def post(self, p, h, adj):
        v = p.index_select(0, adj.esrc)
        idx = adj.edst.unsqueeze(1).expand(-1, p.shape[1])
        # Every pooled value is ≥ 0, so a zero start is the max itself and
        # the 0 of a destination without neighbours.
        a = torch.zeros(adj.nd, p.shape[1], dtype=p.dtype).scatter_reduce(0, idx, v, "amax", include_self=True)
        return self.fc_self(rows(h, adj)) + self.fc_neigh(a)


class SAGELSTM(nn.Module):
    """fc_self(x_i) + fc_neigh(h_last of an LSTM over x_j in Nbr order),
    h0 = c0 = 0, 0 with no j; the LSTM runs on a PackedSequence (every
    node's own length, no padding)."""

    def __init__(self, i, o):
        super().__init__()
        self.lstm = nn.LSTM(i, i, batch_first=False)  # PyTorch's init: uniform ±1/sqrt(i)
        self.fc_self, self.fc_neigh = Linear(i, o, gain=RELU_GAIN), Linear(i, o, bias=False, gain=RELU_GAIN)

    def pre(self, h):
        return h

    def post(self, p, h, adj):
        a = torch.zeros(adj.nd, p.shape[1], dtype=p.dtype)
        if len(adj.seq):
            _, (hn, _) = self.lstm(PackedSequence(p.index_select(0, adj.seq), adj.batch_sizes))
            a = a.index_put((adj.seq_nodes,), hn[0])
        return self.fc_self(rows(h, adj)) + self.fc_neigh(a)


class GAT(nn.Module):
    """GATConv: heads x out attention over N(i) and i itself; concat or
    mean of the heads."""

    def __init__(self, i, o, heads, concat):
        super().__init__()
        self.h, self.o, self.concat = heads, o, concat
        self.fc = Linear(i, heads * o, bias=False, gain=RELU_GAIN)
        # DGL's attn_l is 1 x heads x o: PyTorch's fans heads*o and o.
        self.attn_l = nn.Parameter(glorot_(torch.empty(heads, o), RELU_GAIN, (o, heads * o)))
        self.attn_r = nn.Parameter(glorot_(torch.empty(heads, o), RELU_GAIN, (o, heads * o)))
        self.bias = nn.Parameter(torch.zeros(heads, o))

    def pre(self, h):
        z = self.fc(h).view(-1, self.h, self.o)
        return z, (z * self.attn_l).sum(-1)

    def post(self, p, h, adj):
        z, el = p
        er = (rows(z, adj) * self.attn_r).sum(-1)  # nd x H
        e = F.leaky_relu(el.index_select(0, adj.gsrc) + er.index_select(0, adj.gdst), 0.2)  # E x H
        idx = adj.gdst.unsqueeze(1).expand(-1, self.h)
        m = torch.full((adj.nd, self.h), -math.inf).scatter_reduce(0, idx, e.detach(), "amax", include_self=True)
        ex = torch.exp(e - m.index_select(0, adj.gdst))
        s = torch.zeros(adj.nd, self.h).index_add_(0, adj.gdst, ex)
        a = ex / s.index_select(0, adj.gdst)
        out = torch.zeros(adj.nd, self.h, self.o).index_add_(0, adj.gdst, a.unsqueeze(2) * z.index_select(0, adj.gsrc))
        out = out + self.bias
        return out.reshape(adj.nd, self.h * self.o) if self.concat else out.mean(1)


class Model(nn.Module):
    def __init__(self, kind, layers, fin, hidden, classes, heads, dropout):
        super().__init__()
        self.kind, self.dropout = kind, dropout
        dims = [fin] + [hidden] * (layers - 1) + [classes]
        ls = []
        for l in range(layers):
            i, o = dims[l], dims[l + 1]
            last = l == layers - 1
            if kind == "mlp":
                ls.append(MLPLayer(i, o))
            elif kind == "sage-mean":
                ls.append(SAGEMean(i, o))
            elif kind == "sage-pool":
                ls.append(SAGEPool(i, o))
            elif kind == "sage-lstm":
                ls.append(SAGELSTM(i, o))
            elif kind == "gat":
                if last:
                    ls.append(GAT(i, o, heads, concat=False))
                else:
                    if o % heads:
                        raise ValueError(f"hidden {o} is not divisible by heads {heads}")
                    ls.append(GAT(i, o // heads, heads, concat=True))
            else:
                raise ValueError(f"unknown model {kind!r}")
        self.layers = nn.ModuleList(ls)

    def between(self, h):
        h = F.elu(h) if self.kind == "gat" else F.relu(h)
        return F.dropout(h, self.dropout, self.training) if self.dropout > 0 else h

    def forward(self, x, adjs):
        h = x
        for l, (layer, adj) in enumerate(zip(self.layers, adjs)):
            h = layer.post(layer.pre(h), h, adj)
            if l < len(self.layers) - 1:
                h = self.between(h)
        return h

    @torch.no_grad()
    def infer(self, x, chunks):
        """Layer-wise inference over every node with every neighbour:
        chunks are Adjs over the whole graph's rows, covering the nodes in
        order."""
        self.eval()
        h = x
        for l, layer in enumerate(self.layers):
            p = layer.pre(h)
            h = torch.cat([layer.post(p, h, adj) for adj in chunks])
            if l < len(self.layers) - 1:
                h = self.between(h)
        return h


def full_chunks(g, model, max_edges=1 << 20):
    """The whole graph's destinations in consecutive chunks of about
    max_edges edges each."""
    out, start = [], 0
    while start < g.n:
        end = int(np.searchsorted(g.ptr, g.ptr[start] + max_edges, side="right")) - 1
        end = min(max(end, start + 1), g.n)
        ptr = g.ptr[start:end + 1] - g.ptr[start]
        out.append(Adj(end - start, ptr, g.nbr[g.ptr[start]:g.ptr[end]], np.arange(start, end), model))
        start = end
    return out


def block_adjs(batches, model):
    """The batches as (input rows, output rows, per-layer Adjs)."""
    out = []
    for blocks in batches:
        adjs = [Adj(nd, ptr, nbr, None, model) for (_, nd, ptr, nbr) in blocks]
        src0 = torch.from_numpy(blocks[0][0])
        last = blocks[-1]
        out.append((src0, torch.from_numpy(last[0][: last[1]]), adjs))
    return out


def gemm_flops(batches, model, dims, heads):
    """The matrix products an epoch's batches need by the models'
    definitions, forward and backward, counted the same way for every
    implementation at the least work the definitions allow: 2mnk for the
    forward and for the weight gradient, and for the input gradient except
    where the input is the raw features (the first layer's products of x
    and of the mean of x). sage's fc_neigh runs on the aggregated rows;
    the LSTM's input product once per source row and its hidden product
    once per sequence step (torch.nn.LSTM computes the input product per
    step, more than counted here); GAT's fc on every source row.
    Element-wise work is not counted."""
    f = 0
    for blocks in batches:
        for l, (src, nd, ptr, nbr) in enumerate(blocks):
            i, o = dims[l], dims[l + 1]
            ns, ne = len(src), len(nbr)
            raw = 2 if l == 0 else 3  # passes of a product whose input is x
            if model == "mlp":
                f += raw * nd * i * o
            elif model == "gat":
                f += raw * ns * i * (o * heads if l == len(blocks) - 1 else o)
            elif model == "sage-mean":
                f += 2 * raw * nd * i * o
            elif model == "sage-pool":
                f += raw * ns * i * i + raw * nd * i * o + 3 * nd * i * o
            elif model == "sage-lstm":
                f += raw * ns * i * 4 * i + 3 * ne * i * 4 * i + raw * nd * i * o + 3 * nd * i * o
    return 2 * f


def blas_library():
    """The BLAS library the process loaded (from /proc/self/maps)."""
    try:
        with open("/proc/self/maps") as f:
            libs = {ln.split()[-1] for ln in f if "blas" in ln.lower() or "mkl" in ln.lower()}
        libs = sorted(os.path.realpath(l) for l in libs if l.startswith("/"))
        return ", ".join(sorted(set(libs))) or "unknown"
    except OSError:
        return "unknown"


def accuracy(logits, y, nodes):
    return float((logits[nodes].argmax(1) == y[nodes]).float().mean()) if len(nodes) else float("nan")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--graph", required=True, help="graph directory")
    ap.add_argument("--blocks", required=True, help="directory of epoch-NNNN.blocks files")
    ap.add_argument("--directed", action="store_true", help="messages along the edges' direction only")
    ap.add_argument("--model", required=True, choices=MODELS)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--lr", type=float, default=0.003)
    ap.add_argument("--epochs", type=int, default=0, help="epochs to train (default: every block file)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--no-check", action="store_true", help="skip checking the blocks against the graph")
    ap.add_argument("--no-eval", action="store_true", help="skip the final evaluation")
    a = ap.parse_args(argv)
    if not 1 <= a.layers <= 5:
        ap.error("--layers: want 1 to 5")

    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    t0 = time.perf_counter()
    g = Graph(a.graph, a.directed)
    files = sorted(glob.glob(os.path.join(a.blocks, "epoch-*.blocks")))
    want = a.epochs or len(files)
    files = [os.path.join(a.blocks, f"epoch-{e:04d}.blocks") for e in range(1, want + 1)]
    missing = [f for f in files if not os.path.exists(f)]
    if not files or missing:
        ap.error(f"--blocks: missing {missing[0] if missing else os.path.join(a.blocks, 'epoch-0001.blocks')}")
    epochs, flops = [], []
    for e, path in enumerate(files):
        bs = read_blocks(path)
        for blocks in bs:
            if len(blocks) != a.layers:
                raise ValueError(f"{path}: a batch of {len(blocks)} blocks, want --layers {a.layers}")
        if not a.no_check:
            check_blocks(g, bs, path)
        epochs.append(block_adjs(bs, a.model))
        flops.append(gemm_flops(bs, a.model, [g.x.shape[1]] + [a.hidden] * (a.layers - 1) + [g.classes], a.heads))
    x = torch.from_numpy(g.x)
    y = torch.from_numpy(g.y)
    load_s = time.perf_counter() - t0

    model = Model(a.model, a.layers, g.x.shape[1], a.hidden, g.classes, a.heads, a.dropout)
    opt = torch.optim.Adam(model.parameters(), lr=a.lr)
    out = []
    for e, batches in enumerate(epochs):
        model.train()
        loss_sum, right, count = 0.0, 0, 0
        start = time.perf_counter()
        for src0, outn, adjs in batches:
            logits = model(x.index_select(0, src0), adjs)
            target = y.index_select(0, outn)
            loss = F.cross_entropy(logits, target)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            n = len(outn)
            loss_sum += float(loss) * n
            right += int((logits.detach().argmax(1) == target).sum())
            count += n
        sec = time.perf_counter() - start
        out.append({"epoch": e + 1, "loss": loss_sum / max(count, 1), "train_acc": right / max(count, 1),
                    "batches": len(batches), "seconds": sec, "gemm_flops": flops[e]})
    res = {
        "model": a.model, "layers": a.layers, "hidden": a.hidden, "heads": a.heads, "dropout": a.dropout,
        "lr": a.lr, "seed": a.seed, "threads": a.threads, "torch": torch.__version__, "blas": blas_library(),
        "omp_wait_policy": os.environ.get("OMP_WAIT_POLICY", ""),
        "graph": {"nodes": g.n, "edges": int(len(g.nbr)), "features": int(g.x.shape[1]), "classes": g.classes},
        "params": sum(p.numel() for p in model.parameters()),
        "load_s": load_s, "epochs": out, "train_s": sum(o["seconds"] for o in out),
    }
    if not a.no_eval:
        start = time.perf_counter()
        logits = model.infer(x, full_chunks(g, a.model))
        res["eval_s"] = time.perf_counter() - start
        res["valid_acc"] = accuracy(logits, y, torch.from_numpy(g.split["valid"]))
        res["test_acc"] = accuracy(logits, y, torch.from_numpy(g.split["test"]))
    json.dump(res, sys.stdout)
    print()


if __name__ == "__main__":
    try:
        main()
    except (ValueError, OSError) as e:
        print(f"gnn_torch.py: {e}", file=sys.stderr)
        sys.exit(1)
