// Package goasm emits Go assembly for amd64: register-tiled outer-product
// micro-kernels, the inner loops of GEMM and of attention's two products,
// and a vector e^x, for templates whose archsimd Go the compiler cannot
// keep in registers.
//
// Why assembly: Go 1.26 gives archsimd code about 15 vector registers, and
// its MulAdd overwrites a multiplicand, not the accumulator, so a tile of
// accumulators costs a register move per fused multiply-add and spills
// beyond a 4×2-vector tile (gemm's package doc has the measurements). Here
// every tile uses the registers it is given, VFMADD231PS accumulates in
// place, and a 12×2 tile of Float32x16 holds its 24 accumulators in
// Z registers for the whole loop. The functions follow ABI0 (arguments on
// the stack, NOSPLIT, no frame) and end in VZEROUPPER, so the SSE code the
// caller runs next (math.Exp) pays no transition penalty.
//
// A Tile describes one micro-kernel; Tile.Decl is its Go declaration
// (//go:noescape, for the kernel's Go file) and File renders the .s file of
// a kernel's tiles. Strides are constants baked into the addressing, or,
// for shape-generic kernels, arguments (Runtime): the rows of a tile are
// then addressed as a base plus one of six odd multiples of the stride
// times a scale of 1, 2, 4 or 8, computed once per call. A Tile with
// Tiles computes a column of such tiles in one call, a and c moving down MR
// rows from one to the next (gemm's tiles of a strip of B), so that a small
// product pays no call per tile. The assembly reads and writes memory without bounds
// checks: the Go caller checks the slices, and the generated kernels are
// checked against a float64 reference like every other.
//
// Half is the assembly of golang.Half's conversions between float32 and
// bf16 or f16, eight elements at a time. Reg16 is the same conversions
// as instructions on registers, for rows that load and store 16-bit
// elements and compute in float32 (softmax's and RMSNorm's
// convert=reg): widening loads, word moves for AVX2's partial vectors,
// and stores rounded to nearest even, bit for bit package dtype's.
// Pairs interleaves two rows of bf16 into the pairs a Dot tile reads
// from B, 16 at a time (gemm's convert=dot).
//
// Exp is e^x for x ≤ 0 as instructions on registers, for a template that
// writes the rest of its loop itself (softmax's rows): the operations of
// codegen/golang's polynomial exp on the same constants
// (golang.ExpConsts), which stay in registers for the whole loop (or, where
// AVX2's 16 registers are short, the last of them in a table of vectors
// in memory, Exp.Table), so that the two give the same bits (TestExp) and
// the assembly inherits the error golang measures. On softmax's rows of 1024 floats (a 2-vCPU Zen 4,
// L2-resident rows, one goroutine) the archsimd Go, which spills its 10
// constants and 4 unrolled vectors past Go's 15 vector registers, took
// 1.11 µs a row, and the same three passes in assembly 0.25 µs. Header
// starts every .s file of generated kernels.
package goasm
