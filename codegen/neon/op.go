package neon

import "fmt"

// An Op is a vector instruction on 4-lane float32 vectors that Go's arm64
// assembler lacks: its name and the encoding of its three-register form
// (Rm at bit 16, Rn at bit 5, Rd at bit 0) with the registers zero.
type Op struct {
	Name string
	Bits uint32
}

// The Ops the kernels use, each Vd.4S = op(Vn.4S, Vm.4S). The pairwise
// forms (FADDP, FMAXP) work on the pairs of Vn then of Vm, so that two of
// them with the same register as n and m leave the sum or maximum of its
// four lanes in every lane.
var (
	FADD  = Op{"FADD", 0x4e20d400}
	FSUB  = Op{"FSUB", 0x4ea0d400}
	FMUL  = Op{"FMUL", 0x6e20dc00}
	FDIV  = Op{"FDIV", 0x6e20fc00}
	FMAX  = Op{"FMAX", 0x4e20f400}
	FADDP = Op{"FADDP", 0x6e20d400}
	FMAXP = Op{"FMAXP", 0x6e20f400}
	FCMGT = Op{"FCMGT", 0x6ea0e400} // all ones in the lanes where Vn > Vm, zeros elsewhere
)

// Word returns the line of assembly of Vd.4S = o(Vn.4S, Vm.4S): a WORD,
// with the instruction in a comment.
func (o Op) Word(d, n, m int) string {
	return fmt.Sprintf("WORD $0x%08x // %s V%d.4S, V%d.4S, V%d.4S", o.encode(d, n, m), o.Name, d, n, m)
}

// encode returns the instruction word of o on registers d, n and m.
func (o Op) encode(d, n, m int) uint32 {
	for _, r := range []int{d, n, m} {
		if r < 0 || r > 31 {
			panic(fmt.Sprintf("neon: %s on V%d", o.Name, r))
		}
	}
	return o.Bits | uint32(m)<<16 | uint32(n)<<5 | uint32(d)
}
