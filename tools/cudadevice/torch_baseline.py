"""torch_baseline.py: PyTorch's own kernels at given workloads, timed with
CUDA events, for the comparison tables of docs/benchmarks.md.

    python3 torch_baseline.py --json OUT.json softmax:4096x1024:f32 gemm:4096x4096x4096:bf16 ...

A workload is OP:SHAPE:DTYPE with autotune's op names and shapes
(softmax RxC, gemm MxNxK, attention and attention_causal BxHxSxD,
rmsnorm and layernorm RxC). Each is timed as the median of interleaved
rounds (warm-up first; inputs random, never zeros), next to a
device-to-device copy of the workload's bytes (read + written), so that a
row reads as a fraction of the copy floor whatever the GPU; both cold
(each call alone after an L2 flush, as autotune's tuner and bench time)
and warm (back to back, as a generated package's BenchmarkGPU times).
"""
import argparse
import json
import statistics
import sys

import torch
import torch.nn.functional as F

DT = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}


def make(op, shape, dt):
    """Returns (fn, bytes, flops) for the workload."""
    g = torch.Generator(device="cuda").manual_seed(1)
    rnd = lambda *s: (torch.rand(*s, device="cuda", generator=g) * 2 - 1).to(dt)
    if op == "softmax":
        r, c = shape
        x = rnd(r, c) * 8
        return (lambda: torch.softmax(x, dim=-1)), 2 * r * c * x.element_size(), 0
    if op == "gemm":
        m, n, k = shape
        a, b = rnd(m, k), rnd(k, n)
        return (lambda: torch.mm(a, b)), (m * k + k * n + m * n) * a.element_size(), 2 * m * n * k
    if op in ("attention", "attention_causal"):
        b, h, s, d = shape
        q, k, v = rnd(b, h, s, d), rnd(b, h, s, d), rnd(b, h, s, d)
        causal = op == "attention_causal"
        flops = 4 * b * h * s * s * d * (0.5 if causal else 1)
        return flash(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal)), 4 * q.numel() * q.element_size(), flops
    if op in ("rmsnorm", "layernorm"):
        r, c = shape
        x, w, bias = rnd(r, c), rnd(c), rnd(c)
        if op == "rmsnorm":
            fn = lambda: F.rms_norm(x, (c,), w, eps=1e-6)
        else:
            fn = lambda: F.layer_norm(x, (c,), w, bias, eps=1e-5)
        return fn, 2 * r * c * x.element_size(), 0
    raise SystemExit(f"torch_baseline: unknown op {op}")


def flash(fn):
    """fn run under SDPA's flash backend, which the issue's attention target
    names (left to itself PyTorch may pick cuDNN's or another), or fn as it
    is where this PyTorch cannot pin the backend."""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return fn

    def pinned():
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            return fn()

    return pinned


def warm(fn, n):
    """µs per call of n calls back to back: the queue stays full and the
    data of one call is in L2 for the next, as in a model's hot loop."""
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(n):
        fn()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / n * 1e3


FLUSH = None


def cold(fn, n):
    """µs per call of n calls each timed alone after a write of twice the
    L2 cache, as autotune's CUDA worker and bench --device time kernels."""
    global FLUSH
    if FLUSH is None:
        l2 = torch.cuda.get_device_properties(0).L2_cache_size
        FLUSH = torch.empty(2 * l2 // 4, dtype=torch.float32, device="cuda")
    evs = []
    for _ in range(n):
        FLUSH.zero_()
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        evs.append((a, b))
    evs[-1][1].synchronize()
    return sum(a.elapsed_time(b) for a, b in evs) / n * 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", required=True)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("workloads", nargs="+")
    args = ap.parse_args()
    rows = []
    for w in args.workloads:
        op, shape, dt = w.split(":")
        shape = [int(x) for x in shape.split("x")]
        try:
            fn, nbytes, flops = make(op, shape, DT[dt])
            src = torch.empty(nbytes // 2, dtype=torch.uint8, device="cuda").random_()
            dst = torch.empty_like(src)
            copy = lambda: dst.copy_(src)
            for f in (fn, copy):
                f()
            torch.cuda.synchronize()
            # calls per timed round: about 2 ms of work
            n = max(1, min(200, int(2000 / max(warm(fn, 3), 1e-3))))
            t = {"cold": [], "warm": [], "copy_cold": [], "copy_warm": []}
            for _ in range(args.rounds):
                t["cold"].append(cold(fn, min(n, 20)))
                t["copy_cold"].append(cold(copy, min(n, 20)))
                t["warm"].append(warm(fn, n))
                t["copy_warm"].append(warm(copy, n))
            m = {k: statistics.median(v) for k, v in t.items()}
            us = m["cold"]
            row = {"op": op, "shape": shape, "dtype": dt, "torch_us": us, "copy_us": m["copy_cold"],
                   "torch_warm_us": m["warm"], "copy_warm_us": m["copy_warm"],
                   "torch_over_copy": us / m["copy_cold"], "gbps": nbytes / us / 1e3,
                   "tflops": flops / us / 1e6 if flops else None}
        except Exception as e:  # one workload failing must not stop the others
            row = {"op": op, "shape": shape, "dtype": dt, "error": str(e)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    with open(args.json, "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__, "rows": rows}, f, indent=1)
    print("cold: each call alone after an L2 flush (as autotune times); warm: back to back")
    print(f"{'workload':40} {'torch µs':>10} {'copy µs':>9} {'×copy':>6} {'TFLOP/s':>8} {'warm µs':>9} {'copy warm':>9}")
    for r in rows:
        name = f"{r['op']} {'x'.join(map(str, r['shape']))} {r['dtype']}"
        if "error" in r:
            print(f"{name:40} error: {r['error'][:60]}")
        else:
            tf = f"{r['tflops']:.1f}" if r["tflops"] else "-"
            print(f"{name:40} {r['torch_us']:10.1f} {r['copy_us']:9.1f} {r['torch_over_copy']:6.2f} {tf:>8} {r['torch_warm_us']:9.1f} {r['copy_warm_us']:9.1f}")
    return 1 if any("error" in r for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
