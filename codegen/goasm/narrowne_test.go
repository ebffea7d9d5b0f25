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

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestNarrowNE rounds float32s to bf16 with Reg16.NarrowNE, 16 at a time,
// and requires package dtype's bits for every one: the midpoints between
// neighbouring bf16 values (the ties), random bit patterns, the specials,
// and vectors holding a subnormal, which take Narrow's instructions, both
// alone and among normal values; the last vector is partial, stored
// under a mask, with the words past it left alone.
func TestNarrowNE(t *testing.T) {
	if isa := device.Host().CPU.ISA; !isa.AVX512BF16 {
		t.Skip("the host has no AVX512-BF16")
	}
	var xs []float32
	for h := range 1<<16 - 1 {
		a, b := float64(dtype.BF16.Decode(uint16(h))), float64(dtype.BF16.Decode(uint16(h+1)))
		xs = append(xs, float32(a), float32((a+b)/2))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50_000 {
		xs = append(xs, math.Float32frombits(rng.Uint32()))
	}
	// Vectors of normal values but one subnormal, at every lane.
	for l := range 16 {
		for i := range 16 {
			x := float32(rng.Float64() + 0.5)
			if i == l {
				x = math.Float32frombits(uint32(rng.IntN(1<<23-1)+1) | uint32(rng.IntN(2))<<31)
			}
			xs = append(xs, x)
		}
	}
	inf := float32(math.Inf(1))
	xs = append(xs, inf, -inf, float32(math.NaN()), math.Float32frombits(0x7f800001), 0x1p-127, 3)

	h := Reg16{DType: dtype.BF16, Lanes: 16, Consts: [3]string{"Z25", "Z26", "Z27"}}
	var b strings.Builder
	b.WriteString(Header)
	b.WriteString("\n// func narrow(dst *uint16, src *float32, n int)\nTEXT ·narrow(SB), NOSPLIT, $0-24\n")
	w := func(s string) { b.WriteString("\t" + s + "\n") }
	for _, l := range append([]string{"MOVQ dst+0(FP), DI", "MOVQ src+8(FP), SI", "MOVQ n+16(FP), CX"}, SetConsts([3]int{25, 26, 27})...) {
		w(l)
	}
	b.WriteString("loop:\n")
	for _, l := range []string{"CMPQ CX, $16", "JLT tail", "VMOVUPS (SI), Z8"} {
		w(l)
	}
	full, fullSlow := h.NarrowNE("Z8", "Z17", "Z0", "K2", "(DI)", "", "full")
	for _, l := range full {
		w(l)
	}
	for _, l := range []string{"ADDQ $64, SI", "ADDQ $32, DI", "SUBQ $16, CX", "JMP loop"} {
		w(l)
	}
	b.WriteString("tail:\n")
	for _, l := range []string{"TESTQ CX, CX", "JZ done", "MOVL $1, AX", "SHLL CX, AX", "SUBL $1, AX", "KMOVW AX, K1", "VMOVUPS.Z (SI), K1, Z8"} {
		w(l)
	}
	part, partSlow := h.NarrowNE("Z8", "Z17", "Z0", "K2", "(DI)", "K1", "part")
	for _, l := range part {
		w(l)
	}
	b.WriteString("done:\n")
	w("VZEROUPPER")
	w("RET")
	for _, l := range append(fullSlow, partSlow...) {
		w(l)
	}

	n := len(xs) - 5 // the last vector partial
	main := fmt.Sprintf(`package main

import (
	"encoding/binary"
	"math"
	"os"
)

func narrow(dst *uint16, src *float32, n int)

func main() {
	b, _ := os.ReadFile(os.Args[1])
	src := make([]float32, len(b)/4)
	for i := range src {
		src[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	dst := make([]uint16, len(src)+16)
	for i := range dst {
		dst[i] = 0xdead
	}
	narrow(&dst[0], &src[0], %d)
	out := make([]byte, 2*len(dst))
	for i, d := range dst {
		binary.LittleEndian.PutUint16(out[2*i:], d)
	}
	os.Stdout.Write(out)
}
`, n)
	dir := t.TempDir()
	in := make([]byte, 4*len(xs))
	for i, x := range xs {
		binary.LittleEndian.PutUint32(in[4*i:], math.Float32bits(x))
	}
	for name, body := range map[string]string{
		"go.mod": "module narrow\n\ngo 1.26\n", "main.go": main, "narrow_amd64.s": b.String(), "in": string(in),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "narrow")
	kerneltest.Go(t, dir, "build", "-o", bin, ".")
	out, err := exec.Command(bin, filepath.Join(dir, "in")).Output()
	if err != nil || len(out) != 2*(len(xs)+16) {
		t.Fatalf("%v: %d bytes of output", err, len(out))
	}
	bad := 0
	for i := range len(xs) + 16 {
		got, want := binary.LittleEndian.Uint16(out[2*i:]), uint16(0xdead)
		if i < n {
			want = dtype.BF16.Encode(xs[i])
		}
		if got != want && bad < 10 {
			bad++
			t.Errorf("word %d (of %#08x): %#04x, want %#04x", i, math.Float32bits(xs[min(i, len(xs)-1)]), got, want)
		}
	}
}
