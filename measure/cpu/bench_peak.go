package cpu

import (
	"fmt"
	"strconv"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
)

// The peak loop's shape: peakChains accumulators, each updated by one fused
// multiply-add per step, peakSteps steps per goroutine and call. Twelve
// chains hide an FMA latency of 4 cycles at two FMAs per cycle (8 would do)
// and, with the two constant operands, use 14 vector registers: the most Go
// 1.26 allocates without spilling (X0–X14, see kernels/gemm's
// register_budget). 262144 steps make a call 1–2 ms at 16 lanes: long
// enough that starting goroutines and waking idle threads (some 0.1 ms on
// a VM, which a 0.1 ms peak measured as a third of its speed) are noise.
const (
	peakChains = 12
	peakSteps  = 1 << 18
)

// peakVector returns the widest float32 vector the target's ISA runs
// multiply-adds on: Float32x16 with AVX-512, Float32x8 with AVX2 and FMA,
// scalar float32 otherwise.
func peakVector(t device.Target) golang.F32 {
	switch {
	case t.CPU != nil && t.CPU.ISA.AVX512:
		return golang.Float32(16)
	case t.CPU != nil && t.CPU.ISA.AVX2 && t.CPU.ISA.FMA:
		return golang.Float32(8)
	}
	return golang.Float32(1)
}

// peakFLOPs is the work of one call of the peak loop: a multiply and an
// add per lane of every chain, every step, on every goroutine.
func peakFLOPs(v golang.F32, threads int) float64 {
	return 2 * float64(v.Lanes()) * peakChains * peakSteps * float64(threads)
}

// emitPeak adds to f the FMA peak: func Kernel(out, in0, ...) that runs
// peakFMA on threads goroutines, the caller's included, and writes one
// result to out[0] (so the compiler cannot drop the loop). peakFMA keeps
// peakChains independent accumulators a = a·x + y in registers; x and y
// are package variables, so nothing is folded; each accumulator starts at
// another value (y+i), or the compiler would compute one chain for all;
// with x just below 1 they stay between y/(1-x) and 12, away from overflow
// and subnormals.
// Starting the goroutines at each call, as the tuned kernels do, puts their
// cost in the peak too.
func emitPeak(f *jen.File, inputs int, v golang.F32, threads int) {
	id := jen.Id
	params := []jen.Code{id("out")}
	var unused []jen.Code
	for i := range inputs {
		params = append(params, id(fmt.Sprintf("in%d", i)))
		unused = append(unused, id("_").Op("=").Id(fmt.Sprintf("in%d", i)))
	}
	goroutines := "on the calling goroutine"
	if threads > 1 {
		goroutines = fmt.Sprintf("on %d goroutines, the caller's included", threads)
	}
	f.Add(comment(fmt.Sprintf("%s runs peakFMA %s, %g FLOPs in all, and writes a result to out[0];\n"+
		"it reads no input. Its FLOPs per second are the machine's multiply-add peak.", kernelName, goroutines, peakFLOPs(v, threads))))
	body := unused
	if threads == 1 {
		body = append(body, id("out").Index(jen.Lit(0)).Op("=").Id("peakFMA").Call())
	} else {
		body = append(body,
			jen.Const().Id("threads").Op("=").Lit(threads),
			jen.Var().Id("sums").Index(id("threads")).Float32(),
			jen.Var().Id("wg").Qual("sync", "WaitGroup"),
			jen.For(id("t").Op(":=").Lit(1), id("t").Op("<").Id("threads"), id("t").Op("++")).Block(
				id("wg").Dot("Go").Call(jen.Func().Params().Block(
					id("sums").Index(id("t")).Op("=").Id("peakFMA").Call(),
				)),
			),
			id("sums").Index(jen.Lit(0)).Op("=").Id("peakFMA").Call(),
			id("wg").Dot("Wait").Call(),
			id("out").Index(jen.Lit(0)).Op("=").Id("sums").Index(jen.Lit(0)),
		)
	}
	f.Func().Id(kernelName).Params(jen.List(params...).Index().Float32()).Block(body...)
	f.Line()

	f.Add(comment("peakX and peakY are the multiply-add's constant operands, variables so that\nthe compiler folds nothing."))
	f.Var().List(id("peakX"), id("peakY")).Float32().Op("=").List(jen.Lit(float32(0.99999994)), jen.Lit(float32(1e-7)))
	f.Line()

	acc := func(i int) *jen.Statement { return id("a" + strconv.Itoa(i)) }
	var accs, inits, steps []jen.Code
	for i := range peakChains {
		accs = append(accs, acc(i))
		inits = append(inits, v.Splat(id("peakY").Op("+").Lit(i)))
		steps = append(steps, acc(i).Op("=").Add(v.MulAdd(acc(i), id("x"), id("y"))))
	}
	sum := jen.Code(acc(0))
	for i := 1; i < peakChains; i++ {
		sum = v.Add(sum, acc(i))
	}
	f.Add(comment(fmt.Sprintf("peakFMA runs %d steps of %d independent multiply-adds a = a·x + y on %s\n"+
		"and returns a lane of their sum.", peakSteps, peakChains, v.Name())))
	f.Func().Id("peakFMA").Params().Float32().Block(
		jen.List(id("x"), id("y")).Op(":=").List(v.Splat(id("peakX")), v.Splat(id("peakY"))),
		jen.List(accs...).Op(":=").List(inits...),
		jen.For(jen.Range().Lit(peakSteps)).Block(steps...),
		jen.Var().Id("buf").Index(jen.Lit(v.Lanes())).Float32(),
		v.Store(sum, id("buf").Index(jen.Empty(), jen.Empty()), jen.Lit(0)),
		jen.Return(id("buf").Index(jen.Lit(0))),
	)
}
