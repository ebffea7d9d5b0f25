// Package golang is what every Go emitter of autotune shares: the file
// header and rendering, float32 vector code at each archsimd width, loops
// over a row with vector tails, and a vectorised e^x.
//
// Templates (kernels/<op>) build Go source with jennifer. A candidate file
// starts with NewFile, which writes the "Code generated … DO NOT EDIT."
// header tools recognise, and ends with Render, which formats it and, when
// an emitter wrote something that does not parse, returns the source with
// line numbers so that the go/format error can be found.
//
// F32 writes the same float32 operation for 1 lane (plain Go), 8 lanes
// (archsimd.Float32x8: AVX2 and FMA) or 16 lanes (archsimd.Float32x16:
// AVX-512), so a template's vec knob is one emitter, not three. Generated
// code that uses archsimd builds only with GOEXPERIMENT=simd on amd64; the
// tuner's builds set it, and templates make the widths a target lacks
// invalid in their space. F32.Goroutine writes the function a kernel hands
// to a new goroutine; in vector code it ends with
// archsimd.ClearAVXUpperBits(), since archsimd code leaves the upper halves
// of the vector registers dirty and scalar Go that runs next on that
// thread is then several times slower. Sweep writes the loops over a row whose length is
// a compile-time constant: an unrolled loop, a loop of single vectors, and
// one partial vector (LoadPart, StorePart) instead of a scalar tail, which
// measured 1.25× slower for softmax rows of 1023 floats.
//
// Half writes the conversions between float32 and the 16-bit dtypes (bf16,
// f16) that kernels storing their elements in 16 bits use, bit for bit
// those of package dtype, with whole vectors in Go assembly (goasm.Half)
// where the kernel's level has AVX2. HalfRows writes the rows function of
// a row-wise kernel of bf16 or f16: blocks of rows decoded into float32
// scratch, computed by the float32 rows, encoded back.
//
// RowSplit writes how a row-wise kernel (softmax, the norms) deals its
// rows to goroutines: chunks of rows round-robin, the caller one of the
// goroutines, and no more goroutines than chunks in shape-generic code.
//
// Exp writes e^x in float32 for x ≤ 0, the range softmax and attention
// need. Go keeps vector constants in registers only when they are declared
// outside loops (it does not hoist them, and it allocates 15 vector
// registers), so Exp gives its constants (Consts) apart from its statements
// (Emit). The variants, and their largest relative error over a sweep of
// 8388611 points of [-87.3, 0] against math.Exp (TestExpError):
//
//	degree  method                                 scalar    Float32x8  Float32x16
//	0       math.Exp in float64, rounded           5.96e-8   5.96e-8    5.96e-8
//	4       range reduction + degree-4 minimax     2.70e-6   2.69e-6    2.69e-6
//	5       range reduction + degree-5 minimax     2.24e-7   2.01e-7    2.01e-7
//
// Scalar code is less accurate at degree 5 because Go does not fuse its
// multiply-adds (below GOAMD64=v3). A degree-3 polynomial would be off by
// 7.5e-5, too coarse for a float32 softmax tolerance (codegen/goasm has
// one, in base 2, for results rounded to bf16 or f16), and degree 6 gains
// nothing over degree 5 once float32 rounding dominates. The polynomial
// variants give exactly 0 below about -87.7 (and for -Inf), never NaN; x above
// 88 is outside their domain.
package golang
