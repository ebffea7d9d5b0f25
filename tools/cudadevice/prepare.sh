#!/usr/bin/env bash
# prepare.sh [DIR]: builds, on a machine with Go, what run.sh needs on a
# GPU machine without Go, into DIR (default dist/cudadevice, ignored by
# git): autotune and the test binaries of examples/fastcuda and
# measure/cuda, all with CGO_ENABLED=0, and run.sh itself. Copy DIR (or the
# working tree with DIR) to the GPU machine and run DIR/run.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-dist/cudadevice}
mkdir -p "$dir"
export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
go build -o "$dir/autotune" ./cmd/autotune
go test -c -o "$dir/fastcuda.test" ./examples/fastcuda
go test -c -o "$dir/measure-cuda.test" ./measure/cuda
cp tools/cudadevice/run.sh "$dir/"
cp examples/fastcuda/testdata/tune.jsonl "$dir/fastcuda-tune.jsonl"
echo "prepared $dir: run $dir/run.sh on the GPU machine with OUT set"
