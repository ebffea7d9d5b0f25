package golang

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

// expBound is the largest relative error each exp degree may have over
// [-87.3, 0]; the package doc lists the measured figures.
var expBound = map[int]float64{0: 6.0e-8, 4: 3.0e-6, 5: 3.0e-7}

// expVariant is one generated exp: a width and a degree.
type expVariant struct{ lanes, degree int }

func (e expVariant) fn() string { return fmt.Sprintf("exp%dDeg%d", e.lanes, e.degree) }

// expResult is what the generated program reports for one variant.
type expResult struct {
	Fn      string
	Skipped bool      // the CPU lacks the instructions
	MaxRel  float64   // largest relative error over the sweep
	At      float32   // where it occurs
	Special []float32 // exp of specialArgs
}

// specialArgs are arguments below expMin and at the edges of the domain.
// The polynomial variants must give exactly 0 for the first five; math.Exp
// gives 0 for the first four.
const specialArgs = "float32(math.Inf(-1)), -math.MaxFloat32, -1e30, -1000, -88.5, -87.3, -1, 0"

// TestExpError generates every exp variant, builds the generated code with
// GOEXPERIMENT=simd, and checks its relative error over a dense sweep of
// [-87.3, 0] against math.Exp, and its value at -Inf and huge negative
// arguments.
func TestExpError(t *testing.T) {
	widths := []int{1}
	if runtime.GOARCH == "amd64" {
		widths = append(widths, 8, 16)
	}
	var variants []expVariant
	for _, w := range widths {
		for _, d := range []int{0, 4, 5} {
			variants = append(variants, expVariant{w, d})
		}
	}
	out := buildAndRun(t, map[string][]byte{"exp.go": renderExpProgram(t, variants), "main.go": []byte(expMain)})
	var results []expResult
	for line := range strings.Lines(string(out)) {
		var r expResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("bad line %q from the generated program: %v", line, err)
		}
		results = append(results, r)
	}
	if len(results) != len(variants) {
		t.Fatalf("%d results for %d variants:\n%s", len(results), len(variants), out)
	}
	for i, r := range results {
		v := variants[i]
		if r.Skipped {
			t.Logf("%s: skipped, the CPU lacks the instructions", r.Fn)
			continue
		}
		t.Logf("%s: max relative error %.3g at %g", r.Fn, r.MaxRel, r.At)
		if r.MaxRel > expBound[v.degree] {
			t.Errorf("%s: max relative error %.3g at %g, want ≤ %.3g", r.Fn, r.MaxRel, r.At, expBound[v.degree])
		}
		for j, y := range r.Special {
			zeros := 5
			if v.degree == 0 {
				zeros = 4
			}
			if j < zeros && y != 0 || !(y >= 0 && float64(y) <= 1+expBound[v.degree]) {
				t.Errorf("%s: special argument %d (%s) gives %g", r.Fn, j, strings.Split(specialArgs, ", ")[j], y)
			}
		}
	}
}

// renderExpProgram returns a main package with one function per variant
// that applies exp to a slice, and a main that sweeps [-87.3, 0] and prints
// one expResult per variant as JSON.
func renderExpProgram(t *testing.T, variants []expVariant) []byte {
	f := NewFile("main")
	var table []jen.Code
	for _, ev := range variants {
		v := Float32(ev.lanes)
		e := NewExp(v, ev.degree)
		body := e.Consts()
		body = append(body, v.Sweep("i", expSweepLen, 1, func(s Step) []jen.Code {
			x := v.Load(jen.Id("xs"), s.At)
			if s.Part {
				x = v.LoadPart(jen.Id("xs"), s.At)
			}
			stmts := append([]jen.Code{jen.Id("x").Op(":=").Add(x)}, e.Emit("y", "x", "")...)
			if s.Part {
				return append(stmts, v.StorePart(jen.Id("y"), jen.Id("ys"), s.At))
			}
			return append(stmts, v.Store(jen.Id("y"), jen.Id("ys"), s.At))
		})...)
		f.Func().Id(ev.fn()).Params(jen.Id("ys"), jen.Id("xs").Op("*").Index(jen.Lit(expSweepLen)).Float32()).Block(body...)
		ok := jen.True()
		switch ev.lanes {
		case 8:
			ok = jen.Qual(ArchSIMD, "X86").Dot("AVX2").Call().Op("&&").Qual(ArchSIMD, "X86").Dot("FMA").Call()
		case 16:
			ok = jen.Qual(ArchSIMD, "X86").Dot("AVX512").Call()
		}
		table = append(table, jen.Values(jen.Lit(ev.fn()), jen.Id(ev.fn()), ok))
	}
	f.Var().Id("variants").Op("=").Index().Struct(
		jen.Id("name").String(),
		jen.Id("fn").Func().Params(jen.Op("*").Index(jen.Lit(expSweepLen)).Float32(), jen.Op("*").Index(jen.Lit(expSweepLen)).Float32()),
		jen.Id("ok").Bool(),
	).Values(table...)
	src, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// expSweepLen is the number of points of the sweep, a step of about 1e-5.
const expSweepLen = 1<<23 + 3 // +3: a partial vector at the end

// expMain is the hand-written half of the program: the sweep and the report.
var expMain = fmt.Sprintf(`package main

import (
	"encoding/json"
	"math"
	"os"
)

const sweepLen = %d

func main() {
	xs, ys := new([sweepLen]float32), new([sweepLen]float32)
	for i := range xs {
		xs[i] = float32(-87.3 * float64(i) / float64(sweepLen-1))
	}
	special, specialYs := new([sweepLen]float32), new([sweepLen]float32)
	n := copy(special[:], []float32{%s})
	enc := json.NewEncoder(os.Stdout)
	for _, v := range variants {
		if !v.ok {
			enc.Encode(map[string]any{"Fn": v.name, "Skipped": true})
			continue
		}
		v.fn(ys, xs)
		maxRel, at := 0.0, float32(0)
		for i, x := range xs {
			want := math.Exp(float64(x))
			if rel := math.Abs(float64(ys[i])-want) / want; !(rel <= maxRel) {
				maxRel, at = rel, x
			}
		}
		v.fn(specialYs, special)
		enc.Encode(map[string]any{"Fn": v.name, "MaxRel": maxRel, "At": at, "Special": specialYs[:n]})
	}
}
`, expSweepLen, specialArgs)

// buildAndRun writes files into a throw-away module, builds it with
// GOEXPERIMENT=simd, runs it and returns its standard output.
func buildAndRun(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command:", err)
	}
	dir := t.TempDir()
	files["go.mod"] = []byte("module exptest\n\ngo 1.26\n")
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "GOEXPERIMENT=simd", "GOFLAGS=", "GOWORK=off")
	bin := filepath.Join(dir, "exptest")
	build := exec.Command(goTool, "build", "-o", bin, ".")
	build.Dir, build.Env = dir, env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	run := exec.Command(bin)
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("%s: %v\n%s", bin, err, stderr.Bytes())
	}
	return stdout.Bytes()
}
