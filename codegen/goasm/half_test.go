package goasm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestHalf builds golang.Half's conversions for bf16 and f16, in scalar Go
// and with this package's assembly for whole vectors, and requires of each
// the bits of package dtype: decoding every 16-bit pattern, and encoding
// every value of the dtype, every midpoint between neighbours (the ties),
// float32 values of every exponent and the specials. The lengths are not
// multiples of 8, so the scalar tails run after the assembly too.
func TestHalf(t *testing.T) {
	isa := device.Host().CPU.ISA
	withAsm := []bool{false}
	if isa.AVX2 {
		withAsm = append(withAsm, true)
	} else {
		t.Log("the host has no AVX2: scalar conversions only")
	}
	halves := []dtype.DType{dtype.BF16, dtype.F16}

	// The float32 inputs of encode, the same for both dtypes.
	var xs []float32
	for _, dt := range halves {
		for h := range 1<<16 - 1 {
			a, b := float64(dt.Decode(uint16(h))), float64(dt.Decode(uint16(h+1)))
			xs = append(xs, float32(a))
			if mid := float32((a + b) / 2); float64(mid) == (a+b)/2 {
				xs = append(xs, mid)
			}
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100_000 {
		xs = append(xs, math.Float32frombits(rng.Uint32()))
	}
	inf := float32(math.Inf(1))
	xs = append(xs, inf, -inf, float32(math.NaN()), 65504, 65520, 0x1p-25, 0x1p-24, -0x1p-150, 3)

	var b strings.Builder
	b.WriteString(Header)
	f := golang.NewFile("main")
	var table []jen.Code
	for _, dt := range halves {
		for _, asm := range withAsm {
			h := golang.Half{Prefix: fmt.Sprintf("%s%v", dt, asm), DType: dt, Asm: asm}
			h.Emit(f)
			if asm {
				b.WriteString(Half(dt, h.AsmDecode(), h.AsmEncode()))
			}
			table = append(table, jen.Values(jen.Lit(h.Prefix), jen.Id(h.Decode()), jen.Id(h.Encode())))
		}
	}
	f.Var().Id("variants").Op("=").Index().Id("variant").Values(table...)
	src, err := golang.Render(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(x))
	}
	files := map[string][]byte{
		"go.mod": []byte("module halves\n\ngo 1.26\n"), "halves.go": src, "halves_amd64.s": []byte(b.String()),
		"driver.go": []byte(halfDriver), "in": in,
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "halves")
	kerneltest.Go(t, dir, "build", "-o", bin, ".")
	cmd := exec.Command(bin)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}

	for _, dt := range halves {
		for _, asm := range withAsm {
			name := fmt.Sprintf("%s%v", dt, asm)
			dec, err := os.ReadFile(filepath.Join(dir, name+".decoded"))
			if err != nil {
				t.Fatal(err)
			}
			for h := range 1 << 16 {
				got := math.Float32frombits(binary.LittleEndian.Uint32(dec[4*h:]))
				want := dt.Decode(uint16(h))
				if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
					t.Fatalf("%s (assembly %v): decoding %#04x gives %g, want %g", dt, asm, h, got, want)
				}
			}
			enc, err := os.ReadFile(filepath.Join(dir, name+".encoded"))
			if err != nil {
				t.Fatal(err)
			}
			for i, x := range xs {
				got, want := binary.LittleEndian.Uint16(enc[2*i:]), dt.Encode(x)
				if got != want && !(x != x && dt.Decode(got) != dt.Decode(got)) {
					t.Fatalf("%s (assembly %v): encoding %g (%#08x) gives %#04x, want %#04x", dt, asm, x, math.Float32bits(x), got, want)
				}
			}
		}
	}
}

// halfDriver decodes every 16-bit pattern and encodes the float32 values
// of the file in with every variant, and writes the results to files
// named after the variant.
const halfDriver = `package main

import (
	"encoding/binary"
	"math"
	"os"
)

type variant struct {
	name   string
	decode func(dst []float32, src []uint16)
	encode func(dst []uint16, src []float32)
}

func main() {
	raw, err := os.ReadFile("in")
	if err != nil {
		panic(err)
	}
	xs := make([]float32, len(raw)/4)
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
	}
	hs := make([]uint16, 1<<16+3) // three past the whole vectors: a scalar tail
	for i := range hs {
		hs[i] = uint16(i)
	}
	for _, v := range variants {
		dec := make([]float32, len(hs))
		v.decode(dec, hs)
		out := make([]byte, 4*len(dec))
		for i, x := range dec {
			binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
		}
		if err := os.WriteFile(v.name+".decoded", out, 0o666); err != nil {
			panic(err)
		}
		enc := make([]uint16, len(xs))
		v.encode(enc, xs)
		out = make([]byte, 2*len(enc))
		for i, h := range enc {
			binary.LittleEndian.PutUint16(out[2*i:], h)
		}
		if err := os.WriteFile(v.name+".encoded", out, 0o666); err != nil {
			panic(err)
		}
	}
}
`
