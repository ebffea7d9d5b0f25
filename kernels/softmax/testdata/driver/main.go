// Command driver runs generated softmax kernels for the package's tests. The
// tests copy it into a throw-away module next to the generated kernels and a
// generated table of them, kernels.go:
//
//	var kernels = []kernel{{"K0", "vec=16,unroll=4,…", 3, 17, K0}, …}
//
// Usage:
//
//	driver run JOBS       for each line "name input" of the file JOBS, fill
//	                      the output with NaN, run the kernel on the float32
//	                      matrix in the file input (little-endian), and
//	                      write the output to stdout in the same form
//	driver bench ROUNDS   time every kernel (one shape), plain Go softmax and
//	                      copy side by side, interleaved; print a table
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
	rows, cols   int
	fn           func(dst, src []float32)
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
	var dst []float32
	var buf []byte
	for line := range strings.Lines(string(jobs)) {
		name, input, _ := strings.Cut(strings.TrimSpace(line), " ")
		k, ok := byName[name]
		if !ok {
			return fmt.Errorf("no kernel %q", name)
		}
		src, ok := inputs[input]
		if !ok {
			if src, err = readFloats(input); err != nil {
				return err
			}
			inputs[input] = src
		}
		if len(src) != k.rows*k.cols {
			return fmt.Errorf("%s: %d values for %s, a %dx%d kernel", input, len(src), name, k.rows, k.cols)
		}
		dst = slices.Grow(dst[:0], len(src))[:len(src)]
		for i := range dst {
			dst[i] = float32(math.NaN())
		}
		k.fn(dst, src)
		buf = buf[:0]
		for _, y := range dst {
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

// bench times each kernel, plainSoftmax and copy on one random matrix. Every
// round runs each of them three times, in an order that rotates from round
// to round, so that drift of the machine hits all of them alike.
func bench(rounds int) {
	rows, cols := kernels[0].rows, kernels[0].cols
	rng := rand.New(rand.NewPCG(1, 2))
	src := make([]float32, rows*cols)
	for i := range src {
		src[i] = float32(rng.NormFloat64()*4) + 0.1
	}
	dst := make([]float32, len(src))
	type entry struct {
		name    string
		fn      func(dst, src []float32)
		samples []time.Duration
	}
	entries := []*entry{
		{name: "plain Go (math.Exp)", fn: func(d, s []float32) { plainSoftmax(d, s, rows, cols) }},
		{name: fmt.Sprintf("copy (%d MiB moved)", 2*4*len(src)>>20), fn: func(d, s []float32) { copy(d, s) }},
	}
	for _, k := range kernels {
		entries = append(entries, &entry{name: k.config, fn: k.fn})
	}
	for round := -1; round < rounds; round++ { // round -1 warms up
		for i := range entries {
			e := entries[(i+round+1)%len(entries)]
			for range 3 {
				start := time.Now()
				e.fn(dst, src)
				if d := time.Since(start); round >= 0 {
					e.samples = append(e.samples, d)
				}
			}
		}
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	med := func(e *entry) time.Duration { slices.Sort(e.samples); return e.samples[len(e.samples)/2] }
	plain, cp := med(entries[0]), med(entries[1])
	fmt.Printf("%-64s %9s %9s %9s %9s %9s\n", "kernel", "median ms", "p20 ms", "p80 ms", "× plain", "/ copy")
	for _, e := range entries {
		m := med(e)
		n := len(e.samples)
		fmt.Printf("%-64s %9.3f %9.3f %9.3f %9.1f %9.2f\n", e.name, ms(m), ms(e.samples[n/5]), ms(e.samples[n*4/5]),
			float64(plain)/float64(m), float64(m)/float64(cp))
	}
}

// plainSoftmax is the baseline: three loops over each row, exp in float64.
func plainSoftmax(dst, src []float32, rows, cols int) {
	for r := range rows {
		s, d := src[r*cols:(r+1)*cols], dst[r*cols:(r+1)*cols]
		m := float32(math.Inf(-1))
		for _, x := range s {
			m = max(m, x)
		}
		var sum float32
		for i, x := range s {
			d[i] = float32(math.Exp(float64(x - m)))
			sum += d[i]
		}
		for i := range d {
			d[i] /= sum
		}
	}
}
