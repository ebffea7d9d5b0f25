#!/usr/bin/env bash
# run.sh, on a GPU machine (NVIDIA driver, CUDA toolkit, PyTorch; no Go
# needed): runs what prepare.sh built beside it, in order of what matters
# most, each step with its own time limit and all of them within
# RUN_SECONDS (default 450), and leaves under $OUT:
#
#   summary.txt   one line per step: ok, failed (exit status) or skipped
#                 (no time left), and its seconds
#   results.tgz   every step's output (refreshed after each step, so a run
#                 stopped at its limit still returns what it did)
#
# Steps: the GPU and its software; the generated example package's tests
# and benchmarks on the GPU (examples/fastcuda: every op at tuned and odd
# shapes against the float64 reference); autotune's own GPU tests;
# PyTorch's kernels at the workloads (torch_baseline.py); short tunes of
# the half-precision workloads into gpu.db; bench --device of each against
# the copy floor and cuBLAS; the table of the tunes beside PyTorch
# (compare.py, also appended to summary.txt); a PyTorch extension generated from gpu.db
# (gen --torch), built, checked and timed against torch (its bench.py); a
# Go package generated from gpu.db with NVRTC; gpu.db exported as JSON
# Lines.
#
# What runs is set by the environment: FASTCUDA=0 skips examples/fastcuda;
# GPU_TESTS (a -test.run pattern) and GPU_TEST_SECONDS; IMPORT (logs to import into gpu.db first); TUNES
# ("op shape dtype seconds" lines), BENCHES ("op shape dtype" lines),
# TORCH_WORKLOADS (torch_baseline.py's arguments); TORCH_EXT_DIR (an
# extension generated elsewhere, built in the background from the start)
# or TORCH_EXT=1 (generate one from gpu.db at the end). Unset, TUNES and
# TORCH_WORKLOADS are issue 24's GPU workloads still to measure (bf16
# attention, causal and not, against SDPA's flash backend, with the
# tensor-core changes of 2026-11-28 that have not run on a GPU; softmax
# 16384x16384 in bf16 and f16, which the input sets' preparation kept from
# tuning before; GEMM 4096³ in f16 and bf16 and 8192³ in bf16 against torch.mm, with the
# 64-deep slices, four stages, 64x64 warp tiles and grouped launch order of
# gemm-cuda-4, which no GPU has run yet), BENCHES is
# empty (the tunes are compared with PyTorch; bench --device reruns the
# references); set to empty, they run nothing.
set -uo pipefail
issue24_tunes='attention 1x32x4096x64 bf16 28
attention_causal 1x32x4096x64 bf16 28
attention 1x16x4096x128 bf16 28
attention_causal 1x16x4096x128 bf16 28
softmax 16384x16384 bf16 45
softmax 16384x16384 f16 35
gemm 4096x4096x4096 f16 25
gemm 4096x4096x4096 bf16 30
gemm 8192x8192x8192 bf16 30'
TUNES=${TUNES-$issue24_tunes}
BENCHES=${BENCHES-}
TORCH_WORKLOADS=${TORCH_WORKLOADS-$(awk '{printf "%s:%s:%s ", $1, $2, $3}' <<<"$issue24_tunes")}
: "${OUT:?set OUT to the directory for the results}"
here=$(cd "$(dirname "$0")" && pwd)
res=$(mktemp -d)
mkdir -p "$OUT"
deadline=$((SECONDS + ${RUN_SECONDS:-450}))
status=0
pack() { tar -C "$res" -czf "$OUT/results.tgz" . 2>/dev/null; }
# step NAME LIMIT FILE COMMAND...: runs COMMAND for at most LIMIT seconds
# (less if the run's deadline comes first), output to FILE under results.
step() {
	local name=$1 limit=$2 file=$3 t0=$SECONDS rc
	shift 3
	local left=$((deadline - SECONDS))
	if ((left < 15)); then
		echo "skipped  $name (no time left)" | tee -a "$OUT/summary.txt"
		return
	fi
	timeout -k 5 $((limit < left ? limit : left)) "$@" >"$res/$file" 2>&1
	rc=$?
	if ((rc == 0)); then
		echo "ok       $name ($((SECONDS - t0)) s)" | tee -a "$OUT/summary.txt"
	else
		echo "failed   $name: exit $rc ($((SECONDS - t0)) s), see $file" | tee -a "$OUT/summary.txt"
		status=1
	fi
	pack
}
at="$here/autotune"
db="$res/gpu.db"
{ nvidia-smi; nvcc --version; python3 -c 'import torch; print("torch", torch.__version__, torch.cuda.get_device_name())'; } >"$res/device.txt" 2>&1
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
arch=sm_${arch:-90}
echo "device $arch" >"$OUT/summary.txt"

# IMPORT: JSON Lines logs whose records go into gpu.db first (so that bench
# finds their winners).
[[ -n ${IMPORT:-} ]] && step "import $IMPORT" 30 import.txt "$at" db import --db "$db" $IMPORT
# TORCH_EXT_DIR: an extension written by gen --torch elsewhere; it builds in
# the background (nvcc on the host's cores) while the GPU steps run, and is
# checked and timed after the tunes and benches.
if [[ -n ${TORCH_EXT_DIR:-} ]]; then
	cp -r "$TORCH_EXT_DIR" "$res/ext"
	(cd "$res/ext" && MAX_JOBS=${TORCH_BUILD_JOBS:-8} python3 load.py >"$res/torch-build.txt" 2>&1; echo "exit $?" >>"$res/torch-build.txt") &
	build=$!
fi

if [[ ${FASTCUDA:-1} != 0 ]]; then
	step "examples/fastcuda tests on the GPU" 60 fastcuda-test.txt "$here/fastcuda.test" -test.v -test.run 'TestGPU|TestManifest|TestDispatch'
	step "examples/fastcuda benchmarks" 60 fastcuda-bench.txt "$here/fastcuda.test" -test.run '^$' -test.bench GPU -test.benchtime 300x -test.count 3
fi
gpu_secs=${GPU_TEST_SECONDS:-150}
step "autotune's GPU tests" "$gpu_secs" measure-cuda.txt "$here/measure-cuda.test" -test.v -test.timeout "${gpu_secs}s" -test.run "${GPU_TESTS:-TestGPU}"


# PyTorch's kernels before the tunes: seconds, and what every tune is
# compared with.
step "torch baselines" 90 torch-baseline.txt python3 "$here/torch_baseline.py" --json "$res/torch-baseline.json" ${TORCH_WORKLOADS:-}

# Short tunes: TUNES holds "op shape dtype seconds" per line.
while read -r op shape dt secs; do
	[[ -z $op ]] && continue
	step "tune $op $shape $dt" $((secs + 40)) "tune-$op-$shape-$dt.json" \
		"$at" tune --op "$op" --shape "$shape" --dtype "$dt" --device "$arch" --time "${secs}s" --trials 200 --db "$db" --json
done <<<"${TUNES:-}"

# bench --device: BENCHES holds "op shape dtype" per line.
while read -r op shape dt; do
	[[ -z $op ]] && continue
	step "bench $op $shape $dt" 60 "bench-$op-$shape-$dt.json" \
		"$at" bench --op "$op" --shape "$shape" --dtype "$dt" --device "$arch" --db "$db" --json
done <<<"${BENCHES:-}"

if [[ -n ${TORCH_EXT_DIR:-} ]]; then
	while kill -0 "$build" 2>/dev/null && ((SECONDS < deadline - 60)); do sleep 2; done
	step "torch extension: check, time" 150 torch-ext.txt \
		bash -c "cd '$res/ext' && PYTHONUNBUFFERED=1 python3 bench.py --json '$res/torch-ext.json'"
	rm -rf "$res/ext/build"
fi


if [[ -n ${TORCH_EXT:-} ]]; then
	step "gen --torch from gpu.db" 60 gen-torch.txt "$at" gen --torch "$res/ext" --db "$db" --device "$arch"
	step "torch extension: build, check, time" 240 torch-ext.txt \
		bash -c "cd '$res/ext' && MAX_JOBS=16 PYTHONUNBUFFERED=1 python3 bench.py --json '$res/torch-ext.json'"
	rm -rf "$res/ext/build"
fi
# The tunes beside PyTorch, into the summary too.
step "compare with PyTorch" 15 compare.txt python3 "$here/compare.py" "$res"
cat "$res/compare.txt" >>"$OUT/summary.txt"
step "gen --device $arch with NVRTC from gpu.db" 60 gen-nvrtc.txt "$at" gen --device "$arch" --db "$db" --out "$res/gen-nvrtc" --pkg fastcuda
step "export gpu.db" 20 gpu.jsonl "$at" db export --db "$db"
rm -rf "$res/gen-nvrtc/ptx"
pack
exit $status
