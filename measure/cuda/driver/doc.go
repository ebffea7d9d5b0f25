// Package driver is autotune's binding of the CUDA driver API (libcuda.so.1)
// and of NVRTC, the CUDA C compiler library, loaded at run time with purego;
// also of cuBLAS's float32 GEMM, bench's baseline ([OpenCUBLAS]).
//
// Nothing here needs cgo, cuda.h or a GPU to build: [Open] and [OpenNVRTC]
// look for the libraries when called and return [ErrNoDriver] or
// [ErrNoNVRTC] (wrapped, with what was tried) where they are missing, so one
// CGO_ENABLED=0 binary runs everywhere and uses a GPU where there is one.
// Every symbol is looked up before it is bound, and a library that lacks
// one gives an error wrapping [ErrMissingSymbol] instead of purego's panic.
//
// A failing call returns an [*Error] holding the function, the CUresult,
// nvrtcResult or cublasStatus_t code and its name
// (CUDA_ERROR_ILLEGAL_ADDRESS, CUBLAS_STATUS_INVALID_VALUE). Some codes
// leave the context unusable ([Error.Sticky]); after one the process must
// start over, which is why the measurer runs candidates in a child process.
//
// A CUDA context is current per OS thread. [Context.SetCurrent] is only
// meaningful from a goroutine locked to its thread (runtime.LockOSThread),
// and every later call must come from that goroutine.
//
// Kernel arguments: cuLaunchKernel takes void**, an array holding the
// address of each argument. [Function.Launch] copies each argument into
// memory of its exact C size (a [Ptr] is 8 bytes, an int32 4, a float32 4)
// and pins that memory and the array with a runtime.Pinner for the call.
//
// Only Linux is supported; elsewhere Open and OpenNVRTC return the errors
// above.
package driver
