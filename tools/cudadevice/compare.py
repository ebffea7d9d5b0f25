"""compare.py: the table of a run.sh run, autotune's tuned kernels beside
PyTorch's at the same workloads.

    python3 compare.py RESULTS_DIR

reads the tunes' JSON (tune-OP-SHAPE-DTYPE.json, the last line of each)
and torch_baseline.py's torch-baseline.json in RESULTS_DIR and prints one
row per workload tuned: the best time, its config and trials, PyTorch's
cold time (both cold: each launch alone after an L2 flush), the copy of
the workload's bytes, and the speed ratio (PyTorch's time over ours:
above 1 is faster than PyTorch).
"""
import glob
import json
import os
import sys


def main():
    d = sys.argv[1]
    torch = {}
    try:
        with open(os.path.join(d, "torch-baseline.json")) as f:
            for r in json.load(f)["rows"]:
                if "error" not in r:
                    torch[(r["op"], "x".join(map(str, r["shape"])), r["dtype"])] = r
    except (OSError, ValueError) as e:
        print(f"no PyTorch baselines: {e}")
    print(f"{'workload':40} {'ours µs':>9} {'torch µs':>9} {'copy µs':>8} {'speed':>6} {'trials':>6}  config")
    for path in sorted(glob.glob(os.path.join(d, "tune-*.json"))):
        try:
            with open(path) as f:
                res = json.loads(f.read().strip().splitlines()[-1])
        except (OSError, ValueError, IndexError):
            print(f"{os.path.basename(path):40} no result")
            continue
        key = (res["op"], "x".join(map(str, res["shape"])), res["dtype"])
        name = " ".join(key)
        best = res.get("best")
        if not best:
            print(f"{name:40} {'-':>9}   {res.get('trials', 0)} trials, none correct")
            continue
        us = best["median_ns"] / 1e3
        t = torch.get(key)
        tus = f"{t['torch_us']:9.1f}" if t else f"{'-':>9}"
        cus = f"{t['copy_us']:8.1f}" if t else f"{'-':>8}"
        speed = f"{t['torch_us'] / us:6.2f}" if t else f"{'-':>6}"
        cfg = ",".join(f"{k}={v}" for k, v in best["config"].items())
        print(f"{name:40} {us:9.1f} {tus} {cus} {speed} {res['trials']:6}  {cfg}")


if __name__ == "__main__":
    main()
