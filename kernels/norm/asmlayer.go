package norm

import "fmt"

// LayerNorm's assembly (code=asm) computes as its Go rows do (emit.go's
// layerRow): every sweep works on t = x-x[0]; twopass sums t, then the
// squares of t-mean, onepass t and t² in one sweep; the mean and 1/σ are
// float64, the mean used as its float32; y = (t-mean)·(1/σ)·gamma + beta,
// the last a fused multiply-add. The lanes of a partial vector past the
// row are zeroed after the subtraction (x-x[0] is -x[0] there). A row
// whose float32 sum of squares is not finite takes the statistics again
// in float64, an element at a time, as the Go rows' slow path does.
//
// Vector registers beyond RMSNorm's (asmWriter): x[0] and the mean
// broadcast in Z28 and Z29, onepass's sums of squares from Z17, and with
// convert=reg gamma's vectors from Z17, as RMSNorm's (beta is a memory
// operand); on Y registers Y6 and Y7 and the sums of squares from Y2,
// which leaves room for two vectors in flight (asmMaxUnrollAVX2Layer).

// layerRegs returns the vector registers of x[0], the mean and onepass's
// first sum of squares.
func (a *asmWriter) layerRegs() (k, mean, sq int) {
	if a.zmm {
		return 28, 29, 17
	}
	return 6, 7, 2
}

// shifted returns the instructions that set vector register t to vector
// u of the row of x minus the broadcast vector register k, less the one
// in sub (if set), zero in the lanes past the row when masked.
func (a *asmWriter) shifted(u int, masked bool, t, k, sub, l string) []string {
	out := a.load("SI", u, masked, a.rowMask, t, l)
	last := k
	if sub != "" {
		out = append(out, fmt.Sprintf("VSUBPS %s, %s, %s", k, t, t))
		last = sub
	}
	switch {
	case !masked:
		return append(out, fmt.Sprintf("VSUBPS %s, %s, %s", last, t, t))
	case a.zmm:
		return append(out, fmt.Sprintf("VSUBPS.Z %s, %s, %s, %s", last, t, a.rowMask, t))
	}
	return append(out, fmt.Sprintf("VSUBPS %s, %s, %s", last, t, t), fmt.Sprintf("VANDPS %s, %s, %s", a.rowMask, t, t))
}

// layerStats writes LayerNorm's statistics of the row at SI: x[0] and
// the mean broadcast in their registers, 1/σ in inv.
func (a *asmWriter) layerStats() {
	kr, mr, sqr := a.layerRegs()
	k, mean := a.vr(kr), a.vr(mr)
	if a.reg {
		a.lines(a.elem16("(SI)", "X0"))
		a.w("VBROADCASTSS X0, %s // x[0]", k)
	} else {
		a.w("VBROADCASTSS (SI), %s // x[0]", k)
	}
	a.zeroAccs(0)
	if a.onepass {
		a.zeroAccs(sqr)
		a.w("XORQ CX, CX")
		a.sweep("stat", "R10", "R11", a.rowMask, func(u int, masked bool) []string {
			t := a.vr(a.xBase + u)
			return append(a.shifted(u, masked, t, k, "", "stat_x"),
				fmt.Sprintf("VADDPS %s, %s, %s", t, a.vr(u), a.vr(u)),
				fmt.Sprintf("VFMADD231PS %s, %s, %s", t, t, a.vr(sqr+u)))
		})
		a.sum(0, 1)
		a.tree(sqr)
		if sqr != 2 {
			a.w("VMOVAPS %s, %s", a.vr(sqr), a.vr(2))
		}
		a.hsum(2, 1)
		a.overflow("X2")
		a.w("VCVTSS2SD X0, X0, X0")
		a.loadN("X1")
		a.w("VDIVSD X1, X0, X0 // the mean of t")
		a.w("VCVTSD2SS X0, X3, X3")
		a.w("VBROADCASTSS X3, %s", mean)
		a.w("VCVTSS2SD X2, X2, X2")
		a.w("VDIVSD X1, X2, X2 // E[t²]")
		a.w("VMULSD X0, X0, X0")
		a.w("VSUBSD X0, X2, X2")
		a.w("VXORPD X0, X0, X0")
		a.w("VMAXSD X0, X2, X0 // E[t²]-E[t]², cancelling only as much as the spread is small against x-x[0]")
	} else {
		a.w("XORQ CX, CX")
		a.sweep("sum", "R10", "R11", a.rowMask, func(u int, masked bool) []string {
			t := a.vr(a.xBase + u)
			return append(a.shifted(u, masked, t, k, "", "sum_x"), fmt.Sprintf("VADDPS %s, %s, %s", t, a.vr(u), a.vr(u)))
		})
		a.sum(0, 1)
		a.w("VCVTSS2SD X0, X0, X0")
		a.loadN("X1")
		a.w("VDIVSD X1, X0, X0")
		a.w("VCVTSD2SS X0, X0, X0 // the mean of t")
		a.w("VBROADCASTSS X0, %s", mean)
		a.zeroAccs(0)
		a.w("XORQ CX, CX")
		a.sweep("sq", "R10", "R11", a.rowMask, func(u int, masked bool) []string {
			e := a.vr(a.xBase + u)
			return append(a.shifted(u, masked, e, k, mean, "sq_x"), fmt.Sprintf("VFMADD231PS %s, %s, %s", e, e, a.vr(u)))
		})
		a.sum(0, 1)
		a.overflow("X0")
		a.w("VCVTSS2SD X0, X0, X0")
		a.loadN("X1")
		a.w("VDIVSD X1, X0, X0 // the variance")
	}
	a.label("var")
	a.invSqrt()
}

// layerSlow writes the float64 path of a row whose float32 sum of squares
// overflowed: the mean of x-x[0], then the sum of squared deviations,
// each a sweep of one element at a time, as the Go rows' slow path does.
func (a *asmWriter) layerSlow() {
	kr, mr, _ := a.layerRegs()
	a.label("slow")
	a.w("VCVTSS2SD X%d, X3, X3 // x[0]", kr)
	a.w("VXORPD X0, X0, X0")
	a.w("XORQ CX, CX")
	a.label("slow_mean")
	a.lines(a.slowLoad())
	a.w("VSUBSD X3, X1, X1")
	a.w("VADDSD X1, X0, X0")
	a.w("ADDQ $%d, CX", a.es)
	a.w("CMPQ CX, R9")
	a.w("JLT slow_mean")
	a.loadN("X1")
	a.w("VDIVSD X1, X0, X0")
	a.w("VCVTSD2SS X0, X2, X2")
	a.w("VBROADCASTSS X2, %s", a.vr(mr))
	a.w("VXORPD X2, X2, X2")
	a.w("XORQ CX, CX")
	a.label("slow_sq")
	a.lines(a.slowLoad())
	a.w("VSUBSD X3, X1, X1")
	a.w("VSUBSD X0, X1, X1")
	a.w("VFMADD231SD X1, X1, X2")
	a.w("ADDQ $%d, CX", a.es)
	a.w("CMPQ CX, R9")
	a.w("JLT slow_sq")
	a.loadN("X1")
	a.w("VDIVSD X1, X2, X0")
	a.w("JMP var")
}

// layerOut is LayerNorm's output body: y = (t-mean)·(1/σ)·gamma + beta.
func (a *asmWriter) layerOut(u int, masked bool, km, op string) []string {
	kr, mr, _ := a.layerRegs()
	x, g := a.vr(a.xBase+u), a.vr(a.regGamma(u))
	body := append(a.load("SI", u, masked, km, x, "out_x"),
		fmt.Sprintf("VSUBPS %s, %s, %s", a.vr(kr), x, x),
		fmt.Sprintf("VSUBPS %s, %s, %s", a.vr(mr), x, x),
		fmt.Sprintf("VMULPS %s, %s, %s", a.vr(a.inv), x, x))
	switch {
	case a.reg:
		// gamma and beta widened, whole vectors (widenVecs).
		body = append(body,
			fmt.Sprintf("VMOVUPS %s, %s", a.at32("BX", u), g),
			fmt.Sprintf("VFMADD213PS %s, %s, %s", a.at32("R14", u), g, x))
		return append(body, a.regStore(u, masked, km, x, g)...)
	case !masked:
		return append(body,
			fmt.Sprintf("VMOVUPS %s, %s", a.at("BX", u), g),
			fmt.Sprintf("VFMADD213PS %s, %s, %s", a.at("R14", u), g, x),
			fmt.Sprintf("%s %s, %s", op, x, a.at("DI", u)))
	case a.zmm:
		return append(body,
			fmt.Sprintf("VMOVUPS.Z %s, %s, %s", a.at("BX", u), km, g),
			fmt.Sprintf("VFMADD213PS.Z %s, %s, %s, %s", a.at("R14", u), g, km, x),
			fmt.Sprintf("VMOVUPS %s, %s, %s", x, km, a.at("DI", u)))
	}
	return append(body,
		fmt.Sprintf("VMASKMOVPS %s, %s, %s", a.at("BX", u), km, g),
		fmt.Sprintf("VMASKMOVPS %s, %s, Y14", a.at("R14", u), km),
		fmt.Sprintf("VFMADD213PS Y14, %s, %s", g, x),
		fmt.Sprintf("VMASKMOVPS %s, %s, %s", x, km, a.at("DI", u)))
}
