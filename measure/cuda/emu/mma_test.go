package emu

import (
	"context"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/cuda"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// mmaKernel multiplies a 16x16 A by a 16x16 B (row-major, 16-bit
// elements two to a word of in, A first) on one warp's tensor cores, as
// a GEMM kernel does: both into shared memory, A's fragments by ldmatrix,
// B's by ldmatrix.trans, two mma of n8; warp 0 writes C (16x16 float
// bits). The other warps do the same and write nothing. PLANT is where a
// test plants a wrong assumption about the fragment layouts.
const mmaKernel = `
extern "C" __global__ void k(unsigned *out, const unsigned *in) {
	// Rows of 24 elements: 48 bytes, so that every row address ldmatrix
	// takes is 16-byte aligned.
	__shared__ __align__(16) unsigned short as[16][24], bs[16][24];
	const unsigned short *const h = reinterpret_cast<const unsigned short *>(in);
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
	if (warp == 0)
		for (int i = lane; i < 256; i += 32) {
			as[i / 16][i % 16] = h[i];
			bs[i / 16][i % 16] = h[256 + i];
		}
	__syncthreads();
	// Lanes 8i..8i+7 give the rows of matrix i: A's (rows 0-7, columns
	// 0-7), (8-15, 0-7), (0-7, 8-15), (8-15, 8-15); B's the same in k x n.
	unsigned a[4], b[4];
	at_ldmatrix_x4(a, &as[lane % 16][lane / 16 * 8]);
	at_ldmatrix_x4_trans(b, &bs[lane % 16][lane / 16 * 8]);
	PLANT
	unsigned b0[2] = {b[0], b[1]}, b1[2] = {b[2], b[3]};
	float d0[4] = {0.f, 0.f, 0.f, 0.f}, d1[4] = {0.f, 0.f, 0.f, 0.f};
	at_mma(d0, a, b0);
	at_mma(d1, a, b1);
	if (warp == 0) {
		const int g = lane / 4, t = lane % 4;
		for (int i = 0; i < 4; ++i) {
			const int row = g + (i >= 2 ? 8 : 0), col = 2 * t + (i & 1);
			out[row * 16 + col] = __float_as_uint(d0[i]);
			out[row * 16 + 8 + col] = __float_as_uint(d1[i]);
		}
	}
}
`

// mmaPlants are wrong fragment layouts a kernel might assume.
var mmaPlants = map[string]string{
	"A's middle registers swapped":          "{ const unsigned s = a[1]; a[1] = a[2]; a[2] = s; }",
	"B row-major (ldmatrix without .trans)": "at_ldmatrix_x4(b, &bs[lane % 16][lane / 16 * 8]);",
	"B's halves of k swapped":               "{ unsigned s = b[0]; b[0] = b[1]; b[1] = s; s = b[2]; b[2] = b[3]; b[3] = s; }",
}

func mmaSource(dt dtype.DType, plant string) string {
	return cuda.MMAHelpers(dt) + strings.Replace(mmaKernel, "PLANT", plant, 1)
}

// emulateMMA runs the kernel with A and B of random values of dt and
// returns C and the float64 product.
func emulateMMA(t *testing.T, c *Checker, dt dtype.DType, plant string) (got []float32, want []float64) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := make([]uint16, 512)
	for i := range vals {
		vals[i] = dt.Encode(float32(r.NormFloat64()))
	}
	in := make([]uint32, 256)
	for i := range in {
		in[i] = uint32(vals[2*i]) | uint32(vals[2*i+1])<<16
	}
	out := emulateWords(t, c, mmaSource(dt, plant), 1, in, 256)
	got = make([]float32, 256)
	want = make([]float64, 256)
	for i := range 16 {
		for j := range 16 {
			got[i*16+j] = math.Float32frombits(out[i*16+j])
			for k := range 16 {
				want[i*16+j] += float64(dt.Decode(vals[i*16+k])) * float64(dt.Decode(vals[256+k*16+j]))
			}
		}
	}
	return got, want
}

// mmaWrong counts the elements of got off want by more than float's
// rounding of a 16-term sum.
func mmaWrong(got []float32, want []float64) int {
	n := 0
	for i := range got {
		if math.Abs(float64(got[i])-want[i]) > 1e-5*(1+math.Abs(want[i])) {
			n++
		}
	}
	return n
}

// TestMMA checks the emulated ldmatrix and mma.sync against a float64
// product, and that kernels assuming wrong fragment layouts (planted)
// compute a wrong one: the emulator hands each lane the elements the PTX
// ISA's layouts give it, as a GPU does.
func TestMMA(t *testing.T) {
	c := checker(t, false)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		got, want := emulateMMA(t, c, dt, "")
		if n := mmaWrong(got, want); n > 0 {
			t.Errorf("%s: %d of 256 elements of C wrong, e.g. C[0][0] = %g, want %g", dt, n, got[0], want[0])
		}
		for name, plant := range mmaPlants {
			got, want := emulateMMA(t, c, dt, plant)
			if n := mmaWrong(got, want); n < 64 {
				t.Errorf("%s, %s: only %d of 256 elements of C wrong; the emulator misses the wrong layout", dt, name, n)
			}
		}
	}
}

// TestMMAPTX compiles the helpers, inline PTX on a GPU, for each
// architecture with tensor cores of bf16 and f16.
func TestMMAPTX(t *testing.T) {
	c := checker(t, true)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_80", "sm_86", "sm_90"} {
			k := kernels.CUDAKernel{Source: mmaSource(dt, ""), Entry: "k", Grid: [3]int{1, 1, 1}, Block: [3]int{32, 1, 1}}
			ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
			if err != nil {
				t.Fatalf("%s %s: %v", dt, arch, err)
			}
			for _, want := range []string{"mma.sync.aligned.m16n8k16.row.col.f32." + string(dt) + "." + string(dt) + ".f32",
				"ldmatrix.sync.aligned.m8n8.x4.shared.b16", "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"} {
				if !strings.Contains(string(ptx), want) {
					t.Errorf("%s %s: the PTX has no %s", dt, arch, want)
				}
			}
		}
	}
}
