package emu

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/cuda"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

// halfKernel runs every conversion of codegen/cuda's HalfHelpers on words
// of in (float32 bits) and writes the results as words: out[j] the scalar
// narrowing of in[j]; out[n+j/2] the pair narrowing of in[j], in[j+1] for
// even j; then, for each 16-bit pattern h, the widening of h and the pair
// widening of the word h | ^h<<16.
const halfKernel = `
extern "C" __global__ void k(unsigned *out, const unsigned *in) {
	constexpr int N = %d;
	const int j = blockIdx.x * blockDim.x + threadIdx.x;
	if (j < N) {
		out[j] = at_float_to_T(__uint_as_float(in[j]));
		if (j %% 2 == 0) out[N + j / 2] = at_float2_to_Tx2(__uint_as_float(in[j]), __uint_as_float(in[j + 1]));
	}
	if (j < 65536) {
		unsigned *o = out + N + N / 2;
		o[j] = __float_as_uint(at_T_to_float((unsigned short)j));
		const float2 f = at_Tx2_to_float2((unsigned)j | (~(unsigned)j << 16));
		o[65536 + 2 * j] = __float_as_uint(f.x);
		o[65536 + 2 * j + 1] = __float_as_uint(f.y);
	}
}
`

// halfSource is halfKernel for dt with n inputs, after the helpers.
func halfSource(dt dtype.DType, n int) string {
	return cuda.HalfHelpers(dt) + strings.ReplaceAll(fmt.Sprintf(halfKernel, n), "_T", "_"+string(dt))
}

// halfInputs are the float32 values the narrowing is checked on: every
// value of dt, each tie between two neighbours of the same sign and the
// floats just either side of it, specials, and random bit patterns.
func halfInputs(dt dtype.DType, r *rand.Rand) []uint32 {
	var x []uint32
	add := func(v float32) { x = append(x, math.Float32bits(v)) }
	for h := range 1 << 16 {
		add(dt.Decode(uint16(h)))
		lo, hi := dt.Decode(uint16(h)), dt.Decode(uint16(h+1))
		if h&0x7fff == 0x7fff || math.IsInf(float64(hi), 0) || math.IsNaN(float64(hi)) || math.IsInf(float64(lo), 0) || math.IsNaN(float64(lo)) {
			continue
		}
		mid := float32((float64(lo) + float64(hi)) / 2) // exact: one more bit than dt has
		add(mid)
		add(math.Nextafter32(mid, float32(math.Inf(1))))
		add(math.Nextafter32(mid, float32(math.Inf(-1))))
	}
	for _, v := range []float64{math.Inf(1), math.Inf(-1), math.MaxFloat32, -math.MaxFloat32, 65504, 65519.996, 65520, 1e-45, 0x1p-25, 0x1p-25 * 1.0000001} {
		add(float32(v))
	}
	x = append(x, 0x7f800001, 0xffc00000, 0x7fbfffff, 0x7fffffff, 0x80000000)
	for range 20000 {
		x = append(x, r.Uint32())
	}
	if len(x)%2 == 1 {
		x = append(x, 0x3f800000)
	}
	return x
}

// TestHalfHelpers checks the emulator's conversions of codegen/cuda's
// HalfHelpers bit for bit against package dtype: on every 16-bit pattern
// and on ties, for bf16 and f16, in the scalar and the pair forms (the
// element at the lower address is the word's low half).
func TestHalfHelpers(t *testing.T) {
	c := checker(t, false)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			in := halfInputs(dt, rand.New(rand.NewPCG(1, 2)))
			n := len(in)
			src := halfSource(dt, n)
			outLen := n + n/2 + 3*65536
			out := emulateWords(t, c, src, (max(n, 65536)+255)/256, in, outLen)
			bad := 0
			fail := func(format string, args ...any) {
				if bad++; bad <= 10 {
					t.Errorf(format, args...)
				}
			}
			for j, b := range in {
				x := math.Float32frombits(b)
				if want := dt.Encode(x); uint16(out[j]) != want || out[j]>>16 != 0 {
					fail("at_float_to_%s(%#08x = %g) = %#04x, want %#04x", dt, b, x, out[j], want)
				}
				if j%2 == 0 {
					want := uint32(dt.Encode(x)) | uint32(dt.Encode(math.Float32frombits(in[j+1])))<<16
					if got := out[n+j/2]; got != want {
						fail("at_float2_to_%sx2(%#08x, %#08x) = %#08x, want %#08x", dt, b, in[j+1], got, want)
					}
				}
			}
			o := out[n+n/2:]
			for h := range 1 << 16 {
				if want := math.Float32bits(dt.Decode(uint16(h))); o[h] != want {
					fail("at_%s_to_float(%#04x) = %#08x, want %#08x", dt, h, o[h], want)
				}
				lo, hi := math.Float32bits(dt.Decode(uint16(h))), math.Float32bits(dt.Decode(^uint16(h)))
				if o[65536+2*h] != lo || o[65536+2*h+1] != hi {
					fail("at_%sx2_to_float2(%#08x) = %#08x, %#08x; want %#08x, %#08x", dt, uint32(h)|uint32(^uint16(h))<<16, o[65536+2*h], o[65536+2*h+1], lo, hi)
				}
			}
			if bad > 10 {
				t.Errorf("... %d wrong in all", bad)
			}
		})
	}
}

// TestHalfHelpersPTX compiles the helpers, whose GPU forms are inline PTX,
// for each architecture the CUDA targets have.
func TestHalfHelpersPTX(t *testing.T) {
	c := checker(t, true)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		for _, arch := range []string{"sm_70", "sm_80", "sm_90"} {
			k := kernels.CUDAKernel{Source: halfSource(dt, 64), Entry: "k", Grid: [3]int{1, 1, 1}, Block: [3]int{64, 1, 1}}
			ptx, err := PTX(context.Background(), c.Clang, k, arch, t.TempDir())
			if err != nil {
				t.Fatalf("%s %s: %v", dt, arch, err)
			}
			// sm_80 and later narrow with cvt; sm_70 has it for f16 only.
			for _, want := range []string{"cvt.rn." + string(dt) + ".f32", "cvt.rn." + string(dt) + "x2.f32"} {
				if has := strings.Contains(string(ptx), want); has != (arch != "sm_70" || dt == dtype.F16 && !strings.Contains(want, "x2")) {
					t.Errorf("%s %s: PTX has %s: %v", dt, arch, want, has)
				}
			}
		}
	}
}

// emulateWords runs kernel k of src on blocks of 256 threads, with in as
// its input and an output of n words, in one order, and returns the
// output's words.
func emulateWords(t *testing.T, c *Checker, src string, blocks int, in []uint32, n int) []uint32 {
	t.Helper()
	dir := t.TempDir()
	k := kernels.CUDAKernel{Source: src, Entry: "k", Grid: [3]int{blocks, 1, 1}, Block: [3]int{256, 1, 1}}
	lib, err := Build(context.Background(), c.CXX, k, "sm_80", dir)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 0, 4*len(in))
	for _, w := range in {
		b = binary.LittleEndian.AppendUint32(b, w)
	}
	if err := os.WriteFile(filepath.Join(dir, inputFile(0)), b, 0o644); err != nil {
		t.Fatal(err)
	}
	j := job{Lib: lib, Grid: k.Grid, Block: k.Block, Dir: dir, InLens: []int{len(in)}, OutLen: n, ElemSize: 4, Orders: Orders[:1]}
	r, failure, err := c.runWorker(context.Background(), j)
	if err != nil || failure != "" || r.Error != "" || r.Wrote != "" {
		t.Fatalf("emulating: %v %s %s %s", err, failure, r.Error, r.Wrote)
	}
	b, err = readFile(filepath.Join(dir, outputFile(0)), n, 4)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]uint32, n)
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out
}
