// Command driver runs generated kernels for the tests of the kernel
// templates (package kerneltest). A test's module holds a copy of it, the
// generated kernels and table.go, which fills table in an init function:
//
//	table = []Entry{{Name: "K0", Config: "vec=16,…", Ins: []int{51, 17}, Out: 17, FLOPs: 1734,
//		Fn: func(out []float32, in [][]float32) { K0(out, in[0], in[1]) }}, …}
//
// Usage:
//
//	driver run JOBS       for each line "name input…" of the file JOBS, one
//	                      file per input of the kernel (little-endian
//	                      float32), fill the output with NaN, run the kernel
//	                      on copies of the inputs, check that it left them
//	                      alone, and write the output to stdout in the same
//	                      form
//	driver bench ROUNDS   time every kernel of the table on random inputs,
//	                      side by side: each round runs each kernel once, in
//	                      an order that rotates from round to round; print a
//	                      table with GFLOP/s
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// A Kernel runs a generated kernel: the output, then the inputs.
type Kernel func(out []float32, ins [][]float32)

// An Entry is a kernel of the table.
type Entry struct {
	Name, Config string
	Ins          []int   // element counts of the inputs
	Out          int     // element count of the output
	FLOPs        float64 // work of one call; 0 when unknown
	Fn           Kernel
}

// table is the kernels of this build; the generated table.go fills it.
var table []Entry

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: driver run JOBS | driver bench ROUNDS")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2])
	case "bench":
		var rounds int
		if rounds, err = strconv.Atoi(os.Args[2]); err == nil {
			bench(rounds)
		}
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "driver:", err)
		os.Exit(1)
	}
}

func run(jobsFile string) error {
	jobs, err := os.ReadFile(jobsFile)
	if err != nil {
		return err
	}
	byName := make(map[string]Entry, len(table))
	for _, e := range table {
		byName[e.Name] = e
	}
	files := make(map[string][]float32)
	load := func(path string) ([]float32, error) {
		if xs, ok := files[path]; ok {
			return xs, nil
		}
		xs, err := readFloats(path)
		files[path] = xs
		return xs, err
	}
	var out []float32
	var ins [][]float32
	var buf []byte
	for line := range strings.Lines(string(jobs)) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		e, ok := byName[f[0]]
		switch {
		case !ok:
			return fmt.Errorf("no kernel %q", f[0])
		case len(f)-1 != len(e.Ins):
			return fmt.Errorf("job %q: %s takes %d inputs", strings.TrimSpace(line), e.Name, len(e.Ins))
		}
		pristine := make([][]float32, len(e.Ins))
		ins = ins[:0]
		for i, path := range f[1:] {
			if pristine[i], err = load(path); err != nil {
				return err
			}
			if len(pristine[i]) != e.Ins[i] {
				return fmt.Errorf("%s: %d values for input %d of %s, want %d", path, len(pristine[i]), i, e.Name, e.Ins[i])
			}
			ins = append(ins, slices.Clone(pristine[i]))
		}
		out = slices.Grow(out[:0], e.Out)[:e.Out]
		for i := range out {
			out[i] = float32(math.NaN())
		}
		e.Fn(out, ins)
		for i := range ins {
			if !slices.Equal(ins[i], pristine[i]) {
				return fmt.Errorf("%s (%s) wrote to input %d", e.Name, e.Config, i)
			}
		}
		buf = buf[:0]
		for _, y := range out {
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(y))
		}
		if _, err := os.Stdout.Write(buf); err != nil {
			return err
		}
	}
	return nil
}

func readFloats(path string) ([]float32, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	xs := make([]float32, len(b)/4)
	for i := range xs {
		xs[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return xs, nil
}

// bench times every kernel of the table on random inputs, drawn as the
// tuner's harness draws them (uniform in ±[0.125, 4]); kernels with the
// same input sizes get the same inputs.
func bench(rounds int) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := make(map[string][][]float32)
	args := make([][][]float32, len(table))
	outs := make([][]float32, len(table))
	for i, e := range table {
		key := fmt.Sprint(e.Ins)
		if _, ok := inputs[key]; !ok {
			for _, n := range e.Ins {
				xs := make([]float32, n)
				for j := range xs {
					x := 0.125 + rng.Float64()*(4-0.125)
					if rng.IntN(2) == 0 {
						x = -x
					}
					xs[j] = float32(x)
				}
				inputs[key] = append(inputs[key], xs)
			}
		}
		args[i], outs[i] = inputs[key], make([]float32, e.Out)
	}
	samples := make([][]time.Duration, len(table))
	for round := -1; round < rounds; round++ { // round -1 warms up
		for i := range table {
			j := (i + round + 1) % len(table)
			start := time.Now()
			table[j].Fn(outs[j], args[j])
			if d := time.Since(start); round >= 0 {
				samples[j] = append(samples[j], d)
			}
		}
	}
	med := make([]time.Duration, len(table))
	for i, s := range samples {
		slices.Sort(s)
		med[i] = s[len(s)/2]
	}
	gflops := func(flops float64, d time.Duration) string {
		if flops == 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", flops/float64(d))
	}
	fmt.Printf("%-72s %9s %9s %9s %9s %8s\n", "kernel", "median ms", "p20 ms", "p80 ms", "GFLOP/s", "× first")
	for i, e := range table {
		s := samples[i]
		fmt.Printf("%-72s %9.3f %9.3f %9.3f %9s %8.2f\n", e.Config, float64(med[i])/1e6, float64(s[len(s)/5])/1e6,
			float64(s[len(s)*4/5])/1e6, gflops(e.FLOPs, med[i]), float64(med[0])/float64(med[i]))
	}
}
