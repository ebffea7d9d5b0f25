#!/usr/bin/env bash
# prepare.sh [DIR]: builds, on a machine with Go, what run.sh needs on a
# GPU machine without Go, into DIR (default dist/cudadevice, ignored by
# git): autotune and the test binaries of examples/fastcuda and
# measure/cuda, all with CGO_ENABLED=0, run.sh and torch_baseline.py, and
# DIR.tgz, an archive of DIR. Copy DIR.tgz to the GPU machine, unpack it
# and run run.sh there.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-dist/cudadevice}
# A fresh directory: whatever an earlier run left there would travel too.
rm -rf "$dir" "$dir.tgz"
mkdir -p "$dir"
export CGO_ENABLED=0 GOOS=linux GOARCH=amd64
flags=(-trimpath -ldflags=-s\ -w)
go build "${flags[@]}" -o "$dir/autotune" ./cmd/autotune
go test -c "${flags[@]}" -o "$dir/fastcuda.test" ./examples/fastcuda
go test -c "${flags[@]}" -o "$dir/measure-cuda.test" ./measure/cuda
cp tools/cudadevice/run.sh tools/cudadevice/torch_baseline.py tools/cudadevice/compare.py "$dir/"
# The binaries are large (autotune alone is about 36 MB stripped); the
# archive is what travels, at about half their size.
tar -czf "$dir.tgz" -C "$(dirname "$dir")" "$(basename "$dir")"
echo "prepared $dir.tgz: unpack it on the GPU machine and run $(basename "$dir")/run.sh there with OUT set"
