package driver

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
)

// openFakeCUBLAS opens the fake cuBLAS beside the fake driver's current
// context and creates a handle.
func openFakeCUBLAS(t *testing.T) (*CUBLAS, *CUBLASHandle, *Context) {
	t.Helper()
	_, c := openFake(t)
	b, err := OpenCUBLAS(buildLib(t, "fakecublas.c", "libcublas.so.13"))
	if err != nil {
		t.Fatal(err)
	}
	h, err := b.Create()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Destroy() })
	return b, h, c
}

// lastSgemm reads the fake's record of the last cublasSgemm_v2 call.
func lastSgemm(t *testing.T, b *CUBLAS) [14]int64 {
	var get func(out *[14]int64)
	if err := b.lib.bind(&get, "fake_last_sgemm"); err != nil {
		t.Fatal(err)
	}
	var call [14]int64
	get(&call)
	return call
}

// TestGemmRowMajor multiplies row-major matrices of three different
// extents through the column-major fake and compares C with a float64
// product of the row-major A and B, and checks what cuBLAS was asked.
func TestGemmRowMajor(t *testing.T) {
	b, h, c := openFakeCUBLAS(t)
	r := rand.New(rand.NewPCG(3, 4))
	for _, s := range [][3]int{{3, 5, 7}, {1, 9, 2}, {17, 4, 33}} {
		m, n, k := s[0], s[1], s[2]
		a, bm := make([]float32, m*k), make([]float32, k*n)
		for i := range a {
			a[i] = float32(r.NormFloat64())
		}
		for i := range bm {
			bm[i] = float32(r.NormFloat64())
		}
		pa, pb, pc := devCopy(t, c, a), devCopy(t, c, bm), devCopy(t, c, make([]float32, m*n))
		if err := c.FillFloat(pc, float32(math.NaN()), m*n); err != nil {
			t.Fatal(err)
		}
		if err := h.GemmRowMajor(m, n, k, pa, pb, pc); err != nil {
			t.Fatal(err)
		}
		got := make([]float32, m*n)
		if err := c.CopyOut(got, pc); err != nil {
			t.Fatal(err)
		}
		for i := range m {
			for j := range n {
				var want float64
				for p := range k {
					want += float64(a[i*k+p]) * float64(bm[p*n+j])
				}
				if d := math.Abs(float64(got[i*n+j]) - want); !(d <= 1e-5*(1+math.Abs(want))) {
					t.Fatalf("%dx%dx%d: C[%d][%d] = %v, want %v", m, n, k, i, j, got[i*n+j], want)
				}
			}
		}
		// Cᵀ = Bᵀ·Aᵀ: m and n swapped, B first with leading dimension n,
		// A second with k, C with n; alpha 1, beta 0; the default stream.
		want := [14]int64{0, 0, int64(n), int64(m), int64(k), int64(n), int64(k), int64(n),
			int64(pb), int64(pa), int64(pc), int64(math.Float32bits(1)), 0, 0}
		if call := lastSgemm(t, b); call != want {
			t.Errorf("%dx%dx%d: cublasSgemm_v2 got %v, want %v", m, n, k, call, want)
		}
		for _, p := range []Ptr{pa, pb, pc} {
			c.Free(p)
		}
	}
}

func devCopy(t *testing.T, c *Context, x []float32) Ptr {
	t.Helper()
	p, err := c.Alloc(4 * len(x))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.CopyIn(p, x); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCUBLASErrors(t *testing.T) {
	_, h, _ := openFakeCUBLAS(t)
	// A leading dimension below the rows is cuBLAS's INVALID_VALUE: a
	// negative extent makes one.
	err := h.GemmRowMajor(2, -1, 2, 0, 0, 0)
	var e *Error
	if !errors.As(err, &e) || e.Func != "cublasSgemm_v2" || e.Name != "CUBLAS_STATUS_INVALID_VALUE" || e.Code != 7 {
		t.Errorf("GemmRowMajor with n = -1: %v, want cublasSgemm_v2: CUBLAS_STATUS_INVALID_VALUE (7)", err)
	}

	lib := buildLib(t, "fakecublas.c", "libcublas.so.12")
	t.Setenv("FAKECUBLAS_CREATE", "3")
	b, err := OpenCUBLAS(lib)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Create(); err == nil || err.Error() != "cublasCreate_v2: CUBLAS_STATUS_ALLOC_FAILED (3)" {
		t.Errorf("Create failing = %v, want cublasCreate_v2: CUBLAS_STATUS_ALLOC_FAILED (3)", err)
	}
}

func TestOpenCUBLASMissing(t *testing.T) {
	_, err := OpenCUBLAS(filepath.Join(t.TempDir(), "libcublas.so.13"))
	if !errors.Is(err, ErrNoCUBLAS) || !strings.Contains(err.Error(), "cuBLAS") {
		t.Errorf("OpenCUBLAS of a missing library = %v, want an error wrapping ErrNoCUBLAS", err)
	}
	// The fake driver has none of cuBLAS's functions.
	_, err = OpenCUBLAS(buildFake(t))
	if !errors.Is(err, ErrMissingSymbol) || !strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("OpenCUBLAS of a library without cuBLAS = %v, want ErrMissingSymbol naming cublasCreate_v2", err)
	}
	t.Setenv("CUDA_HOME", "/opt/cuda-x")
	if p := CUBLASPaths(); p[0] != "/opt/cuda-x/lib64/libcublas.so.13" || p[len(p)-1] != "libcublas.so.11" {
		t.Errorf("CUBLASPaths = %v, want CUDA_HOME's lib64 and the newest soname first, the bare oldest last", p)
	}
}
