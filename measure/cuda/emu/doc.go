// Package emu checks generated CUDA kernels without a GPU, two ways.
//
// Emulation: the kernel's source (kernels.CUDAKernel) is compiled with g++
// (or clang++) as ordinary C++ against emu.h, a header of autotune's own
// that emulates the CUDA execution model on the CPU, into a shared library
// ([Build]). Every thread of a block is a fiber; fibers switch only at
// __syncthreads and at the warp collectives (shuffles, votes, __syncwarp,
// with CUDA's semantics per warp of 32), so a barrier some threads never
// reach, a deadlock, or warp collectives that do not meet are reported
// with the threads and source lines involved instead of hanging. Static
// __shared__ variables live in a section of their own and dynamic shared
// memory in a mapping between guard pages, both filled with NaN before each
// block. The library exports autotune_emu_launch, which takes the kernel's
// arguments as the void** array cuLaunchKernel takes (built by
// driver.Params, as on a GPU), so the emulation checks the argument
// marshalling too. A shape-generic kernel (kernels.CUDAKernel.Generic) is
// launched with a shape's extents as its last arguments and the grid and
// shared memory its kernels.CUDALaunch computes ([Checker.CheckGeneric],
// [Checker.EmulateAt]).
//
// A worker process ([WorkerArg], [ServeWorker]) loads the library with
// purego, places each input and the output between guard pages (an
// out-of-bounds access faults and is reported with the buffer it missed),
// and launches the kernel once per [Order]: blocks and threads forward,
// reversed and shuffled. A kernel with a race (a missing __syncthreads
// between a write to shared memory and another thread's read) reads NaN or
// gives order-dependent results. The parent ([Checker]) requires every
// order to give bit-identical output, except for kernels that add floats
// atomically, and compares the first with the op's float64 reference
// within its tolerance (harness.Check) on inputs from measure.NewData
// ([Checker.EmulateSets] runs one build on several input sets).
//
// Buffers hold elements of the checker's dtype: float32, or for bf16 and
// f16 their 16 bits (dtype.AppendBytes), inputs encoded from values
// already rounded to the dtype and the output decoded for the check. The
// output and the slack past every buffer are filled with 0xff bytes
// before each launch, NaN in all three. A 16-bit kernel converts with
// codegen/cuda's HalfHelpers, whose emulated form (AUTOTUNE_EMU) is
// package dtype's bit arithmetic, checked bit for bit on every 16-bit
// pattern and every tie (TestHalfHelpers); on a GPU they are cvt
// instructions, which the emulator does not run: that NVIDIA's cvt.rn
// agrees with dtype is the PTX ISA's word (round to nearest even), not a
// test's.
//
// PTX: [Checker] also compiles the source to PTX with clang
// (-x cuda --cuda-device-only -nocudainc -nocudalib) for the target's
// architecture, with ptx.h, a prelude that declares what the templates use
// in terms of clang's NVVM builtins, so that code only a GPU compiler
// rejects (a host-only function, an intrinsic the architecture lacks,
// inline PTX that does not assemble) is caught too.
//
// What emulation does not see: timing, occupancy and register limits,
// memory coalescing, misaligned vector accesses, and races between blocks
// that do not show in the orders tried. Inline PTX (asm) cannot be emulated;
// templates should use the intrinsics and cuda_pipeline.h's primitives
// (__pipeline_memcpy_async, __pipeline_commit, __pipeline_wait_prior),
// which emu.h emulates by queueing each copy until its group is waited for.
// Tensor cores are emu.h's warp collectives emu_ldmatrix and
// emu_mma_m16n8k16 (what codegen/cuda's MMAHelpers call under
// AUTOTUNE_EMU): each lane deposits its row address or fragment registers
// in its warp's exchange area at a __syncwarp and reads what the PTX ISA's
// fragment layouts give it, so a kernel that assumes a wrong layout
// computes a wrong product (TestMMA plants some); ldmatrix also requires
// 16-byte-aligned rows in shared memory. The product of 16-bit floats is
// exact in float and summed in k order; a tensor core's order within the
// 16 products may differ.
package emu
