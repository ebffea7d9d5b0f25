// Package cuda measures generated CUDA kernels on the local NVIDIA GPU.
//
// [Measurer] implements the tuner's measurer contract for the cuda backend.
// For a batch it emits each config's CUDA C (kernels.CUDAEmitter) and
// hands the sources to a worker: a child process, the same binary started
// with the hidden argument [WorkerArg], which talks to the GPU through
// package driver (libcuda.so.1 and NVRTC loaded at run time). Per candidate
// the worker
//
//   - compiles the source with NVRTC for the target's architecture
//     (--gpu-architecture=sm_XX); a rejected source is a build_error record
//     with the compiler's log, and the compile time is its BuildNS. The
//     worker compiles the batch's kernels in order on all cores but one
//     (at most 8 at once), starting before it loads the input sets, while
//     it checks and times the ones before: NVRTC takes seconds for a
//     large tensor-core kernel;
//   - for each of the op's input sets (measure.Inputs: the parent draws
//     them from a seeded generator, never zeros, with large magnitudes and,
//     for softmax, -Inf entries, and writes them with measure/harness; the
//     worker copies them to the device once per batch, as elements of the
//     workload's dtype: float32, or the 16 bits of bf16 and f16), fills
//     the output with all-ones words (NaN in every dtype), launches once,
//     decodes the output to float32, and compares every element with the set's
//     float64 reference and tolerance (harness.Check): the first one out of
//     tolerance (an unwritten NaN included) makes a wrong_answer record
//     naming the set, the index, got and want;
//   - launches a few times to warm up, then times single launches with
//     CUDA events, writing a buffer twice the size of the L2 cache before
//     each, so that no launch finds the previous one's data in L2; samples
//     go on until there are at least Options.Samples of them and
//     Options.MinTime has passed (at most 10000), on the first input set.
//
// A launch that fails (too many resources, an illegal address) is a
// runtime_error record with the CUDA error's name. An error that poisons
// the context (an illegal address, a trap) ends the worker after it
// reports; a worker that dies or goes silent for longer than
// Options.Timeout is killed and its candidate recorded as crash or
// timeout. In every case the parent starts a fresh worker for the rest of
// the batch, so one bad kernel costs one candidate.
//
// The parent reports each result to the batch's Finished hook as soon as
// it arrives, so the tuner commits it while the batch runs. Batch
// directories are named by the parent's PID (measure.TempDir), and those a
// killed tuner left behind are removed by the next batch.
//
// [Measurer.Bench] runs bench's comparison in a worker the same way: the
// tuned kernel, checked as above, against cuBLAS's float32 GEMM for op
// gemm (package driver loads it; missing, it is left out with a note), a
// peak loop of float32 FMAs and a device-to-device copy floor, launched in
// interleaved rounds, each launch timed with CUDA events after the L2
// flush.
//
// Go errors are kept for the machinery: no driver or no NVRTC ([New] says
// which, and suggests --device cpu), a GPU of another architecture than the
// target (New names both), a worker that cannot be started or breaks the
// protocol, a cancelled context.
package cuda
