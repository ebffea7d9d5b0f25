// Package torch writes a PyTorch extension of tuned CUDA kernels
// (`autotune gen --torch DIR`): torch.ops.autotune.softmax, gemm,
// attention (causal or not), rmsnorm and layernorm, beside gen's Go/CPU
// writer and gen/gocuda's Go package of CUDA kernels.
//
// It plans as gen/gocuda does, per op, dtype and architecture
// (gen.Select over the records of any GPU of the architecture): the
// winner of every tuned shape, specialised to it; the shape-generic
// kernels of the winners that win the most shapes; the template's
// default, generic, the last resort. The dtypes are f32, whose defaults
// serve every shape, and those of the CUDA template that the records
// have. The extension's files:
//
//   - cu/NAME.cu, each kernel's CUDA C, with a unique extern "C" entry;
//     kernels_<arch>.cu includes those of an architecture, each in a
//     namespace of its own (their helpers share names), and lists their
//     functions: one nvcc translation unit per architecture;
//   - launch.h, the dispatch and launch geometry in plain C++ without torch
//     (launch.h.txt, the same in every extension): a transcription of
//     kernels.CUDALaunch and of the Go packages' exact → nearest →
//     default rule, which this package's tests compile with g++ and check
//     against them; tables.h, its data, generated from the plan;
//   - ops.cpp (ops.cpp.txt), the one translation unit that includes
//     torch: TORCH_LIBRARY(autotune) with the operators' schemas and
//     their CUDA implementations, which check device, dtype, contiguity,
//     alignment and shapes, allocate the output, pick the kernel for the
//     current device's compute capability (the newest architecture of the
//     extension not newer than it) and launch it on the current stream
//     with cudaLaunchKernel, raising the dynamic shared memory limit of a
//     kernel above 48 KiB first; and variant, which says which kernel a
//     shape runs;
//   - load.py (torch.utils.cpp_extension.load: no install step), setup.py
//     (CUDAExtension), and bench.py, which checks every case of
//     cases.json (each op's tuned shapes, its example and an odd untuned
//     shape, with the op's tolerance) against torch's op in float64 on
//     NaN-poisoned output and times both with CUDA events;
//   - manifest.json: the command, the template versions and each kernel's
//     config and source hash.
//
// Without torch or a GPU, this package's tests run every kernel of a
// generated extension in the emulator (measure/cuda/emu), compile each
// architecture's translation unit to PTX with clang, and check launch.h
// against kernels.CUDALaunch; the extension itself runs only where there
// are a GPU, nvcc and PyTorch.
package torch
