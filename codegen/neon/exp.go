package neon

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// Exp emits e^x in float32 for x ≤ 0 on 4-lane vectors: the operations of
// codegen/golang's polynomial exp of the same degree (and of
// codegen/goasm.Exp), in the same order, fused where they fuse, on the
// same constants (golang.ExpConsts), so that the three give the same bits.
// Its constants live in the vector registers from First on, set once by
// Load.
type Exp struct {
	Degree int // 4 or 5
	First  int // the first of the Regs registers that hold the constants
}

// Regs returns the number of vector registers the constants take.
func (e Exp) Regs() int { return len(golang.ExpConsts(e.Degree)) }

// konst returns the register number of the constant named name.
func (e Exp) konst(name string) int {
	for i, c := range golang.ExpConsts(e.Degree) {
		if c.Name == name {
			return e.First + i
		}
	}
	panic(fmt.Sprintf("neon: exp of degree %d has no constant %s", e.Degree, name))
}

// Load returns the instructions that set every lane of the constants'
// registers, through the general register tmp.
func (e Exp) Load(tmp string) []string {
	var out []string
	for i, c := range golang.ExpConsts(e.Degree) {
		out = append(out,
			fmt.Sprintf("MOVW $0x%08x, %s // %s = %g", math.Float32bits(c.Val), tmp, c.Name, c.Val),
			fmt.Sprintf("VDUP %s, %s", tmp, reg(e.First+i)))
	}
	return out
}

// Emit returns the instructions that compute e^x for vector register x,
// clobbering x (it ends as the reduced argument r), k, p and t, and the
// register that holds the result: p or t. The four are distinct and none
// holds a constant. NEON's FMLA only accumulates into its destination, so
// the polynomial's steps p·x + c alternate between p and t. As in
// golang.Exp.Emit:
//
//	x = max(x, expMin)
//	k = x·log2e + expShift        n+127 in k's low mantissa bits
//	p = k - expShift              n
//	x = p·(-ln2 hi) + x, x = p·(-ln2 lo) + x   r
//	p = x·c_d + c_(d-1), then p = p·x + c_i down to c0
//	p = p · (k << 23)             2^n from the exponent bits
func (e Exp) Emit(x, k, p, t int) (lines []string, result int) {
	c := func(i int) int { return e.konst(fmt.Sprintf("expC%d", i)) }
	mov := func(src, dst int) string { return fmt.Sprintf("VMOV V%d.B16, V%d.B16", src, dst) }
	fmla := func(m, n, d int) string { return fmt.Sprintf("VFMLA %s, %s, %s", reg(m), reg(n), reg(d)) } // d += n·m
	shift := e.konst("expShift")
	lines = []string{
		FMAX.Word(x, x, e.konst("expMin")),
		mov(shift, k),
		fmla(e.konst("expLog2e"), x, k),
		FSUB.Word(p, k, shift),
		fmla(e.konst("expNegLn2Hi"), p, x),
		fmla(e.konst("expNegLn2Lo"), p, x),
		mov(c(e.Degree-1), p),
		fmla(c(e.Degree), x, p),
	}
	for i := e.Degree - 2; i >= 0; i-- {
		lines = append(lines, mov(c(i), t), fmla(x, p, t))
		p, t = t, p
	}
	return append(lines,
		fmt.Sprintf("VSHL $23, %s, %s", reg(k), reg(k)),
		FMUL.Word(p, p, k)), p
}
