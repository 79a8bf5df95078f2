#!/usr/bin/env python3
"""ceilings.py: the GPU's own ceilings, measured once on the machine that
runs the GPU bundle, so that the engine's figures can be quoted as
fractions of them (DEVELOPERS: know the hardware ceiling you are measured
against). It needs PyTorch with CUDA (the lent machines have it); it is
not part of the bundle's run.sh, which needs no Python.

Prints one JSON object:
  d2d_bytes_per_s        device-to-device copy, bytes read + written
  h2d_bytes_per_s        pinned host -> device copy
  d2h_bytes_per_s        device -> pinned host copy
  sgemm_fp32_flops       8192^3 float32 matrix product, TF32 off
  sgemm_tf32_flops       the same with TF32 tensor-core math
  sgemm_batched_fp32_flops / _tf32_flops
                         a batch of 50 1000x100 by 100x1000 products (one
                         side of 50 chunks of 1,000 edges against 1,000
                         shared negatives, d=100)
  chunk_fp32_flops / _tf32_flops
                         the engine's three products of one chunk with both
                         sides stacked (2,000 query rows): T = Q.N^T
                         (2000x100 by 100x1000), G.N (2000x1000 by 1000x100)
                         and G^T.Q (1000x2000 by 2000x100), 1.2 GFLOP: the
                         chunk step's ceiling
  piece_fp32_flops / _tf32_flops
                         the same three, batched over the 9 chunks of one
                         index piece: the batch step's ceiling
Each figure is the median of timed repeats (CUDA events) after warm-up, on
random data.
"""
import json
import statistics
import sys

import torch


def timed(fn, reps=10, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        out.append(a.elapsed_time(b) / 1000.0)
    return statistics.median(out), min(out), max(out)


def main():
    if not torch.cuda.is_available():
        print(json.dumps({"error": "torch sees no CUDA GPU"}))
        return 1
    dev = torch.device("cuda")
    r = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
         "multiprocessors": torch.cuda.get_device_properties(0).multi_processor_count}
    g = torch.Generator(device=dev).manual_seed(1)

    n = 1 << 30  # 1 GiB
    src = torch.rand(n // 4, device=dev, generator=g)
    dst = torch.empty_like(src)
    t, lo, hi = timed(lambda: dst.copy_(src))
    r["d2d_bytes_per_s"] = 2 * n / t
    host = torch.empty(n // 4, dtype=torch.float32, pin_memory=True)
    host.uniform_()
    t, _, _ = timed(lambda: dst.copy_(host, non_blocking=True))
    r["h2d_bytes_per_s"] = n / t
    t, _, _ = timed(lambda: host.copy_(dst, non_blocking=True))
    r["d2h_bytes_per_s"] = n / t
    del src, dst, host

    m = 8192
    a = torch.randn(m, m, device=dev, generator=g)
    b = torch.randn(m, m, device=dev, generator=g)
    for name, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        t, _, _ = timed(lambda: torch.mm(a, b), reps=5)
        r[f"sgemm_{name}_flops"] = 2 * m**3 / t
    del a, b

    # The engine's shape: chunks of 1,000 edges against 1,000 negatives, d=100,
    # 50 chunks a batch of 50,000 edges.
    bs, rows, negs, d = 50, 1000, 1000, 100
    x = torch.randn(bs, rows, d, device=dev, generator=g)
    y = torch.randn(bs, d, negs, device=dev, generator=g)
    for name, tf32 in (("fp32", False), ("tf32", True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        t, _, _ = timed(lambda: torch.bmm(x, y), reps=20)
        r[f"sgemm_batched_{name}_flops"] = 2 * bs * rows * negs * d / t
    del x, y

    # The fused engine's products (kernels/train.cu): both sides of a chunk
    # stacked, 2n query rows against the chunk's m negatives; one chunk (the
    # chunk step) and a piece of 9 chunks (the batch step's group).
    n, m = 1000, 1000
    for label, bs in (("chunk", 1), ("piece", 9)):
        q = torch.randn(bs, 2 * n, d, device=dev, generator=g)
        negs = torch.randn(bs, m, d, device=dev, generator=g)
        t_ = torch.empty(bs, 2 * n, m, device=dev)
        gq = torch.empty(bs, 2 * n, d, device=dev)
        gn = torch.empty(bs, m, d, device=dev)

        def three():
            torch.bmm(q, negs.transpose(1, 2), out=t_)
            torch.bmm(t_, negs, out=gq)
            torch.bmm(t_.transpose(1, 2), q, out=gn)

        for name, tf32 in (("fp32", False), ("tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            t, _, _ = timed(three, reps=50)
            r[f"{label}_{name}_flops"] = 3 * 2 * bs * 2 * n * m * d / t
        del q, negs, t_, gq, gn
    torch.backends.cuda.matmul.allow_tf32 = False
    print(json.dumps(r, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
