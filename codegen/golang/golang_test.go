package golang

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"
)

func TestNewFileHeader(t *testing.T) {
	f := NewFile("kernels")
	f.Func().Id("F").Params(jen.Id("x").Add(Float32(16).Type())).Block()
	src, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(src), "\n")
	if first != Header || !regexp.MustCompile(`^// Code generated .* DO NOT EDIT\.$`).MatchString(first) {
		t.Errorf("first line %q, want %q", first, Header)
	}
	// The header is not the package doc: a blank line separates them.
	if !strings.HasPrefix(rest, "\npackage kernels\n") {
		t.Errorf("after the header:\n%s", rest)
	}
	if strings.Contains(rest, `archsimd "simd/archsimd"`) || !strings.Contains(rest, `"simd/archsimd"`) {
		t.Errorf("archsimd imported under an alias:\n%s", rest)
	}
}

func TestRenderError(t *testing.T) {
	f := NewFile("kernels")
	f.Func().Id("F").Params().Block(jen.Id("x").Op(":=").Op("+")) // x := + does not parse
	_, err := Render(f)
	if err == nil {
		t.Fatal("Render of broken code succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"golang: generated code does not parse: 8:1:", "    7  x := +"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if f.NoFormat {
		t.Error("Render left NoFormat set")
	}
}

// code renders statements in a function body, formatted, without the file
// around them.
func code(t *testing.T, stmts ...jen.Code) string {
	t.Helper()
	f := NewFile("p")
	f.Func().Id("f").Params().Block(stmts...)
	src, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	s := string(src)
	s = s[strings.Index(s, "func f() {\n")+len("func f() {\n"):]
	s = strings.TrimSuffix(s, "}\n")
	return strings.ReplaceAll(s, "\t", "")
}

func TestF32(t *testing.T) {
	a, b, c := jen.Id("a"), jen.Id("b"), jen.Id("c")
	tests := []struct {
		lanes int
		expr  jen.Code
		want  string
	}{
		{1, Float32(1).MulAdd(a, b, c), "a*b + c"},
		{16, Float32(16).MulAdd(a, b, c), "a.MulAdd(b, c)"},
		{1, Float32(1).Max(a, b), "max(a, b)"},
		{8, Float32(8).Max(a, b), "a.Max(b)"},
		{1, Float32(1).Load(jen.Id("s"), jen.Id("i")), "s[i]"},
		{8, Float32(8).Load(jen.Id("s"), jen.Id("i")), "archsimd.LoadFloat32x8Slice(s[i:])"},
		{16, Float32(16).LoadPart(jen.Id("s"), jen.Lit(32)), "archsimd.LoadFloat32x16SlicePart(s[32:])"},
		{16, Float32(16).Splat(jen.Lit(1)), "archsimd.BroadcastFloat32x16(1)"},
		{1, Float32(1).Splat(jen.Lit(1)), "float32(1)"},
		{16, Float32(16).TailMask(3), "archsimd.Mask32x16FromBits(7)"},
		{8, Float32(8).TailMask(3), "archsimd.LoadInt32x8(&[8]int32{1, 1, 1}).ToMask()"},
		{1, Float32(1).Tree(ReduceSum, a, b, c, jen.Id("d")), "(a + b) + (c + d)"},
		{1, Float32(1).Tree(ReduceMax, a, b, c), "max(a, b, c)"},
		{16, Float32(16).Tree(ReduceMax, a, b, c), "a.Max(b).Max(c)"},
		{16, Float32(16).Tree(ReduceSum, a), "a"},
	}
	for _, tt := range tests {
		got := strings.TrimSpace(code(t, jen.Id("_").Op("=").Add(tt.expr)))
		if got != "_ = "+tt.want {
			t.Errorf("%d lanes: got %s, want _ = %s", tt.lanes, got, tt.want)
		}
	}
}

func TestFloat32Panics(t *testing.T) {
	for _, f := range []func(){
		func() { Float32(4) },
		func() { Float32(1).LoadPart(jen.Id("s"), nil) },
		func() { Float32(16).TailMask(16) },
		func() { NewExp(Float32(8), 3) },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f()
		}()
	}
}

func TestSweep(t *testing.T) {
	body := func(st Step) []jen.Code {
		return []jen.Code{jen.Id("use").Call(jen.Lit(st.U), st.At, jen.Lit(st.Part))}
	}
	tests := []struct {
		lanes, n, unroll int
		want             string
	}{
		{16, 1024, 4, `for c := 0; c < 1024; c += 64 {
use(0, c, false)
use(1, c+16, false)
use(2, c+32, false)
use(3, c+48, false)
}
`},
		{16, 1023, 2, `for c := 0; c < 992; c += 32 {
use(0, c, false)
use(1, c+16, false)
}
for c := 992; c < 1008; c += 16 {
use(0, c, false)
}
// The last 15 elements.
{
use(0, 1008, true)
}
`},
		{8, 5, 4, `// The last 5 elements.
{
use(0, 0, true)
}
`},
		{1, 5, 2, `for c := 0; c < 4; c += 2 {
use(0, c, false)
use(1, c+1, false)
}
for c := 4; c < 5; c++ {
use(0, c, false)
}
`},
	}
	for _, tt := range tests {
		got := code(t, Float32(tt.lanes).Sweep("c", tt.n, tt.unroll, body)...)
		if got != tt.want {
			t.Errorf("Sweep of %d by %d×%d:\n%s\nwant:\n%s", tt.n, tt.lanes, tt.unroll, got, tt.want)
		}
	}
}

func TestSweepN(t *testing.T) {
	body := func(st Step) []jen.Code {
		return []jen.Code{jen.Id("use").Call(jen.Lit(st.U), st.At, jen.Lit(st.Part))}
	}
	tests := []struct {
		lanes, unroll int
		want          string
	}{
		{16, 2, `{
c := 0
for ; c+32 <= n; c += 32 {
use(0, c, false)
use(1, c+16, false)
}
for ; c+16 <= n; c += 16 {
use(0, c, false)
}
if c < n {
// The partial vector at the end.
use(0, c, true)
}
}
`},
		{1, 1, `{
c := 0
for ; c < n; c++ {
use(0, c, false)
}
}
`},
	}
	for _, tt := range tests {
		got := code(t, Float32(tt.lanes).SweepN("c", jen.Id("n"), tt.unroll, body)...)
		if got != tt.want {
			t.Errorf("SweepN by %d×%d:\n%s\nwant:\n%s", tt.lanes, tt.unroll, got, tt.want)
		}
	}
}

func TestComment(t *testing.T) {
	text := strings.Repeat("word ", 30) + "\n\nsecond paragraph"
	f := NewFile("p")
	f.Add(Comment(text))
	f.Func().Id("F").Params().Block()
	src, err := Render(f)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for line := range strings.Lines(string(src)) {
		if strings.HasPrefix(line, "// ") || line == "//\n" {
			lines = append(lines, strings.TrimSuffix(line, "\n"))
		}
	}
	// The header, two lines of words, an empty line, the second paragraph.
	if len(lines) != 5 || lines[3] != "//" || lines[4] != "// second paragraph" {
		t.Fatalf("comment lines:\n%s", strings.Join(lines, "\n"))
	}
	for _, l := range lines {
		if len(l) > 100 {
			t.Errorf("line of %d bytes: %s", len(l), l)
		}
	}
}

func TestFloatLiteral(t *testing.T) {
	for _, x := range []float32{-88, 0.693359375, 1.442695, 12583039, 2.12194440e-4, 1e-30} {
		s := fmt.Sprintf("%#v", f32Lit(x))
		var back float32
		if _, err := fmt.Sscan(s, &back); err != nil || back != x || !strings.ContainsAny(s, ".e") {
			t.Errorf("f32Lit(%g) = %s", x, s)
		}
	}
}

func ExampleF32_Sweep() {
	v := Float32(16)
	f := NewFile("kernels")
	body := v.Sweep("c", 40, 2, func(st Step) []jen.Code {
		acc := jen.Id(fmt.Sprintf("acc%d", st.U))
		x := v.Load(jen.Id("s"), st.At)
		if st.Part {
			x = v.LoadPart(jen.Id("s"), st.At)
		}
		return []jen.Code{jen.Add(acc).Op("=").Add(v.Add(acc, x))}
	})
	f.Func().Id("sum").Params(jen.Id("s").Index().Float32(), jen.List(jen.Id("acc0"), jen.Id("acc1")).Add(v.Type())).Add(v.Type()).Block(
		append(body, jen.Return(v.Add(jen.Id("acc0"), jen.Id("acc1"))))...)
	src, err := Render(f)
	if err != nil {
		panic(err)
	}
	fmt.Print(string(src))
	// Output:
	// // Code generated by autotune. DO NOT EDIT.
	//
	// package kernels
	//
	// import "simd/archsimd"
	//
	// func sum(s []float32, acc0, acc1 archsimd.Float32x16) archsimd.Float32x16 {
	// 	for c := 0; c < 32; c += 32 {
	// 		acc0 = acc0.Add(archsimd.LoadFloat32x16Slice(s[c:]))
	// 		acc1 = acc1.Add(archsimd.LoadFloat32x16Slice(s[c+16:]))
	// 	}
	// 	// The last 8 elements.
	// 	{
	// 		acc0 = acc0.Add(archsimd.LoadFloat32x16SlicePart(s[32:]))
	// 	}
	// 	return acc0.Add(acc1)
	// }
}
