package driver

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// LibCUDA is the driver library's name on the loader's path.
const LibCUDA = "libcuda.so.1"

// Driver is the loaded driver API. Its methods may be called from any
// goroutine; those of a [Context] and what it owns need the context current
// on the calling thread.
type Driver struct {
	lib *library

	cuInit                    func(flags uint32) int32
	cuDriverGetVersion        func(v *int32) int32
	cuGetErrorName            func(code int32, name **byte) int32
	cuDeviceGetCount          func(n *int32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDeviceGetName           func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute      func(v *int32, attr int32, dev int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuModuleLoadData          func(mod *uintptr, image unsafe.Pointer) int32
	cuModuleUnload            func(mod uintptr) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name string) int32
	cuFuncGetAttribute        func(v *int32, attr int32, fn uintptr) int32
	cuFuncSetAttribute        func(fn uintptr, attr int32, v int32) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params, extra unsafe.Pointer) int32
	cuMemAlloc                func(p *uint64, size uintptr) int32
	cuMemFree                 func(p uint64) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, size uintptr) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, size uintptr) int32
	cuMemcpyDtoD              func(dst, src uint64, size uintptr) int32
	cuMemsetD32               func(dst uint64, v uint32, n uintptr) int32
	cuEventCreate             func(ev *uintptr, flags uint32) int32
	cuEventDestroy            func(ev uintptr) int32
	cuEventRecord             func(ev uintptr, stream uintptr) int32
	cuEventSynchronize        func(ev uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
}

// Open loads the driver library at path ("" means [LibCUDA] on the
// loader's path), binds every function autotune uses and calls cuInit. It
// wraps [ErrNoDriver] when the library cannot be loaded and
// [ErrMissingSymbol] when a function is missing; cuInit's failure (no
// device, a driver without a kernel module) is an [*Error].
func Open(path string) (*Driver, error) {
	if path == "" {
		path = LibCUDA
	}
	lib, err := openLib(ErrNoDriver, path)
	if err != nil {
		return nil, err
	}
	d := &Driver{lib: lib}
	for _, s := range []struct {
		f    any
		name string
	}{
		{&d.cuInit, "cuInit"},
		{&d.cuDriverGetVersion, "cuDriverGetVersion"},
		{&d.cuGetErrorName, "cuGetErrorName"},
		{&d.cuDeviceGetCount, "cuDeviceGetCount"},
		{&d.cuDeviceGet, "cuDeviceGet"},
		{&d.cuDeviceGetName, "cuDeviceGetName"},
		{&d.cuDeviceGetAttribute, "cuDeviceGetAttribute"},
		{&d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain"},
		{&d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2"},
		{&d.cuCtxSetCurrent, "cuCtxSetCurrent"},
		{&d.cuCtxSynchronize, "cuCtxSynchronize"},
		{&d.cuModuleLoadData, "cuModuleLoadData"},
		{&d.cuModuleUnload, "cuModuleUnload"},
		{&d.cuModuleGetFunction, "cuModuleGetFunction"},
		{&d.cuFuncGetAttribute, "cuFuncGetAttribute"},
		{&d.cuFuncSetAttribute, "cuFuncSetAttribute"},
		{&d.cuLaunchKernel, "cuLaunchKernel"},
		{&d.cuMemAlloc, "cuMemAlloc_v2"},
		{&d.cuMemFree, "cuMemFree_v2"},
		{&d.cuMemcpyHtoD, "cuMemcpyHtoD_v2"},
		{&d.cuMemcpyDtoH, "cuMemcpyDtoH_v2"},
		{&d.cuMemcpyDtoD, "cuMemcpyDtoD_v2"},
		{&d.cuMemsetD32, "cuMemsetD32_v2"},
		{&d.cuEventCreate, "cuEventCreate"},
		{&d.cuEventDestroy, "cuEventDestroy_v2"},
		{&d.cuEventRecord, "cuEventRecord"},
		{&d.cuEventSynchronize, "cuEventSynchronize"},
	} {
		if err := lib.bind(s.f, s.name); err != nil {
			return nil, err
		}
	}
	// CUDA 12.8 added cuEventElapsedTime_v2 with the same signature and
	// CUDA 13's header maps the name to it; older drivers have only the first.
	elapsed := "cuEventElapsedTime"
	if lib.has("cuEventElapsedTime_v2") {
		elapsed = "cuEventElapsedTime_v2"
	}
	if err := lib.bind(&d.cuEventElapsedTime, elapsed); err != nil {
		return nil, err
	}
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		return nil, err
	}
	return d, nil
}

// Path returns the path the driver library was loaded from.
func (d *Driver) Path() string { return d.lib.path }

// check turns a CUresult into nil or an *Error named by cuGetErrorName.
func (d *Driver) check(fn string, code int32) error {
	if code == Success {
		return nil
	}
	var p *byte
	name := fmt.Sprintf("CUDA_ERROR_%d", code)
	if d.cuGetErrorName(code, &p) == Success && p != nil {
		name = goString(p)
	}
	return &Error{Func: fn, Code: int(code), Name: name}
}

// Version returns the driver's CUDA version as "13.0".
func (d *Driver) Version() (string, error) {
	var v int32
	if err := d.check("cuDriverGetVersion", d.cuDriverGetVersion(&v)); err != nil {
		return "", err
	}
	return fmt.Sprintf("%d.%d", v/1000, v%1000/10), nil
}

// DeviceCount returns the number of CUDA devices.
func (d *Driver) DeviceCount() (int, error) {
	var n int32
	err := d.check("cuDeviceGetCount", d.cuDeviceGetCount(&n))
	return int(n), err
}

// Device is one GPU.
type Device struct {
	d  *Driver
	id int32
}

// Device returns the device with the given ordinal.
func (d *Driver) Device(ordinal int) (Device, error) {
	var id int32
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&id, int32(ordinal))); err != nil {
		return Device{}, err
	}
	return Device{d: d, id: id}, nil
}

// Name returns the device's name, "NVIDIA H100 80GB HBM3".
func (dev Device) Name() (string, error) {
	buf := make([]byte, 256)
	if err := dev.d.check("cuDeviceGetName", dev.d.cuDeviceGetName(&buf[0], int32(len(buf)), dev.id)); err != nil {
		return "", err
	}
	return goString(&buf[0]), nil
}

// Device attributes (CUdevice_attribute).
const (
	AttrMaxThreadsPerBlock       = 1
	AttrMaxSharedMemoryPerBlock  = 8
	AttrWarpSize                 = 10
	AttrMultiprocessorCount      = 16
	AttrL2CacheSize              = 38
	AttrComputeCapabilityMajor   = 75
	AttrComputeCapabilityMinor   = 76
	AttrMaxSharedMemoryPerOptin  = 97
	AttrMaxRegistersPerBlock     = 12
	AttrClockRate                = 13
	AttrMemoryClockRate          = 36
	AttrGlobalMemoryBusWidth     = 37
	AttrMaxThreadsPerMultiproc   = 39
	AttrMaxSharedMemoryPerMultip = 81
)

// Attribute returns a device attribute (one of the Attr constants).
func (dev Device) Attribute(attr int) (int, error) {
	var v int32
	err := dev.d.check("cuDeviceGetAttribute", dev.d.cuDeviceGetAttribute(&v, int32(attr), dev.id))
	return int(v), err
}

// ComputeCapability returns the major and minor compute capability: 9, 0
// for an H100.
func (dev Device) ComputeCapability() (major, minor int, err error) {
	if major, err = dev.Attribute(AttrComputeCapabilityMajor); err != nil {
		return 0, 0, err
	}
	minor, err = dev.Attribute(AttrComputeCapabilityMinor)
	return major, minor, err
}

// Context is a device's primary context.
type Context struct {
	dev    Device
	handle uintptr
}

// PrimaryContext retains the device's primary context; Release gives it
// back. Make it current before using it.
func (dev Device) PrimaryContext() (*Context, error) {
	var h uintptr
	if err := dev.d.check("cuDevicePrimaryCtxRetain", dev.d.cuDevicePrimaryCtxRetain(&h, dev.id)); err != nil {
		return nil, err
	}
	return &Context{dev: dev, handle: h}, nil
}

// SetCurrent makes c the calling thread's context. The goroutine must be
// locked to its thread (runtime.LockOSThread) for this to last.
func (c *Context) SetCurrent() error {
	return c.dev.d.check("cuCtxSetCurrent", c.dev.d.cuCtxSetCurrent(c.handle))
}

// Release gives the primary context back.
func (c *Context) Release() error {
	return c.dev.d.check("cuDevicePrimaryCtxRelease_v2", c.dev.d.cuDevicePrimaryCtxRelease(c.dev.id))
}

// Synchronize waits for all work of the current context; it returns the
// error of a kernel that failed (an illegal address, say).
func (c *Context) Synchronize() error {
	return c.dev.d.check("cuCtxSynchronize", c.dev.d.cuCtxSynchronize())
}

// Ptr is a device address (CUdeviceptr).
type Ptr uint64

// Alloc allocates n bytes of device memory.
func (c *Context) Alloc(n int) (Ptr, error) {
	var p uint64
	err := c.dev.d.check("cuMemAlloc_v2", c.dev.d.cuMemAlloc(&p, uintptr(n)))
	return Ptr(p), err
}

// Free frees memory from Alloc.
func (c *Context) Free(p Ptr) error {
	return c.dev.d.check("cuMemFree_v2", c.dev.d.cuMemFree(uint64(p)))
}

// CopyIn copies src to the device at dst.
func (c *Context) CopyIn(dst Ptr, src []float32) error {
	if len(src) == 0 {
		return nil
	}
	return c.dev.d.check("cuMemcpyHtoD_v2", c.dev.d.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uintptr(4*len(src))))
}

// CopyOut copies len(dst) float32 values from the device at src to dst.
func (c *Context) CopyOut(dst []float32, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.dev.d.check("cuMemcpyDtoH_v2", c.dev.d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uintptr(4*len(dst))))
}

// CopyInBytes copies src, elements of any dtype as they are in memory
// (dtype.AppendBytes), to the device at dst.
func (c *Context) CopyInBytes(dst Ptr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return c.dev.d.check("cuMemcpyHtoD_v2", c.dev.d.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uintptr(len(src))))
}

// CopyOutBytes copies len(dst) bytes from the device at src to dst.
func (c *Context) CopyOutBytes(dst []byte, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	return c.dev.d.check("cuMemcpyDtoH_v2", c.dev.d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uintptr(len(dst))))
}

// CopyDevice copies n bytes from src to dst, both on the device, on the
// default stream.
func (c *Context) CopyDevice(dst, src Ptr, n int) error {
	return c.dev.d.check("cuMemcpyDtoD_v2", c.dev.d.cuMemcpyDtoD(uint64(dst), uint64(src), uintptr(n)))
}

// Fill sets n 32-bit words at dst to v, asynchronously on the default
// stream; FillFloat does the same with a float32.
func (c *Context) Fill(dst Ptr, v uint32, n int) error {
	return c.dev.d.check("cuMemsetD32_v2", c.dev.d.cuMemsetD32(uint64(dst), v, uintptr(n)))
}

// FillFloat sets n float32 values at dst to v (NaN to poison an output).
func (c *Context) FillFloat(dst Ptr, v float32, n int) error {
	return c.Fill(dst, math.Float32bits(v), n)
}

// Module is loaded code: PTX or a cubin.
type Module struct {
	c      *Context
	handle uintptr
}

// LoadModule loads image, PTX text or a cubin, into the context.
func (c *Context) LoadModule(image []byte) (*Module, error) {
	if len(image) == 0 {
		return nil, &Error{Func: "cuModuleLoadData", Code: ErrorInvalidImage, Name: "CUDA_ERROR_INVALID_IMAGE"}
	}
	// PTX must end in a NUL; a cubin does not mind one.
	img := append(append([]byte(nil), image...), 0)
	var h uintptr
	if err := c.dev.d.check("cuModuleLoadData", c.dev.d.cuModuleLoadData(&h, unsafe.Pointer(&img[0]))); err != nil {
		return nil, err
	}
	runtime.KeepAlive(img)
	return &Module{c: c, handle: h}, nil
}

// Unload unloads m.
func (m *Module) Unload() error {
	return m.c.dev.d.check("cuModuleUnload", m.c.dev.d.cuModuleUnload(m.handle))
}

// Function is a kernel of a module.
type Function struct {
	m      *Module
	name   string
	handle uintptr
}

// Function looks up the kernel with the given (extern "C") name.
func (m *Module) Function(name string) (*Function, error) {
	var h uintptr
	if err := m.c.dev.d.check("cuModuleGetFunction", m.c.dev.d.cuModuleGetFunction(&h, m.handle, name)); err != nil {
		return nil, fmt.Errorf("kernel %s: %w", name, err)
	}
	return &Function{m: m, name: name, handle: h}, nil
}

// Function attributes (CUfunction_attribute).
const (
	FuncMaxThreadsPerBlock       = 0
	FuncSharedSizeBytes          = 1
	FuncLocalSizeBytes           = 3
	FuncNumRegs                  = 4
	FuncMaxDynamicSharedSizeByte = 8
)

// Attribute returns a function attribute (one of the Func constants).
func (f *Function) Attribute(attr int) (int, error) {
	var v int32
	err := f.m.c.dev.d.check("cuFuncGetAttribute", f.m.c.dev.d.cuFuncGetAttribute(&v, int32(attr), f.handle))
	return int(v), err
}

// SetAttribute sets a function attribute: FuncMaxDynamicSharedSizeByte
// before a launch with more than 48 KiB of dynamic shared memory.
func (f *Function) SetAttribute(attr, v int) error {
	return f.m.c.dev.d.check("cuFuncSetAttribute", f.m.c.dev.d.cuFuncSetAttribute(f.handle, int32(attr), int32(v)))
}

// Dim3 is a grid or block size.
type Dim3 struct{ X, Y, Z int }

// Launch queues f on the default stream with the given grid, block and
// dynamic shared memory. Each argument must be a Ptr, int32, uint32,
// int64, uint64, float32 or float64, the C type of the kernel's parameter
// in that place; anything else panics, since it is a bug of the caller.
func (f *Function) Launch(grid, block Dim3, shared int, args ...any) error {
	var pin runtime.Pinner
	defer pin.Unpin()
	params := Params(&pin, args...)
	d := f.m.c.dev.d
	code := d.cuLaunchKernel(f.handle, uint32(grid.X), uint32(grid.Y), uint32(grid.Z),
		uint32(block.X), uint32(block.Y), uint32(block.Z), uint32(shared), 0, params, nil)
	if err := d.check("cuLaunchKernel", code); err != nil {
		return fmt.Errorf("kernel %s: %w", f.name, err)
	}
	return nil
}

// Params returns the void** array of a kernel launch: the address of each
// argument, copied into memory of its exact C size. The arguments are as
// for [Function.Launch] (another type panics). pin pins that memory and the
// array until the caller unpins it, after the call that reads them. The
// CPU emulator of package emu launches through the same array.
func Params(pin *runtime.Pinner, args ...any) unsafe.Pointer {
	params := make([]unsafe.Pointer, len(args)+1)
	for i, a := range args {
		var p unsafe.Pointer
		switch v := a.(type) {
		case Ptr:
			x := uint64(v)
			p = unsafe.Pointer(&x)
		case int32:
			p = unsafe.Pointer(&v)
		case uint32:
			p = unsafe.Pointer(&v)
		case int64:
			p = unsafe.Pointer(&v)
		case uint64:
			p = unsafe.Pointer(&v)
		case float32:
			p = unsafe.Pointer(&v)
		case float64:
			p = unsafe.Pointer(&v)
		default:
			panic(fmt.Sprintf("driver: argument %d of a launch has type %T, not a C scalar", i, a))
		}
		pin.Pin(p)
		params[i] = p
	}
	pin.Pin(&params[0])
	return unsafe.Pointer(&params[0])
}

// Event is a CUDA event, a point in a stream's work that has a time.
type Event struct {
	c      *Context
	handle uintptr
}

// NewEvent creates an event with timing (flags 0).
func (c *Context) NewEvent() (*Event, error) {
	var h uintptr
	if err := c.dev.d.check("cuEventCreate", c.dev.d.cuEventCreate(&h, 0)); err != nil {
		return nil, err
	}
	return &Event{c: c, handle: h}, nil
}

// Record records e on the default stream.
func (e *Event) Record() error {
	return e.c.dev.d.check("cuEventRecord", e.c.dev.d.cuEventRecord(e.handle, 0))
}

// Synchronize waits until e has happened.
func (e *Event) Synchronize() error {
	return e.c.dev.d.check("cuEventSynchronize", e.c.dev.d.cuEventSynchronize(e.handle))
}

// Since returns the milliseconds between start and e, both recorded and
// done.
func (e *Event) Since(start *Event) (float32, error) {
	var ms float32
	err := e.c.dev.d.check("cuEventElapsedTime", e.c.dev.d.cuEventElapsedTime(&ms, start.handle, e.handle))
	return ms, err
}

// Destroy destroys e.
func (e *Event) Destroy() error {
	return e.c.dev.d.check("cuEventDestroy_v2", e.c.dev.d.cuEventDestroy(e.handle))
}
