package driver

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"unsafe"
)

// NVRTCNames are the sonames of NVRTC, newest first.
var NVRTCNames = []string{"libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so.11.2"}

// NVRTC is the loaded CUDA C compiler library.
type NVRTC struct {
	lib *library

	nvrtcVersion           func(major, minor *int32) int32
	nvrtcGetErrorString    func(code int32) string
	nvrtcCreateProgram     func(prog *uintptr, src, name string, nHeaders int32, headers, includeNames unsafe.Pointer) int32
	nvrtcDestroyProgram    func(prog *uintptr) int32
	nvrtcCompileProgram    func(prog uintptr, nOptions int32, options unsafe.Pointer) int32
	nvrtcGetProgramLogSize func(prog uintptr, n *uintptr) int32
	nvrtcGetProgramLog     func(prog uintptr, log *byte) int32
	nvrtcGetPTXSize        func(prog uintptr, n *uintptr) int32
	nvrtcGetPTX            func(prog uintptr, ptx *byte) int32
	nvrtcGetCUBINSize      func(prog uintptr, n *uintptr) int32
	nvrtcGetCUBIN          func(prog uintptr, cubin *byte) int32
}

// NVRTCPaths returns where OpenNVRTC looks, in order: each of [NVRTCNames]
// in $CUDA_HOME/lib64 and $CUDA_HOME/lib (when CUDA_HOME is set), then in
// /usr/local/cuda/lib64, then on the loader's path.
func NVRTCPaths() []string { return libPaths(NVRTCNames) }

// libPaths returns each of names in $CUDA_HOME/lib64 and $CUDA_HOME/lib
// (when CUDA_HOME is set), then in /usr/local/cuda/lib64, then bare, for
// the loader's path.
func libPaths(names []string) []string {
	var dirs []string
	if home := os.Getenv("CUDA_HOME"); home != "" {
		dirs = append(dirs, filepath.Join(home, "lib64"), filepath.Join(home, "lib"))
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	var paths []string
	for _, d := range dirs {
		for _, n := range names {
			paths = append(paths, filepath.Join(d, n))
		}
	}
	return append(paths, names...)
}

// OpenNVRTC loads NVRTC from the first of paths that opens (none means
// [NVRTCPaths]) and binds its functions. It wraps [ErrNoNVRTC] when none
// opens and [ErrMissingSymbol] when a function is missing.
func OpenNVRTC(paths ...string) (*NVRTC, error) {
	if len(paths) == 0 {
		paths = NVRTCPaths()
	}
	lib, err := openLib(ErrNoNVRTC, paths...)
	if err != nil {
		return nil, err
	}
	n := &NVRTC{lib: lib}
	for _, s := range []struct {
		f    any
		name string
	}{
		{&n.nvrtcVersion, "nvrtcVersion"},
		{&n.nvrtcGetErrorString, "nvrtcGetErrorString"},
		{&n.nvrtcCreateProgram, "nvrtcCreateProgram"},
		{&n.nvrtcDestroyProgram, "nvrtcDestroyProgram"},
		{&n.nvrtcCompileProgram, "nvrtcCompileProgram"},
		{&n.nvrtcGetProgramLogSize, "nvrtcGetProgramLogSize"},
		{&n.nvrtcGetProgramLog, "nvrtcGetProgramLog"},
		{&n.nvrtcGetPTXSize, "nvrtcGetPTXSize"},
		{&n.nvrtcGetPTX, "nvrtcGetPTX"},
		{&n.nvrtcGetCUBINSize, "nvrtcGetCUBINSize"},
		{&n.nvrtcGetCUBIN, "nvrtcGetCUBIN"},
	} {
		if err := lib.bind(s.f, s.name); err != nil {
			return nil, err
		}
	}
	return n, nil
}

// Path returns the path NVRTC was loaded from.
func (n *NVRTC) Path() string { return n.lib.path }

func (n *NVRTC) check(fn string, code int32) error {
	if code == 0 {
		return nil
	}
	return &Error{Func: fn, Code: int(code), Name: n.nvrtcGetErrorString(code)}
}

// Version returns NVRTC's CUDA version, "13.0".
func (n *NVRTC) Version() (string, error) {
	var major, minor int32
	if err := n.check("nvrtcVersion", n.nvrtcVersion(&major, &minor)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", major, minor), nil
}

// Program is what Compile made of a source.
type Program struct {
	Log   string // the compiler's messages, warnings included
	CUBIN []byte // machine code for the architecture, for LoadModule
	PTX   []byte // the PTX, when NVRTC kept it; for reading
}

// Image returns what LoadModule should load: the cubin, else the PTX.
func (p *Program) Image() []byte {
	if len(p.CUBIN) > 0 {
		return p.CUBIN
	}
	return p.PTX
}

// CompileError is a source that NVRTC rejected; Log holds its messages.
type CompileError struct {
	Err *Error
	Log string
}

func (e *CompileError) Error() string { return fmt.Sprintf("%v\n%s", e.Err, e.Log) }
func (e *CompileError) Unwrap() error { return e.Err }

// Compile compiles CUDA C source (named name in messages) for arch, a real
// architecture such as "sm_90", with --gpu-architecture=arch and the given
// extra options. A source NVRTC rejects is a [*CompileError]; any other
// failure an [*Error].
func (n *NVRTC) Compile(src, name, arch string, options ...string) (*Program, error) {
	var prog uintptr
	if err := n.check("nvrtcCreateProgram", n.nvrtcCreateProgram(&prog, src, name, 0, nil, nil)); err != nil {
		return nil, err
	}
	defer n.nvrtcDestroyProgram(&prog)

	opts := append([]string{"--gpu-architecture=" + arch}, options...)
	var pin runtime.Pinner
	defer pin.Unpin()
	ptrs := make([]*byte, len(opts))
	for i, o := range opts {
		b := cString(o)
		pin.Pin(&b[0])
		ptrs[i] = &b[0]
	}
	pin.Pin(&ptrs[0])
	code := n.nvrtcCompileProgram(prog, int32(len(ptrs)), unsafe.Pointer(&ptrs[0]))

	p := &Program{}
	var size uintptr
	if n.nvrtcGetProgramLogSize(prog, &size) == 0 && size > 1 {
		buf := make([]byte, size)
		if n.nvrtcGetProgramLog(prog, &buf[0]) == 0 {
			p.Log = goString(&buf[0])
		}
	}
	if err := n.check("nvrtcCompileProgram", code); err != nil {
		e, _ := err.(*Error)
		return nil, &CompileError{Err: e, Log: p.Log}
	}
	// A real architecture gives a cubin; PTX is kept too by some versions.
	if n.nvrtcGetCUBINSize(prog, &size) == 0 && size > 0 {
		p.CUBIN = make([]byte, size)
		if err := n.check("nvrtcGetCUBIN", n.nvrtcGetCUBIN(prog, &p.CUBIN[0])); err != nil {
			return nil, err
		}
	}
	if n.nvrtcGetPTXSize(prog, &size) == 0 && size > 1 {
		buf := make([]byte, size)
		if n.nvrtcGetPTX(prog, &buf[0]) == 0 {
			p.PTX = buf[:size-1]
		}
	}
	if len(p.Image()) == 0 {
		return nil, &Error{Func: "nvrtcGetCUBIN", Code: -1, Name: "neither a cubin nor PTX came out"}
	}
	return p, nil
}
