// Command driver runs generated gemm kernels for the package's tests. The
// tests copy it into a throw-away module next to the generated kernels and a
// generated table of them, table.go:
//
//	var kernels = []kernel{{"K0", "vec=16,mr=4,…", 17, 1, 33, false, func(c, a, b, _ []float32) { K0(c, a, b) }}, …}
//
// Every kernel is called with a bias vector; those that take none (bias
// false) ignore it.
//
// Usage:
//
//	driver run JOBS       for each line "name a b bias" of the file JOBS
//	                      (bias "-" for a kernel without one), fill the
//	                      output with NaN, run the kernel on the float32
//	                      matrices in the files a and b and the vector in
//	                      bias (little-endian), check that it left them
//	                      alone, and write the output to stdout in the
//	                      same form
//	driver bench ROUNDS   time every kernel (one shape) side by side,
//	                      interleaved; print a table with GFLOP/s
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

type kernel struct {
	name, config string
	m, n, k      int
	bias         bool
	fn           func(c, a, b, bias []float32)
}

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
	byName := make(map[string]kernel, len(kernels))
	for _, k := range kernels {
		byName[k.name] = k
	}
	inputs := make(map[string][]float32)
	load := func(path string) ([]float32, error) {
		if xs, ok := inputs[path]; ok {
			return xs, nil
		}
		xs, err := readFloats(path)
		inputs[path] = xs
		return xs, err
	}
	var c, a, b, bias []float32
	var buf []byte
	for line := range strings.Lines(string(jobs)) {
		f := strings.Fields(line)
		if len(f) != 4 {
			return fmt.Errorf("job %q: want name a b bias", line)
		}
		k, ok := byName[f[0]]
		if !ok {
			return fmt.Errorf("no kernel %q", f[0])
		}
		inA, err := load(f[1])
		if err != nil {
			return err
		}
		inB, err := load(f[2])
		if err != nil {
			return err
		}
		var inBias []float32
		if f[3] != "-" {
			if inBias, err = load(f[3]); err != nil {
				return err
			}
		}
		if len(inA) != k.m*k.k || len(inB) != k.k*k.n {
			return fmt.Errorf("%s: %d and %d values for a %dx%dx%d kernel", k.name, len(inA), len(inB), k.m, k.n, k.k)
		}
		if k.bias != (inBias != nil) || k.bias && len(inBias) != k.n {
			return fmt.Errorf("%s: %d values of bias for a %dx%dx%d kernel (bias %v)", k.name, len(inBias), k.m, k.n, k.k, k.bias)
		}
		a, b, bias = append(a[:0], inA...), append(b[:0], inB...), append(bias[:0], inBias...)
		c = slices.Grow(c[:0], k.m*k.n)[:k.m*k.n]
		for i := range c {
			c[i] = float32(math.NaN())
		}
		k.fn(c, a, b, bias)
		if !slices.Equal(a, inA) || !slices.Equal(b, inB) || !slices.Equal(bias, inBias) {
			return fmt.Errorf("%s (%s) wrote to its inputs", k.name, k.config)
		}
		buf = buf[:0]
		for _, y := range c {
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

// bench times every kernel on one pair of random matrices. Every round runs
// each of them once, in an order that rotates from round to round, so that
// drift of the machine hits all of them alike.
func bench(rounds int) {
	m, n, k := kernels[0].m, kernels[0].n, kernels[0].k
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n int) []float32 {
		xs := make([]float32, n)
		for i := range xs {
			xs[i] = float32(rng.Float64()*2 - 1)
		}
		return xs
	}
	a, b, c, bias := random(m*k), random(k*n), make([]float32, m*n), random(n)
	samples := make([][]time.Duration, len(kernels))
	for round := -1; round < rounds; round++ { // round -1 warms up
		for i := range kernels {
			j := (i + round + 1) % len(kernels)
			start := time.Now()
			kernels[j].fn(c, a, b, bias)
			if d := time.Since(start); round >= 0 {
				samples[j] = append(samples[j], d)
			}
		}
	}
	flops := 2 * float64(m) * float64(n) * float64(k)
	gflops := func(d time.Duration) float64 { return flops / float64(d) }
	med := make([]time.Duration, len(kernels))
	for i, s := range samples {
		slices.Sort(s)
		med[i] = s[len(s)/2]
	}
	fmt.Printf("%-72s %9s %9s %9s %9s %8s\n", "kernel", "median ms", "GFLOP/s", "p20", "p80", "× first")
	for i, kr := range kernels {
		s := samples[i]
		fmt.Printf("%-72s %9.2f %9.1f %9.1f %9.1f %8.1f\n", kr.config, float64(med[i])/1e6, gflops(med[i]),
			gflops(s[len(s)*4/5]), gflops(s[len(s)/5]), float64(med[0])/float64(med[i]))
	}
}
