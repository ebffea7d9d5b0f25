#!/usr/bin/env bash
# run.sh, on a GPU machine (NVIDIA driver and CUDA toolkit; no Go needed):
# runs what prepare.sh built beside it and writes every result under $OUT:
#
#   device.txt          nvidia-smi: the GPU and its driver
#   fastcuda-test.txt   examples/fastcuda's tests: TestGPU runs every op at
#                       its tuned and at odd shapes against the float64
#                       reference (the package's kernels are of sm_80, sm_86
#                       and sm_90; a newer GPU runs sm_90's PTX by JIT)
#   gen-nvrtc/          the same package regenerated with NVRTC for this GPU
#   measure-cuda.txt    autotune's own GPU tests (tuning's worker, every
#                       template's CUDA against the reference)
#   bench.txt           autotune bench --device on this GPU: softmax
#   bench-gemm.txt      and gemm 4096³ against cuBLAS (the float64
#                       reference of 4096³ takes a minute or more first)
#
# It goes on after a failure and exits 1 if anything failed.
set -uo pipefail
: "${OUT:?set OUT to the directory for the results}"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"
status=0
step() { # step NAME FILE COMMAND...: runs COMMAND, output to $OUT/FILE
	local name=$1 file=$2
	shift 2
	echo "== $name"
	if ! "$@" >"$OUT/$file" 2>&1; then
		echo "   failed: see $file"
		status=1
	fi
}
nvidia-smi >"$OUT/device.txt" 2>&1
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d ' .')
arch=sm_${arch:-90}
step "examples/fastcuda on the GPU" fastcuda-test.txt "$here/fastcuda.test" -test.v -test.run 'TestGPU|TestManifest|TestDispatch'
step "gen --device $arch with NVRTC" gen-nvrtc.txt "$here/autotune" gen --device "$arch" --log "$here/fastcuda-tune.jsonl" --out "$OUT/gen-nvrtc" --pkg fastcuda
step "autotune's GPU tests" measure-cuda.txt "$here/measure-cuda.test" -test.v -test.run 'TestGPU'
step "bench --device $arch" bench.txt "$here/autotune" bench --op softmax --shape 4096x1024 --device "$arch"
step "bench --device $arch gemm" bench-gemm.txt "$here/autotune" bench --op gemm --shape 4096x4096x4096 --device "$arch"
exit $status
