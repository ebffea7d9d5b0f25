package goasm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestNarrowNE rounds float32s to bf16 with Reg16.NarrowNE, in pairs of
// vectors whose instructions are interleaved, as an unrolled loop's, then
// 16 at a time, and requires package dtype's bits for every one: the
// midpoints between neighbouring bf16 values (the ties), random bit
// patterns, the specials, and vectors holding a subnormal, which CheckNE
// stores again with Narrow's instructions, both alone and among normal
// values, first or second in a pair; the last vector is partial, stored
// under a mask, with the words past it left alone. It does so with the
// stores through the caches and streamed (Reg16.Stream), where CheckNE's
// stores replace streamed ones.
func TestNarrowNE(t *testing.T) {
	if isa := device.Host().CPU.ISA; !isa.AVX512BF16 {
		t.Skip("the host has no AVX512-BF16")
	}
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) { testNarrowNE(t, stream) })
	}
}

func testNarrowNE(t *testing.T, stream bool) {
	var xs []float32
	for h := range 1<<16 - 1 {
		a, b := float64(dtype.BF16.Decode(uint16(h))), float64(dtype.BF16.Decode(uint16(h+1)))
		xs = append(xs, float32(a), float32((a+b)/2))
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 50_000 {
		xs = append(xs, math.Float32frombits(rng.Uint32()))
	}
	// Pairs of vectors of normal values but one subnormal, at every lane
	// of the first vector and of the second, aligned to the pairs.
	for len(xs)%32 != 0 {
		xs = append(xs, 1)
	}
	for l := range 32 {
		for i := range 32 {
			x := float32(rng.Float64() + 0.5)
			if i == l {
				x = math.Float32frombits(uint32(rng.IntN(1<<23-1)+1) | uint32(rng.IntN(2))<<31)
			}
			xs = append(xs, x)
		}
	}
	inf := float32(math.Inf(1))
	xs = append(xs, inf, -inf, float32(math.NaN()), math.Float32frombits(0x7f800001), 0x1p-127, 3)

	h := Reg16{DType: dtype.BF16, Lanes: 16, Consts: [3]string{"Z25", "Z26", "Z27"}, Stream: stream}
	var b strings.Builder
	b.WriteString(Header)
	b.WriteString("\n// func narrow(dst *uint16, src *float32, n int)\nTEXT ·narrow(SB), NOSPLIT, $0-24\n")
	w := func(s string) { b.WriteString("\t" + s + "\n") }
	for _, l := range append([]string{"MOVQ dst+0(FP), DI", "MOVQ src+8(FP), SI", "MOVQ n+16(FP), CX"}, SetConsts([3]int{25, 26, 27})...) {
		w(l)
	}
	b.WriteString("loop:\n")
	// Pairs of vectors, their instructions interleaved as an unrolled
	// loop's, then single vectors, then the partial one.
	var slow []string
	for _, l := range []string{"CMPQ CX, $32", "JLT one", "VMOVUPS (SI), Z8", "VMOVUPS 64(SI), Z9"} {
		w(l)
	}
	pair := []NE{{P: "Z8", X: "Z17", T: "Z0", Nan: "K2", Addr: "(DI)"}, {P: "Z9", X: "Z18", T: "Z1", Nan: "K3", Addr: "32(DI)"}}
	first, second := h.NarrowNE(pair[0]), h.NarrowNE(pair[1])
	for i := range first {
		w(first[i])
		w(second[i])
	}
	check, s := h.CheckNE(pair, "pair")
	slow = append(slow, s...)
	for _, l := range append(check, "ADDQ $128, SI", "ADDQ $64, DI", "SUBQ $32, CX", "JMP loop") {
		w(l)
	}
	b.WriteString("one:\n")
	one := []NE{{P: "Z8", X: "Z17", T: "Z0", Nan: "K2", Addr: "(DI)"}}
	check, s = h.CheckNE(one, "one")
	slow = append(slow, s...)
	for _, l := range slices.Concat([]string{"CMPQ CX, $16", "JLT tail", "VMOVUPS (SI), Z8"}, h.NarrowNE(one[0]), check,
		[]string{"ADDQ $64, SI", "ADDQ $32, DI", "SUBQ $16, CX", "JMP one"}) {
		w(l)
	}
	b.WriteString("tail:\n")
	for _, l := range []string{"TESTQ CX, CX", "JZ done", "MOVL $1, AX", "SHLL CX, AX", "SUBL $1, AX", "KMOVW AX, K1", "VMOVUPS.Z (SI), K1, Z8"} {
		w(l)
	}
	part := []NE{{P: "Z8", X: "Z17", T: "Z0", Nan: "K2", Addr: "(DI)", Mask: "K1"}}
	check, s = h.CheckNE(part, "part")
	slow = append(slow, s...)
	for _, l := range append(h.NarrowNE(part[0]), check...) {
		w(l)
	}
	b.WriteString("done:\n")
	if stream {
		w("SFENCE")
	}
	w("VZEROUPPER")
	w("RET")
	for _, l := range slow {
		w(l)
	}

	n := len(xs) - 5 // the last vector partial
	main := fmt.Sprintf(`package main

import (
	"encoding/binary"
	"math"
	"os"
	"unsafe"
)

func narrow(dst *uint16, src *float32, n int)

func main() {
	b, _ := os.ReadFile(os.Args[1])
	src := make([]float32, len(b)/4)
	for i := range src {
		src[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	dst := make([]uint16, len(src)+16)
	if uintptr(unsafe.Pointer(&dst[0]))%%32 != 0 {
		panic("dst is not aligned for VMOVNTDQ")
	}
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
