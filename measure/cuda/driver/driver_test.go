package driver

import (
	"errors"
	"math"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// buildFake compiles testdata/fakecuda.c into a shared library with the C
// compiler and returns its path; the test is skipped when there is none.
func buildFake(t *testing.T, defines ...string) string {
	t.Helper()
	return buildLib(t, "fakecuda.c", "libcuda.so.1", defines...)
}

// buildLib compiles testdata/src into a shared library named name in a
// temporary directory and returns its path; the test is skipped where
// there is no C compiler.
func buildLib(t *testing.T, src, name string, defines ...string) string {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the binding loads libraries on Linux only")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		if cc, err = exec.LookPath("cc"); err != nil {
			t.Skip("no C compiler (gcc or cc) to build the fake " + name)
		}
	}
	out := filepath.Join(t.TempDir(), name)
	args := append([]string{"-shared", "-fPIC", "-O1", "-o", out, filepath.Join("testdata", src)}, defines...)
	if b, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, b)
	}
	return out
}

var fakeOnce = struct {
	sync.Once
	path string
}{}

// openFake opens the fake driver, built once per test binary.
func openFake(t *testing.T) (*Driver, *Context) {
	t.Helper()
	fakeOnce.Do(func() { fakeOnce.path = buildFake(t) })
	if fakeOnce.path == "" {
		t.Skip("the fake libcuda could not be built")
	}
	d, err := Open(fakeOnce.path)
	if err != nil {
		t.Fatal(err)
	}
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	c, err := dev.PrimaryContext()
	if err != nil {
		t.Fatal(err)
	}
	runtime.LockOSThread()
	t.Cleanup(runtime.UnlockOSThread)
	if err := c.SetCurrent(); err != nil {
		t.Fatal(err)
	}
	return d, c
}

func TestOpenMissingLibrary(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := Open(missing)
	if !errors.Is(err, ErrNoDriver) || !strings.Contains(err.Error(), "libcuda.so.1") {
		t.Errorf("Open(%s) = %v, want an error wrapping ErrNoDriver that names libcuda.so.1", missing, err)
	}
	_, err = OpenNVRTC(filepath.Join(t.TempDir(), "libnvrtc.so.13"))
	if !errors.Is(err, ErrNoNVRTC) || !strings.Contains(err.Error(), "NVRTC") {
		t.Errorf("OpenNVRTC = %v, want an error wrapping ErrNoNVRTC", err)
	}
}

func TestMissingSymbol(t *testing.T) {
	lib := buildFake(t, "-DOMIT_LAUNCH")
	_, err := Open(lib)
	if !errors.Is(err, ErrMissingSymbol) || !strings.Contains(err.Error(), "cuLaunchKernel") {
		t.Fatalf("Open of a library without cuLaunchKernel = %v, want ErrMissingSymbol naming it", err)
	}
	// NVRTC's loader binds the same way: the fake driver has none of its symbols.
	_, err = OpenNVRTC(lib)
	if !errors.Is(err, ErrMissingSymbol) || !strings.Contains(err.Error(), "nvrtcVersion") {
		t.Errorf("OpenNVRTC of a library without NVRTC's functions = %v, want ErrMissingSymbol naming nvrtcVersion", err)
	}
}

func TestInitFailure(t *testing.T) {
	lib := buildFake(t)
	t.Setenv("FAKECUDA_INIT", "100")
	_, err := Open(lib)
	var e *Error
	if !errors.As(err, &e) || e.Code != ErrorNoDevice || e.Func != "cuInit" || e.Name != "CUDA_ERROR_NO_DEVICE" {
		t.Fatalf("Open with cuInit failing = %v, want cuInit: CUDA_ERROR_NO_DEVICE (100)", err)
	}
	if e.Error() != "cuInit: CUDA_ERROR_NO_DEVICE (100)" {
		t.Errorf("message %q", e.Error())
	}
}

func TestDeviceQueries(t *testing.T) {
	d, _ := openFake(t)
	dev, err := d.Device(0)
	if err != nil {
		t.Fatal(err)
	}
	name, err := dev.Name()
	if err != nil || name != "Fake GPU 9000" {
		t.Errorf("Name = %q, %v", name, err)
	}
	major, minor, err := dev.ComputeCapability()
	if err != nil || major != 8 || minor != 6 {
		t.Errorf("ComputeCapability = %d.%d, %v; want 8.6", major, minor, err)
	}
	if v, err := d.Version(); err != nil || v != "13.0" {
		t.Errorf("Version = %q, %v", v, err)
	}
	if _, err := d.Device(3); err == nil {
		t.Error("Device(3) of a one-device driver succeeded")
	}
}

// TestLaunchArguments sends pointers, an int32, a float32, a float64 and an
// int64 through cuLaunchKernel's void** to a kernel that computes with them,
// and checks the launch geometry the driver saw.
func TestLaunchArguments(t *testing.T) {
	d, c := openFake(t)
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{1, 7, 1021} {
		in := make([]float32, n)
		for i := range in {
			in[i] = float32(r.NormFloat64()) + 3
		}
		pin, err := c.Alloc(4 * n)
		if err != nil {
			t.Fatal(err)
		}
		pout, err := c.Alloc(4 * (n + 1))
		if err != nil {
			t.Fatal(err)
		}
		if err := c.CopyIn(pin, in); err != nil {
			t.Fatal(err)
		}
		if err := c.FillFloat(pout, float32(math.NaN()), n+1); err != nil {
			t.Fatal(err)
		}
		m, err := c.LoadModule([]byte("fake image"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := m.Function("saxpy")
		if err != nil {
			t.Fatal(err)
		}
		if regs, err := f.Attribute(FuncNumRegs); err != nil || regs != 42 {
			t.Errorf("registers = %d, %v; want 42", regs, err)
		}
		a, b, cc := float32(-1.75), 0.5, int64(-3)
		grid, block := Dim3{n, 2, 3}, Dim3{32, 4, 1}
		if err := f.Launch(grid, block, 4096+n, pout, pin, int32(n), a, b, cc); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, n+1)
		if err := c.CopyOut(got, pout); err != nil {
			t.Fatal(err)
		}
		for i := range n {
			want := a*in[i] + float32(b) + float32(cc) + float32(i)
			if got[i] != want {
				t.Fatalf("n=%d: out[%d] = %v, want %v", n, i, got[i], want)
			}
		}
		if !math.IsNaN(float64(got[n])) {
			t.Errorf("n=%d: the kernel wrote past n: out[n] = %v", n, got[n])
		}
		want := [7]uint32{uint32(n), 2, 3, 32, 4, 1, uint32(4096 + n)}
		if seen := lastLaunch(t, d); seen != want {
			t.Errorf("the driver saw grid, block, shared %v; want %v", seen, want)
		}
		c.Free(pin)
		c.Free(pout)
	}
}

// lastLaunch reads the fake's record of the last launch.
func lastLaunch(t *testing.T, d *Driver) [7]uint32 {
	var get func(dims *[7]uint32)
	if err := d.lib.bind(&get, "fake_last_launch"); err != nil {
		t.Fatal(err)
	}
	var dims [7]uint32
	get(&dims)
	return dims
}

func TestErrorsCarryCodeAndName(t *testing.T) {
	_, c := openFake(t)
	m, err := c.LoadModule([]byte("fake image"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		call     func() error
		fn       string
		code     int
		codeName string
		sticky   bool
	}{
		{"alloc zero", func() error { _, err := c.Alloc(0); return err }, "cuMemAlloc_v2", ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE", false},
		{"out of memory", func() error { _, err := c.Alloc(1 << 50); return err }, "cuMemAlloc_v2", ErrorOutOfMemory, "CUDA_ERROR_OUT_OF_MEMORY", false},
		{"unknown kernel", func() error { _, err := m.Function("nope"); return err }, "cuModuleGetFunction", ErrorNotFound, "CUDA_ERROR_NOT_FOUND", false},
		{"bad image", func() error { _, err := c.LoadModule([]byte("garbage")); return err }, "cuModuleLoadData", ErrorInvalidImage, "CUDA_ERROR_200", false},
		{"bad launch", func() error {
			f, err := m.Function("saxpy")
			if err != nil {
				return err
			}
			return f.Launch(Dim3{1, 1, 1}, Dim3{2048, 1, 1}, 0, Ptr(0), Ptr(0), int32(0), float32(0), 0.0, int64(0))
		}, "cuLaunchKernel", ErrorInvalidValue, "CUDA_ERROR_INVALID_VALUE", false},
		{"illegal address", func() error {
			f, err := m.Function("trap")
			if err != nil {
				return err
			}
			if err := f.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0); err != nil {
				return err
			}
			return c.Synchronize()
		}, "cuCtxSynchronize", ErrorIllegalAddress, "CUDA_ERROR_ILLEGAL_ADDRESS", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("err = %v, want an *Error", err)
			}
			if e.Func != tt.fn || e.Code != tt.code || e.Name != tt.codeName {
				t.Errorf("err = %+v, want %s: %s (%d)", e, tt.fn, tt.codeName, tt.code)
			}
			if !strings.Contains(err.Error(), tt.codeName) {
				t.Errorf("message %q does not name %s", err, tt.codeName)
			}
			if IsSticky(err) != tt.sticky {
				t.Errorf("IsSticky = %v, want %v", !tt.sticky, tt.sticky)
			}
		})
	}
}

func TestLaunchRejectsNonScalar(t *testing.T) {
	_, c := openFake(t)
	m, err := c.LoadModule([]byte("fake image"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := m.Function("saxpy")
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "int") {
			t.Errorf("Launch with a Go int did not panic naming its type: %v", r)
		}
	}()
	f.Launch(Dim3{1, 1, 1}, Dim3{1, 1, 1}, 0, 5) // int has no fixed C size
}

func TestNVRTCPaths(t *testing.T) {
	t.Setenv("CUDA_HOME", "/opt/cuda-x")
	paths := NVRTCPaths()
	if paths[0] != "/opt/cuda-x/lib64/libnvrtc.so.13" {
		t.Errorf("first path %q, want CUDA_HOME's lib64 and the newest soname", paths[0])
	}
	if last := paths[len(paths)-1]; last != "libnvrtc.so.11.2" {
		t.Errorf("last path %q, want the bare oldest soname (the loader's path)", last)
	}
}

// TestCopyBytes copies an odd number of bytes, as a buffer of 16-bit
// elements can be, to the device and back, beside a poisoned word.
func TestCopyBytes(t *testing.T) {
	_, c := openFake(t)
	p, err := c.Alloc(12)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(p)
	if err := c.Fill(p, 0xffffffff, 3); err != nil {
		t.Fatal(err)
	}
	in := []byte{1, 2, 3, 4, 5, 6, 7}
	if err := c.CopyInBytes(p, in); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 12)
	if err := c.CopyOutBytes(got, p); err != nil {
		t.Fatal(err)
	}
	if want := []byte{1, 2, 3, 4, 5, 6, 7, 0xff, 0xff, 0xff, 0xff, 0xff}; string(got) != string(want) {
		t.Errorf("device holds % x, want % x", got, want)
	}
}
