package cpu

import (
	"fmt"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// The test template computes out[i] = 2*in[i] + 1 over a shape [n]. Its knob
// mode picks a way for the candidate to behave, good or bad, so that every
// path of the builder and the runner can be driven from a batch:
//
//	ok         correct
//	ok_slow    correct, ten times the work
//	print      correct, and writes a fake protocol line to os.Stdout
//	nocompile  a type error, found by go build
//	nosyntax   not Go at all, found when the file is rendered
//	emitpanic  the emitter itself panics
//	panic      panics (recovered by the harness)
//	hang       loops forever
//	hang_late  correct for its first four calls (its check), then loops forever
//	sleep      correct, after sleeping reps milliseconds
//	wrongans   out[i] = in[i]
//	clobber    correct, but writes to its input
//	segv       writes to an unmapped address: a fault the runtime cannot recover
//	exit       calls os.Exit(3)
//	badsig     valid Go, but Kernel is not func(out, in0 []float32)
//	asm        correct, the +1 in Go assembly (what the Go emitter returns)
//	asmbroken  its assembly does not assemble
//
// reps repeats the computation, to make a candidate slower; salt only
// changes the source, so that a benchmark's candidates miss the build cache.
var testModes = []string{
	"ok", "ok_slow", "print", "nocompile", "nosyntax", "emitpanic", "panic",
	"hang", "hang_late", "sleep", "wrongans", "clobber", "segv", "exit", "badsig", "asm", "asmbroken",
}

func testTemplate() kernels.Template {
	salts := make([]int, 1000)
	for i := range salts {
		salts[i] = i
	}
	return kernels.Template{
		Op: kernels.Op{Name: "affine", Dims: []string{"N"}, Summary: "out = 2*in + 1, for tests", Example: "17",
			Args: func(shape []int) ([]int, int) { return []int{shape[0]}, shape[0] },
			Reference: func(shape []int, ins [][]float32, out []float64) {
				for i, x := range ins[0] {
					out[i] = 2*float64(x) + 1
				}
			},
			Tolerance: func([]int, dtype.DType) (rel, abs float64) { return 1e-6, 1e-6 },
			FLOPs:     func(shape []int) float64 { return 2 * float64(shape[0]) },
			Bytes:     func(shape []int) float64 { return 8 * float64(shape[0]) },
		},
		Backend: kernels.CPU,
		Version: "test-1",
		Space: func(shape []int, target device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{
				schedule.Enum("mode", testModes...),
				schedule.Choice("reps", 1, 10, 100, 1000),
				schedule.Choice("salt", salts...),
			})
		},
		Go: kernels.GoFunc(func(f *jen.File, k kernels.Kernel) []byte {
			emitTest(f, k.Name, k.Shape, k.Config)
			return emitTestAsm(k.Name, k.Shape, k.Config)
		}),
	}
}

// emitTestAsm returns, for modes asm and asmbroken, the assembly of
// addOne(p *float32, n int), which adds 1 to p[0:n]; asmbroken's has an
// instruction that does not exist.
func emitTestAsm(name string, shape []int, cfg schedule.Config) []byte {
	mode := cfg.Str("mode")
	if mode != "asm" && mode != "asmbroken" {
		return nil
	}
	add := "ADDSS X1, X0"
	if mode == "asmbroken" {
		add = "ADDNOTANINSTRUCTION X1, X0"
	}
	return []byte(`#include "textflag.h"

// func addOne(p *float32, n int)
TEXT ·addOne(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), DI
	MOVQ n+8(FP), CX
	MOVL $0x3f800000, AX
	MOVD AX, X1
	TESTQ CX, CX
	JZ done
loop:
	MOVSS (DI), X0
	` + add + `
	MOVSS X0, (DI)
	ADDQ $4, DI
	DECQ CX
	JNZ loop
done:
	RET
`)
}

func emitTest(f *jen.File, name string, shape []int, cfg schedule.Config) {
	mode, reps, salt := cfg.Str("mode"), cfg.Int("reps"), cfg.Int("salt")
	compute := jen.For(jen.Range().Id("reps")).Block(
		jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
			jen.Id("out").Index(jen.Id("i")).Op("=").Id("in0").Index(jen.Id("i")).Op("*").Lit(2).Op("+").Lit(1),
		),
	)
	body := []jen.Code{
		jen.Const().Defs(
			jen.Id("n").Op("=").Lit(shape[0]),
			jen.Id("reps").Op("=").Lit(reps),
		),
		jen.List(jen.Id("out"), jen.Id("in0")).Op("=").List(
			jen.Id("out").Index(jen.Op(":").Id("n")), jen.Id("in0").Index(jen.Op(":").Id("n"))),
	}
	switch mode {
	case "ok":
		body = append(body, compute)
	case "ok_slow":
		body = append(body, jen.For(jen.Range().Lit(10)).Block(compute))
	case "print":
		f.Var().Id("printed").Bool()
		body = append(body, compute, jen.If(jen.Op("!").Id("printed")).Block(
			jen.Id("printed").Op("=").True(),
			jen.Qual("os", "Stdout").Dot("WriteString").Call(jen.Lit(`{"id":-1,"event":"done"}`+"\n")),
		))
	case "nocompile":
		body = append(body, jen.Id("out").Index(jen.Lit(0)).Op("=").Id("undefinedValue"))
	case "nosyntax":
		body = append(body, jen.Id("out").Op("=").Op("+"))
	case "emitpanic":
		panic("test template: cannot emit mode emitpanic")
	case "panic":
		body = append(body, jen.Panic(jen.Lit("test kernel: mode panic")))
	case "hang":
		body = append(body, jen.For().Block())
	case "hang_late":
		f.Var().Id("calls").Int()
		body = append(body, compute, jen.Id("calls").Op("++"), jen.If(jen.Id("calls").Op(">").Lit(4)).Block(jen.For().Block()))
	case "sleep":
		body = append(body, compute, jen.Qual("time", "Sleep").Call(jen.Id("reps").Op("*").Qual("time", "Millisecond")))
	case "wrongans":
		body = append(body, jen.Copy(jen.Id("out"), jen.Id("in0")))
	case "clobber":
		body = append(body, compute, jen.Id("in0").Index(jen.Lit(0)).Op("=").Lit(0))
	case "segv":
		// Faults at addresses below 4096 are nil dereferences, which the
		// runtime turns into panics; this one is a fatal error.
		body = append(body, jen.Op("*").Parens(jen.Op("*").Float32()).Parens(
			jen.Qual("unsafe", "Pointer").Call(jen.Uintptr().Call(jen.Lit(0xdead0000))),
		).Op("=").Lit(1))
	case "exit":
		body = append(body, jen.Qual("os", "Exit").Call(jen.Lit(3)))
	case "asm", "asmbroken":
		f.Comment("addOne adds 1 to p[0:n], in assembly.")
		f.Comment("//go:noescape")
		f.Func().Id("addOne").Params(jen.Id("p").Op("*").Float32(), jen.Id("n").Int())
		body = append(body, jen.For(jen.Range().Id("reps")).Block(
			jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
				jen.Id("out").Index(jen.Id("i")).Op("=").Id("in0").Index(jen.Id("i")).Op("*").Lit(2),
			),
			jen.Id("addOne").Call(jen.Op("&").Id("out").Index(jen.Lit(0)), jen.Id("n")),
		))
	case "badsig":
		// Valid Go, but not the calling convention.
		f.Func().Id(name).Params(jen.Id("out").Index().Float32()).Block()
		return
	default:
		panic(fmt.Sprintf("test template: unknown mode %q", mode))
	}
	f.Commentf("%s computes out = 2*in + 1 in mode %s (salt %d).", name, mode, salt)
	f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("in0")).Index().Float32()).Block(body...)
}

// testConfig returns the config of the test template with the given mode.
// mode need not be valid, to make invalid configs.
func testConfig(mode string, reps, salt int) schedule.Config {
	c, err := schedule.NewConfig([]string{"mode", "reps", "salt"},
		[]schedule.Value{schedule.StringValue(mode), schedule.IntValue(reps), schedule.IntValue(salt)})
	if err != nil {
		panic(err)
	}
	return c
}
