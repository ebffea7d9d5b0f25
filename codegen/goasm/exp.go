package goasm

import (
	"fmt"
	"math"
	"strings"

	"github.com/autotune-dev/autotune/codegen/golang"
)

// Exp emits e^x in float32 for x ≤ 0, one vector at a time: the
// operations of codegen/golang's polynomial exp of the same degree, in the
// same order and on the same constants (golang.ExpConsts), so that the two
// give the same bits and share its measured error. Its constants live in
// vector registers from First on, loaded once by Load, so that a loop of
// exps reads no memory but its arguments. Where registers are short (AVX2
// has 16), Table keeps the last constants in memory instead, whole vectors
// that the instructions read as operands (AVX2 has no broadcast operand).
type Exp struct {
	Lanes  int // 8: Y registers (AVX2 and FMA); 16: Z registers (AVX-512)
	Degree int // 4 or 5; 3 for 16-bit results (Emit)
	First  int // the first of the Regs registers that hold the constants
	// Table, when set, is the file-local symbol (name<>) of the constants
	// past the first InRegs, which Data defines; when empty, every
	// constant is in a register.
	Table  string
	InRegs int
}

// Regs returns the number of vector registers the constants take.
func (e Exp) Regs() int {
	if e.Table != "" {
		return min(e.InRegs, len(golang.ExpConsts(e.Degree)))
	}
	return len(golang.ExpConsts(e.Degree))
}

// reg returns the vector register n at e's width.
func (e Exp) reg(n int) string { return vreg(e.Lanes, n) }

// vreg returns vector register n of vectors of lanes float32s.
func vreg(lanes, n int) string {
	if lanes == 16 {
		return fmt.Sprintf("Z%d", n)
	}
	return fmt.Sprintf("Y%d", n)
}

// konst returns the operand of the constant named name: its register, or
// its vector in Table.
func (e Exp) konst(name string) string {
	for i, c := range golang.ExpConsts(e.Degree) {
		if c.Name == name {
			if i >= e.Regs() {
				return fmt.Sprintf("%s+%d(SB)", e.Table, 4*e.Lanes*(i-e.Regs()))
			}
			return e.reg(e.First + i)
		}
	}
	panic(fmt.Sprintf("goasm: exp of degree %d has no constant %s", e.Degree, name))
}

// Load returns the instructions that broadcast the constants into their
// registers, through AX and the low lanes of each register.
func (e Exp) Load() []string {
	var out []string
	for i, c := range golang.ExpConsts(e.Degree)[:e.Regs()] {
		r := e.First + i
		out = append(out,
			fmt.Sprintf("MOVL $0x%08x, AX // %s = %g", math.Float32bits(c.Val), c.Name, c.Val),
			fmt.Sprintf("VMOVD AX, X%d", r),
			fmt.Sprintf("VPBROADCASTD X%d, %s", r, e.reg(r)))
	}
	return out
}

// Data returns the definition of Table: the constants not in registers,
// each repeated in every lane, in the order of golang.ExpConsts; nil when
// every constant is in a register.
func (e Exp) Data() []string {
	consts := golang.ExpConsts(e.Degree)[e.Regs():]
	if len(consts) == 0 {
		return nil
	}
	var out []string
	for i, c := range consts {
		for l := range e.Lanes {
			out = append(out, fmt.Sprintf("DATA %s+%d(SB)/4, $0x%08x // %s = %g", e.Table, 4*(e.Lanes*i+l), math.Float32bits(c.Val), c.Name, c.Val))
		}
	}
	return append(out, fmt.Sprintf("GLOBL %s(SB), RODATA|NOPTR, $%d", e.Table, 4*e.Lanes*len(consts)))
}

// Emit returns the instructions that set register p to e^x for register
// x, clobbering x (it ends as the reduced argument r) and k; the three are
// distinct and none holds a constant. As in golang.Exp.Emit:
//
//	x = max(x, expMin)
//	k = x·log2e + expShift        n+127 in k's low mantissa bits
//	p = k - expShift              n
//	x = p·(-ln2 hi) + x, x = p·(-ln2 lo) + x   r
//	p = x·c_d + c_(d-1), then p = p·x + c_i down to c0
//	p = p · (k << 23)             2^n from the exponent bits
//
// Degree 3, which golang.Exp has not, reduces in base 2 instead: x =
// x·log2e - p, one fused multiply-subtract, is f in [-1/2, 1/2] and the
// polynomial is 2^f's (golang.ExpConsts). Two instructions fewer than
// degree 4, for an error of about 8e-5 (TestExpDegree3): for results that
// are rounded to bf16 or f16.
func (e Exp) Emit(x, k, p string) []string {
	c := func(i int) string { return e.konst(fmt.Sprintf("expC%d", i)) }
	// mov copies a constant: VMOVAPS, or VMOVUPS from Table, whose
	// vectors the linker need not align.
	mov := func(src, dst string) string {
		if strings.HasSuffix(src, "(SB)") {
			return fmt.Sprintf("VMOVUPS %s, %s", src, dst)
		}
		return fmt.Sprintf("VMOVAPS %s, %s", src, dst)
	}
	shift := e.konst("expShift")
	out := []string{
		fmt.Sprintf("VMAXPS %s, %s, %s", e.konst("expMin"), x, x),
		mov(shift, k),
		fmt.Sprintf("VFMADD231PS %s, %s, %s", e.konst("expLog2e"), x, k),
		fmt.Sprintf("VSUBPS %s, %s, %s", shift, k, p),
	}
	if e.Degree == 3 {
		// f = x·log2e - n in one rounding, the reduced argument of 2^f.
		// The middle operand of the FMA takes no memory: log2e is the
		// second constant, in a register unless InRegs is below 2.
		log2e := e.konst("expLog2e")
		if strings.HasSuffix(log2e, "(SB)") {
			panic("goasm: the degree-3 exp needs log2e in a register (InRegs ≥ 2)")
		}
		out = append(out, fmt.Sprintf("VFMSUB213PS %s, %s, %s", p, log2e, x))
	} else {
		out = append(out,
			fmt.Sprintf("VFMADD231PS %s, %s, %s", e.konst("expNegLn2Hi"), p, x),
			fmt.Sprintf("VFMADD231PS %s, %s, %s", e.konst("expNegLn2Lo"), p, x))
	}
	out = append(out,
		mov(c(e.Degree-1), p),
		fmt.Sprintf("VFMADD231PS %s, %s, %s", c(e.Degree), x, p))
	for i := e.Degree - 2; i >= 0; i-- {
		out = append(out, fmt.Sprintf("VFMADD213PS %s, %s, %s", c(i), x, p))
	}
	return append(out,
		fmt.Sprintf("VPSLLD $23, %s, %s", k, k),
		fmt.Sprintf("VMULPS %s, %s, %s", k, p, p))
}
