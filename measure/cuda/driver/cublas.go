package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CUBLASNames are the sonames of cuBLAS, newest first.
var CUBLASNames = []string{"libcublas.so.13", "libcublas.so.12", "libcublas.so.11"}

// CUBLAS is the loaded cuBLAS library, for bench's GEMM baseline. Only the
// float32 GEMM is bound: cublasGemmEx and cublasSgemmEx, the half-precision
// ones, take 19 and 17 arguments, more than the 15 purego can pass.
type CUBLAS struct {
	lib *library

	cublasCreate    func(h *uintptr) int32
	cublasDestroy   func(h uintptr) int32
	cublasSetStream func(h, stream uintptr) int32
	// cublasSgemm_v2(handle, transa, transb, m, n, k, *alpha, A, lda, B,
	// ldb, *beta, C, ldc): column-major C = α·op(A)·op(B) + β·C, alpha
	// and beta read from host memory (the default pointer mode).
	cublasSgemm func(h uintptr, transa, transb, m, n, k int32, alpha *float32, a uint64, lda int32,
		b uint64, ldb int32, beta *float32, c uint64, ldc int32) int32
}

// CUBLASPaths returns where OpenCUBLAS looks, in order: each of
// [CUBLASNames] in $CUDA_HOME/lib64 and $CUDA_HOME/lib (when CUDA_HOME is
// set), then in /usr/local/cuda/lib64, then on the loader's path, as
// [NVRTCPaths] does.
func CUBLASPaths() []string { return libPaths(CUBLASNames) }

// OpenCUBLAS loads cuBLAS from the first of paths that opens (none means
// [CUBLASPaths]) and binds its functions. It wraps [ErrNoCUBLAS] when none
// opens and [ErrMissingSymbol] when a function is missing.
func OpenCUBLAS(paths ...string) (*CUBLAS, error) {
	if len(paths) == 0 {
		paths = CUBLASPaths()
	}
	for _, p := range paths {
		preloadLt(p)
	}
	lib, err := openLib(ErrNoCUBLAS, paths...)
	if err != nil {
		return nil, err
	}
	b := &CUBLAS{lib: lib}
	for _, s := range []struct {
		f    any
		name string
	}{
		{&b.cublasCreate, "cublasCreate_v2"},
		{&b.cublasDestroy, "cublasDestroy_v2"},
		{&b.cublasSetStream, "cublasSetStream_v2"},
		{&b.cublasSgemm, "cublasSgemm_v2"},
	} {
		if err := lib.bind(s.f, s.name); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// preloadLt loads cuBLASLt from the directory of path, a cuBLAS in a
// directory the loader does not search (a toolkit's lib64 off
// LD_LIBRARY_PATH), so that cuBLAS's dependency on it is met by the one
// already loaded. Failing is fine: the loader may find it anyway.
func preloadLt(path string) {
	dir, base := filepath.Split(path)
	if dir == "" {
		return
	}
	lt := filepath.Join(dir, strings.Replace(base, "libcublas.", "libcublasLt.", 1))
	if _, err := os.Stat(lt); err == nil {
		openLib(ErrNoCUBLAS, lt)
	}
}

// Path returns the path cuBLAS was loaded from.
func (b *CUBLAS) Path() string { return b.lib.path }

// CUBLASHandle is a cuBLAS context (cublasHandle_t), bound to the CUDA
// context current when it was created.
type CUBLASHandle struct {
	b *CUBLAS
	h uintptr
}

// Create creates a handle for the current context and sets its stream
// to the default one, where [Function.Launch] queues kernels and
// [Event.Record] records events.
func (b *CUBLAS) Create() (*CUBLASHandle, error) {
	var h uintptr
	if err := cublasCheck("cublasCreate_v2", b.cublasCreate(&h)); err != nil {
		return nil, err
	}
	if err := cublasCheck("cublasSetStream_v2", b.cublasSetStream(h, 0)); err != nil {
		b.cublasDestroy(h)
		return nil, err
	}
	return &CUBLASHandle{b: b, h: h}, nil
}

// Destroy destroys h.
func (h *CUBLASHandle) Destroy() error {
	return cublasCheck("cublasDestroy_v2", h.b.cublasDestroy(h.h))
}

// Operations (cublasOperation_t).
const (
	cublasOpN = 0
	cublasOpT = 1
)

// GemmRowMajor queues C = A·B on the default stream for row-major float32
// matrices: A m×k, B k×n, C m×n, as op gemm lays them out. cuBLAS is
// column-major, and a row-major matrix is its transpose in column-major
// order, so this asks for Cᵀ = Bᵀ·Aᵀ: an n×m product of Bᵀ (n×k, leading
// dimension n) and Aᵀ (k×m, leading dimension k), without transposes.
func (h *CUBLASHandle) GemmRowMajor(m, n, k int, a, b, c Ptr) error {
	alpha, beta := float32(1), float32(0)
	code := h.b.cublasSgemm(h.h, cublasOpN, cublasOpN, int32(n), int32(m), int32(k),
		&alpha, uint64(b), int32(n), uint64(a), int32(k), &beta, uint64(c), int32(n))
	return cublasCheck("cublasSgemm_v2", code)
}

// cublasCheck turns a cublasStatus_t into nil or an *Error with the
// status's name.
func cublasCheck(fn string, code int32) error {
	if code == 0 {
		return nil
	}
	name, ok := cublasStatusNames[code]
	if !ok {
		name = fmt.Sprintf("CUBLAS_STATUS_%d", code)
	}
	return &Error{Func: fn, Code: int(code), Name: name}
}

// cublasStatusNames are the names of cublasStatus_t's failures.
var cublasStatusNames = map[int32]string{
	1:  "CUBLAS_STATUS_NOT_INITIALIZED",
	3:  "CUBLAS_STATUS_ALLOC_FAILED",
	7:  "CUBLAS_STATUS_INVALID_VALUE",
	8:  "CUBLAS_STATUS_ARCH_MISMATCH",
	11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}
