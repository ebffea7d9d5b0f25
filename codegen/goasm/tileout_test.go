package goasm_test

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestTileOut runs tiles that store rounded to bf16 or f16 (Tile.Out)
// beside the same tiles storing float32, on the same inputs, and
// requires every stored word to be package dtype's rounding of the
// float32 the other tile stored, bit for bit: at depth 13 on random
// values, and at depth 0, where the result is c as loaded, on hostile
// values (ties, subnormals, overflow to infinity, NaN). The words
// between out's rows must keep their poison, and c must not change.
func TestTileOut(t *testing.T) {
	isa := device.Host().CPU.ISA
	if !isa.AVX2 || !isa.FMA { // every such CPU has F16C, as the 16-bit kernels assume
		t.Skip("the host has no AVX2 and FMA")
	}
	lanes := []int{8}
	if isa.AVX512 {
		lanes = append(lanes, 16)
	}
	type pair struct{ f32, out goasm.Tile }
	var pairs []pair
	for _, l := range lanes {
		for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
			add := func(mr, nv int, init goasm.Init, bias, relu bool) {
				f := goasm.Tile{
					Name: fmt.Sprintf("F%d", len(pairs)), Lanes: l, MR: mr, NV: nv,
					ARow: 4 * 9, AStep: 4, BStep: 4 * (nv + 1) * l, CRow: 4 * (nv + 1) * l, Init: init, Bias: bias, ReLU: relu,
				}
				o := f
				o.Name, o.Out, o.ORow = fmt.Sprintf("O%d", len(pairs)), dt, 2*(nv+1)*l
				pairs = append(pairs, pair{f, o})
			}
			add(1, 1, goasm.Load, false, false)
			add(3, 2, goasm.Load, false, false)
			add(4, 2, goasm.Zero, true, false)
			add(2, 3, goasm.Load, true, true)
			if l == 16 {
				add(8, 3, goasm.Load, false, false) // 24 accumulators of 32 registers
			}
		}
	}
	var tiles []goasm.Tile
	f := golang.NewFile("main")
	var rows []jen.Code
	for _, p := range pairs {
		tiles = append(tiles, p.f32, p.out)
		f.Add(p.f32.Decl(), p.out.Decl())
		args := func(t goasm.Tile) []jen.Code {
			a := []jen.Code{jen.Id("c"), jen.Id("a"), jen.Id("b")}
			if t.Bias {
				a = append(a, jen.Id("bias"))
			}
			if t.Out != "" {
				a = append(a, jen.Id("out"))
			}
			return append(a, jen.Id("n"))
		}
		rows = append(rows, jen.Values(jen.Lit(p.f32.Lanes), jen.Lit(p.f32.MR), jen.Lit(p.f32.NV), jen.Lit(int(p.f32.Init)),
			jen.Func().Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b"), jen.Id("bias")).Op("*").Float32(), jen.Id("n").Int()).
				Block(jen.Id(p.f32.Name).Call(args(p.f32)...)),
			jen.Func().Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b"), jen.Id("bias")).Op("*").Float32(), jen.Id("out").Op("*").Uint16(), jen.Id("n").Int()).
				Block(jen.Id(p.out.Name).Call(args(p.out)...)),
		))
	}
	f.Var().Id("tiles").Op("=").Index().Id("tile").Values(rows...)
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{
		"go.mod": []byte("module tiles\n\ngo 1.26\n"), "tiles.go": src, "driver.go": []byte(outDriver),
		"tiles_amd64.s": goasm.File(tiles...),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "tiles")
	kerneltest.Go(t, dir, "build", "-o", bin, ".")
	out, err := exec.Command(bin, filepath.Join(dir, "results")).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	res, err := os.ReadFile(filepath.Join(dir, "results"))
	if err != nil {
		t.Fatal(err)
	}
	// The results are, per pair of tiles and per depth, the count of
	// words, then each float32's bits and the word stored for it.
	checked, bad := 0, 0
	for i := range 2 * len(pairs) {
		dt := pairs[i/2].out.Out
		n := int(binary.LittleEndian.Uint32(res))
		res = res[4:]
		for range n {
			x, got := math.Float32frombits(binary.LittleEndian.Uint32(res)), binary.LittleEndian.Uint16(res[4:])
			res = res[6:]
			checked++
			if want := dt.Encode(x); got != want && bad < 10 {
				bad++
				t.Errorf("%s of %s (%#08x) stored %#04x, want %#04x", pairs[i/2].out.Name, dt, math.Float32bits(x), got, want)
			}
		}
	}
	if len(res) != 0 || checked == 0 {
		t.Fatalf("%d words checked, %d bytes of results left over", checked, len(res))
	}
}

// outDriver runs each pair of tiles and writes their results (see
// TestTileOut); it exits non-zero where out's poison or c changed.
const outDriver = `package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
)

type tile struct {
	lanes, mr, nv, init int
	f32                 func(c, a, b, bias *float32, n int)
	out                 func(c, a, b, bias *float32, out *uint16, n int)
}

const poison = 0xdead

func main() {
	r := rand.New(rand.NewPCG(5, 6))
	val := func() float32 { return float32(r.Float64()*3.5+0.5) * float32(1-2*r.IntN(2)) }
	// hostile are float32s whose roundings test the edge cases: ties to
	// even in bf16 (0x3f808000, 0x3f818000) and f16 (1+2^-11, 1+3·2^-11),
	// subnormals of each, values that overflow f16, infinities, NaNs.
	hostile := []float32{
		math.Float32frombits(0x3f808000), math.Float32frombits(0x3f818000), 1 + 0x1p-11, 1 + 3*0x1p-11,
		0x1p-130, -0x1p-140, 0x1p-25, 0x1p-24, 3 * 0x1p-25, 65504, 65520, -70000, 3.4e38,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xff812345), 0, -0x1p-149,
	}
	var res []byte
	put := func(v uint32, size int) { res = binary.LittleEndian.AppendUint32(res, v)[:len(res)+size] }
	for ti, t := range tiles {
		for _, depth := range []int{13, 0} {
			stride := (t.nv + 1) * t.lanes // one poisoned vector after each row and step
			a := make([]float32, (t.mr-1)*9+max(depth-1, 0)+1)
			b := make([]float32, max(depth, 1)*stride)
			c := make([]float32, t.mr*stride)
			bias := make([]float32, t.nv*t.lanes)
			for _, x := range [][]float32{a, b, c, bias} {
				for i := range x {
					x[i] = val()
				}
			}
			if depth == 0 {
				for i := range c {
					c[i] = hostile[i%len(hostile)]
				}
			}
			c0 := append([]float32(nil), c...)
			out := make([]uint16, t.mr*stride)
			for i := range out {
				out[i] = poison
			}
			t.out(&c[0], &a[0], &b[0], &bias[0], &out[0], depth)
			for i := range c {
				if math.Float32bits(c[i]) != math.Float32bits(c0[i]) {
					fmt.Printf("tile %d depth %d: changed c[%d]\n", ti, depth, i)
					os.Exit(1)
				}
			}
			t.f32(&c[0], &a[0], &b[0], &bias[0], depth)
			n := 0
			for i := range out {
				if i%stride < t.nv*t.lanes {
					n++
				} else if out[i] != poison {
					fmt.Printf("tile %d depth %d: wrote out[%d], past its row\n", ti, depth, i)
					os.Exit(1)
				}
			}
			put(uint32(n), 4)
			for i := range out {
				if i%stride < t.nv*t.lanes {
					put(math.Float32bits(c[i]), 4)
					put(uint32(out[i]), 2)
				}
			}
		}
	}
	if err := os.WriteFile(os.Args[1], res, 0o666); err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
}
`
