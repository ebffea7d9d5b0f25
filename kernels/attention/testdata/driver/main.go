// Command driver runs generated attention kernels for the package's tests.
// The tests copy it into a throw-away module next to the generated kernels
// and a generated table of them, table.go:
//
//	var kernels = []kernel{{"K0", "vec=16,br=4,…", 1, 3, 7, 5, K0}, …}
//
// Usage:
//
//	driver run JOBS       for each line "name q k v" of the file JOBS, fill
//	                      the output with NaN, run the kernel on the float32
//	                      tensors in the files q, k and v (little-endian),
//	                      check that it left them alone, and write the
//	                      output to stdout in the same form
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
	b, h, s, d   int
	fn           func(out, q, k, v []float32)
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
	var out []float32
	ins := make([][]float32, 3)
	var buf []byte
	for line := range strings.Lines(string(jobs)) {
		f := strings.Fields(line)
		if len(f) != 4 {
			return fmt.Errorf("job %q: want name q k v", line)
		}
		k, ok := byName[f[0]]
		if !ok {
			return fmt.Errorf("no kernel %q", f[0])
		}
		n := k.b * k.h * k.s * k.d
		var pristine [3][]float32
		for i := range ins {
			if pristine[i], err = load(f[1+i]); err != nil {
				return err
			}
			if len(pristine[i]) != n {
				return fmt.Errorf("%s: %d values for a %dx%dx%dx%d kernel", k.name, len(pristine[i]), k.b, k.h, k.s, k.d)
			}
			ins[i] = append(ins[i][:0], pristine[i]...)
		}
		out = slices.Grow(out[:0], n)[:n]
		for i := range out {
			out[i] = float32(math.NaN())
		}
		k.fn(out, ins[0], ins[1], ins[2])
		for i := range ins {
			if !slices.Equal(ins[i], pristine[i]) {
				return fmt.Errorf("%s (%s) wrote to input %d", k.name, k.config, i)
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

// bench times every kernel on one set of random tensors, drawn as the
// tuner's harness draws them (uniform in ±[0.125, 4]). Every round runs
// each of them once, in an order that rotates from round to round, so that
// drift of the machine hits all of them alike.
func bench(rounds int) {
	b, h, s, d := kernels[0].b, kernels[0].h, kernels[0].s, kernels[0].d
	n := b * h * s * d
	rng := rand.New(rand.NewPCG(1, 2))
	random := func() []float32 {
		xs := make([]float32, n)
		for i := range xs {
			x := 0.125 + rng.Float64()*(4-0.125)
			if rng.IntN(2) == 0 {
				x = -x
			}
			xs[i] = float32(x)
		}
		return xs
	}
	q, k, v, out := random(), random(), random(), make([]float32, n)
	samples := make([][]time.Duration, len(kernels))
	for round := -1; round < rounds; round++ { // round -1 warms up
		for i := range kernels {
			j := (i + round + 1) % len(kernels)
			start := time.Now()
			kernels[j].fn(out, q, k, v)
			if d := time.Since(start); round >= 0 {
				samples[j] = append(samples[j], d)
			}
		}
	}
	flops := 4 * float64(b) * float64(h) * float64(s) * float64(s) * float64(d)
	gflops := func(d time.Duration) float64 { return flops / float64(d) }
	med := make([]time.Duration, len(kernels))
	for i, s := range samples {
		slices.Sort(s)
		med[i] = s[len(s)/2]
	}
	fmt.Printf("%-52s %9s %9s %9s %9s %8s\n", "kernel", "median ms", "GFLOP/s", "p20", "p80", "× first")
	for i, kr := range kernels {
		s := samples[i]
		fmt.Printf("%-52s %9.2f %9.1f %9.1f %9.1f %8.1f\n", kr.config, float64(med[i])/1e6, gflops(med[i]),
			gflops(s[len(s)*4/5]), gflops(s[len(s)/5]), float64(med[0])/float64(med[i]))
	}
}
