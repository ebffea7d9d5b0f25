package driver

import (
	"errors"
	"fmt"
)

// Errors the loaders wrap. The command line tests for them to tell a user
// what is missing.
var (
	ErrNoDriver      = errors.New("the CUDA driver library libcuda.so.1 was not found")
	ErrNoNVRTC       = errors.New("the CUDA compiler library NVRTC (libnvrtc.so.13, .12 or .11.2) was not found")
	ErrNoCUBLAS      = errors.New("cuBLAS (libcublas.so.13, .12 or .11) was not found")
	ErrMissingSymbol = errors.New("a function is missing from a CUDA library")
)

// Error is a failed call of the driver API, NVRTC or cuBLAS.
type Error struct {
	Func string // the C function: "cuMemAlloc_v2"
	Code int    // the CUresult, nvrtcResult or cublasStatus_t
	Name string // CUDA_ERROR_OUT_OF_MEMORY, NVRTC_ERROR_COMPILATION, CUBLAS_STATUS_INVALID_VALUE
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s (%d)", e.Func, e.Name, e.Code) }

// Some CUresult codes.
const (
	Success              = 0
	ErrorInvalidValue    = 1
	ErrorOutOfMemory     = 2
	ErrorNotInitialized  = 3
	ErrorNoDevice        = 100
	ErrorInvalidImage    = 200
	ErrorNotFound        = 500
	ErrorIllegalAddress  = 700
	ErrorLaunchResources = 701
	ErrorLaunchTimeout   = 702
	ErrorLaunchFailed    = 719
)

// Sticky reports whether e leaves the context unusable: an illegal address,
// a trap, a timed-out launch and their kind. After one, every later call of
// the process fails too, so the process has to end.
func (e *Error) Sticky() bool {
	switch e.Code {
	case ErrorIllegalAddress, ErrorLaunchTimeout, 713, 714, 715, 716, 717, 718, ErrorLaunchFailed:
		return true
	}
	return false
}

// IsSticky reports whether err is or wraps a sticky [*Error].
func IsSticky(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Sticky()
}
