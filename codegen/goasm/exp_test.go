package goasm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestExp builds, for each width the host has and each degree, the
// assembly exp (a loop of Exp.Emit) and codegen/golang's archsimd exp of
// the same degree, runs both on a sweep of [-100, 0] with -Inf, -88.5,
// -87.3 and 0 among the points, and requires the same bits: the assembly
// inherits golang's measured error only if it computes the same thing.
// Each exp runs with its constants in registers and with all but three of
// them read from memory (Exp.Table).
func TestExp(t *testing.T) {
	lanes := hostLanes(t)
	var b strings.Builder
	b.WriteString(Header)
	f := golang.NewFile("main")
	var names []string
	for _, l := range lanes {
		for _, variant := range []struct {
			degree int
			table  bool
		}{{4, false}, {5, false}, {4, true}, {5, true}} {
			degree := variant.degree
			name := fmt.Sprintf("exp%dDeg%d", l, degree)
			// The constants above the three registers of the loop: Y3…
			// at 8 lanes, Z16… at 16 (as softmax puts them).
			first := 3
			if l == 16 {
				first = 16
			}
			e := Exp{Lanes: l, Degree: degree, First: first}
			if variant.table {
				name += "Mem"
				e.Table, e.InRegs = name+"Consts<>", 3
				for _, d := range e.Data() {
					fmt.Fprintf(&b, "%s\n", d)
				}
			}
			names = append(names, name)
			writeExpLoop(&b, f, name+"Asm", e)
			v := golang.Float32(l)
			ge := golang.NewExp(v, degree)
			body := ge.Consts()
			body = append(body, v.Sweep("i", expTestLen, 1, func(s golang.Step) []jen.Code {
				stmts := append([]jen.Code{jen.Id("x").Op(":=").Add(v.Load(jen.Id("xs"), s.At))}, ge.Emit("y", "x", "")...)
				return append(stmts, v.Store(jen.Id("y"), jen.Id("ys"), s.At))
			})...)
			f.Func().Id(name + "Go").Params(jen.List(jen.Id("ys"), jen.Id("xs")).Op("*").Index(jen.Lit(expTestLen)).Float32()).Block(body...)
		}
	}
	var table []jen.Code
	for _, n := range names {
		table = append(table, jen.Values(jen.Lit(n), jen.Id(n+"Asm"), jen.Id(n+"Go")))
	}
	f.Var().Id("exps").Op("=").Index().Id("variant").Values(table...)
	out := runExps(t, f, &b, fmt.Sprintf(expDriver, expTestLen))
	if !strings.Contains(out, fmt.Sprintf("%d exps ok", len(names))) {
		t.Fatalf("%s", out)
	}
}

// TestExpDegree3 runs the degree-3 exp, which has no archsimd twin, on
// the sweep of TestExp at each width the host has, with its constants in
// registers and in memory, and measures it against math.Exp: at most
// 1e-4 relative over [-87.3, 0] (its polynomial's 7.5e-5, the float32
// rounding of x·log2e and of the evaluation), and 0 for x ≤ -88.5 and
// -Inf. With its last coefficient dropped (planted) it is off by 9.7e-3.
func TestExpDegree3(t *testing.T) {
	lanes := hostLanes(t)
	var b strings.Builder
	b.WriteString(Header)
	f := golang.NewFile("main")
	var table []jen.Code
	for _, l := range lanes {
		for _, mem := range []bool{false, true} {
			first := 3
			if l == 16 {
				first = 16
			}
			e := Exp{Lanes: l, Degree: 3, First: first}
			name := fmt.Sprintf("exp%dDeg3", l)
			if mem {
				name += "Mem"
				e.Table, e.InRegs = name+"Consts<>", 3
				for _, d := range e.Data() {
					fmt.Fprintf(&b, "%s\n", d)
				}
			}
			writeExpLoop(&b, f, name+"Asm", e)
			table = append(table, jen.Values(jen.Lit(name), jen.Id(name+"Asm")))
		}
	}
	f.Var().Id("exps").Op("=").Index().Id("variant").Values(table...)
	out := runExps(t, f, &b, fmt.Sprintf(expErrorDriver, expTestLen))
	if !strings.Contains(out, fmt.Sprintf("%d exps ok", len(table))) {
		t.Fatalf("%s", out)
	}
	t.Logf("%s", out)
}

// writeExpLoop writes the assembly function fn(dst, src *float32, n int)
// that sets dst[i] = e^src[i] with e, a vector at a time, into b, and its
// declaration into f.
func writeExpLoop(b *strings.Builder, f *jen.File, fn string, e Exp) {
	x, k, p := vreg(e.Lanes, 0), vreg(e.Lanes, 1), vreg(e.Lanes, 2)
	w := func(format string, args ...any) { fmt.Fprintf(b, "\t"+format+"\n", args...) }
	fmt.Fprintf(b, "\n// func %s(dst, src *float32, n int)\nTEXT ·%s(SB), NOSPLIT, $0-24\n", fn, fn)
	w("MOVQ dst+0(FP), DI")
	w("MOVQ src+8(FP), SI")
	w("MOVQ n+16(FP), CX")
	for _, l := range e.Load() {
		w("%s", l)
	}
	b.WriteString("loop:\n")
	w("VMOVUPS (SI), %s", x)
	for _, l := range e.Emit(x, k, p) {
		w("%s", l)
	}
	w("VMOVUPS %s, (DI)", p)
	w("ADDQ $%d, SI", 4*e.Lanes)
	w("ADDQ $%d, DI", 4*e.Lanes)
	w("SUBQ $%d, CX", e.Lanes)
	w("JNZ loop")
	w("VZEROUPPER")
	w("RET")
	f.Comment("//go:noescape")
	f.Func().Id(fn).Params(jen.List(jen.Id("dst"), jen.Id("src")).Op("*").Float32(), jen.Id("n").Int())
}

// runExps builds the module of f, the assembly in b and driver, runs it
// and returns its output.
func runExps(t *testing.T, f *jen.File, b *strings.Builder, driver string) string {
	t.Helper()
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string][]byte{
		"go.mod":    []byte("module exps\n\ngo 1.26\n"),
		"exps.go":   src,
		"exps.s":    []byte(b.String()),
		"driver.go": []byte(driver),
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "exps")
	kerneltest.Go(t, dir, "build", "-o", bin, ".")
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return string(out)
}

// hostLanes returns the vector widths the host runs this package's
// assembly at, 8 (AVX2 and FMA) and 16 (AVX-512), and skips the test
// on a host without AVX2 and FMA.
func hostLanes(t *testing.T) []int {
	t.Helper()
	isa := device.Host().CPU.ISA
	if !isa.AVX2 || !isa.FMA {
		t.Skip("the host has no AVX2 and FMA")
	}
	lanes := []int{8}
	if isa.AVX512 {
		lanes = append(lanes, 16)
	}
	return lanes
}

// expTestLen is the number of points of the sweep: whole vectors of 16.
const expTestLen = 1 << 16

// expDriver runs both exps of every variant and compares their bits.
const expDriver = `package main

import (
	"fmt"
	"math"
	"os"
)

const n = %d

type variant struct {
	name string
	asm  func(dst, src *float32, n int)
	gen  func(ys, xs *[n]float32)
}

func main() {
	var xs, a, g [n]float32
	for i := range xs {
		xs[i] = -100 * float32(i) / n
	}
	xs[1], xs[2], xs[3], xs[4] = float32(math.Inf(-1)), -88.5, -87.3, 0
	for _, v := range exps {
		v.asm(&a[0], &xs[0], n)
		v.gen(&g, &xs)
		for i := range xs {
			if math.Float32bits(a[i]) != math.Float32bits(g[i]) {
				fmt.Printf("%%s: e^%%g is %%g in assembly, %%g in Go\n", v.name, xs[i], a[i], g[i])
				os.Exit(1)
			}
		}
	}
	fmt.Printf("%%d exps ok\n", len(exps))
}
`

// expErrorDriver runs the exp of every variant on the sweep and measures
// it against math.Exp.
const expErrorDriver = `package main

import (
	"fmt"
	"math"
	"os"
)

const n = %d

type variant struct {
	name string
	asm  func(dst, src *float32, n int)
}

func main() {
	var xs, a [n]float32
	for i := range xs {
		xs[i] = -100 * float32(i) / n
	}
	xs[1], xs[2], xs[3], xs[4] = float32(math.Inf(-1)), -88.5, -87.3, 0
	for _, v := range exps {
		v.asm(&a[0], &xs[0], n)
		worst := 0.0
		for i, x := range xs {
			want := math.Exp(float64(x))
			switch {
			case x <= -88.5:
				if a[i] != 0 {
					fmt.Printf("%%s: e^%%g is %%g, want 0\n", v.name, x, a[i])
					os.Exit(1)
				}
			case x >= -87.3:
				worst = math.Max(worst, math.Abs(float64(a[i])-want)/want)
			}
		}
		fmt.Printf("%%s: largest relative error %%.3g over [-87.3, 0]\n", v.name, worst)
		if !(worst <= 1e-4) {
			os.Exit(1)
		}
	}
	fmt.Printf("%%d exps ok\n", len(exps))
}
`
