package peak

// fma16 runs steps steps of acc[i] += x·y for every chain i on Z registers
// (AVX-512F): 12 VFMADD231PS a step.
//
//go:noescape
func fma16(steps int, x, y float32, acc *[Chains][16]float32)

// fma8 is fma16 on Y registers (AVX2 and FMA).
//
//go:noescape
func fma8(steps int, x, y float32, acc *[Chains][8]float32)

// dot16 runs steps steps of acc[i] += the products of the bf16 pairs x and
// y, summed, for every chain i on Z registers (AVX512-BF16): 12 VDPBF16PS
// a step.
//
//go:noescape
func dot16(steps int, x, y uint32, acc *[Chains][16]float32)
