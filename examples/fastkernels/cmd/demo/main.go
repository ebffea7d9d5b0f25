// Command demo calls the generated package fastkernels on a few shapes,
// some tuned and some not, and prints for each call which kernel ran
// (fastkernels.Variant), the median time of several runs against a plain
// Go implementation of the same op, and the largest difference between the
// two results.
//
//	go run ./examples/fastkernels/cmd/demo              # plain and scalar forms
//	GOEXPERIMENT=simd go run ./examples/fastkernels/cmd/demo
//
// With GOEXPERIMENT=simd the vector kernels run on a CPU that has their
// instructions. Without it, on such a CPU (amd64), the kernels with Go
// assembly tiles run their plain forms, the same tiles with plain Go
// around them, named as the vector kernels; every other kernel runs its
// scalar form (Variant names end in Scalar).
package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/autotune-dev/autotune/examples/fastkernels"
)

// A call is one op at one shape: the generated kernel and the plain Go
// implementation, each writing args[0] from the other args.
type call struct {
	op    string // as Variant names it
	shape []int
	lens  []int // of the output, then the inputs
	fast  func(args [][]float32)
	plain func(args [][]float32)
}

func softmax(rows, cols int) call {
	return call{"softmax", []int{rows, cols}, []int{rows * cols, rows * cols},
		func(a [][]float32) { fastkernels.Softmax(a[0], a[1], rows, cols) },
		func(a [][]float32) { plainSoftmax(a[0], a[1], rows, cols) }}
}

func gemm(m, n, k int) call {
	return call{"gemm", []int{m, n, k}, []int{m * n, m * k, k * n},
		func(a [][]float32) { fastkernels.Gemm(a[0], a[1], a[2], m, n, k) },
		func(a [][]float32) { plainGemm(a[0], a[1], a[2], nil, false, m, n, k) }}
}

func gemmBias(m, n, k int, relu bool) call {
	op, fast := "gemm_bias", fastkernels.GemmBias
	if relu {
		op, fast = "gemm_bias_relu", fastkernels.GemmBiasReLU
	}
	return call{op, []int{m, n, k}, []int{m * n, m * k, k * n, n},
		func(a [][]float32) { fast(a[0], a[1], a[2], a[3], m, n, k) },
		func(a [][]float32) { plainGemm(a[0], a[1], a[2], a[3], relu, m, n, k) }}
}

func attention(b, h, s, d int, causal bool) call {
	op := "attention"
	if causal {
		op = "attention_causal"
	}
	n := b * h * s * d
	return call{op, []int{b, h, s, d}, []int{n, n, n, n},
		func(a [][]float32) { fastkernels.Attention(a[0], a[1], a[2], a[3], b, h, s, d, causal) },
		func(a [][]float32) { plainAttention(a[0], a[1], a[2], a[3], b, h, s, d, causal) }}
}

// calls are the shapes the demo runs: each op at a tuned shape (exact), at
// shapes never tuned (nearest), and gemm_bias, which has no tuned shape
// (default).
var calls = []call{
	softmax(512, 1024),
	softmax(300, 1000),
	softmax(7, 5000),
	gemm(256, 256, 256),
	gemm(100, 300, 200),
	gemmBias(256, 256, 256, false),
	gemmBias(128, 768, 768, true),
	attention(1, 4, 256, 64, false),
	attention(1, 4, 256, 64, true),
	attention(2, 2, 100, 32, false),
}

func main() {
	runs := flag.Int("runs", 7, "timed runs of each function; the median is printed")
	flag.Parse()
	if err := run(os.Stdout, calls, *runs); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// run times each call, the generated kernel and plain Go alternately, and
// prints a line for each. It fails when a kernel's result is not close to
// plain Go's.
func run(w io.Writer, calls []call, runs int) error {
	r := rand.New(rand.NewPCG(1, 2))
	fmt.Fprintf(w, "%-16s %-12s %-44s %12s %12s %8s %9s\n", "op", "shape", "variant", "fastkernels", "plain Go", "speedup", "max diff")
	for _, c := range calls {
		fast := make([][]float32, len(c.lens))
		for i, n := range c.lens {
			fast[i] = make([]float32, n)
			if i > 0 {
				for j := range fast[i] {
					fast[i][j] = float32(r.NormFloat64())
				}
			}
		}
		plain := slices.Clone(fast)
		plain[0] = make([]float32, c.lens[0])
		var tf, tp []time.Duration
		for range runs {
			tf = append(tf, timed(func() { c.fast(fast) }))
			tp = append(tp, timed(func() { c.plain(plain) }))
		}
		diff, scale := 0.0, 0.0
		for i := range fast[0] {
			diff = max(diff, math.Abs(float64(fast[0][i]-plain[0][i])))
			scale = max(scale, math.Abs(float64(plain[0][i])))
		}
		shape := strings.Trim(strings.ReplaceAll(fmt.Sprint(c.shape), " ", "x"), "[]")
		mf, mp := median(tf), median(tp)
		fmt.Fprintf(w, "%-16s %-12s %-44s %12v %12v %7.1fx %9.2g\n", c.op, shape, fastkernels.Variant(c.op, c.shape...),
			mf.Round(time.Microsecond/10), mp.Round(time.Microsecond/10), float64(mp)/float64(mf), diff)
		// The inputs are of order one: a correct float32 kernel is well
		// within 1e-3 of the largest output.
		if !(diff <= 1e-3*max(scale, 1)) {
			return fmt.Errorf("%s %s: result differs from plain Go by %g", c.op, shape, diff)
		}
	}
	return nil
}

func timed(f func()) time.Duration {
	start := time.Now()
	f()
	return time.Since(start)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// plainSoftmax is row-wise softmax, straightforwardly.
func plainSoftmax(dst, src []float32, rows, cols int) {
	for i := range rows {
		x, y := src[i*cols:][:cols], dst[i*cols:][:cols]
		m := float32(math.Inf(-1))
		for _, v := range x {
			m = max(m, v)
		}
		var sum float32
		for j, v := range x {
			y[j] = float32(math.Exp(float64(v - m)))
			sum += y[j]
		}
		for j := range y {
			y[j] /= sum
		}
	}
}

// plainGemm is c = a·b (+ bias, then max(0, ·) with relu) in the i-k-j
// loop order.
func plainGemm(c, a, b, bias []float32, relu bool, m, n, k int) {
	for i := range m {
		row := c[i*n:][:n]
		clear(row)
		for p := range k {
			x := a[i*k+p]
			for j, y := range b[p*n:][:n] {
				row[j] += x * y
			}
		}
		if bias != nil {
			for j := range row {
				row[j] += bias[j]
				if relu {
					row[j] = max(row[j], 0)
				}
			}
		}
	}
}

// plainAttention is softmax(q·kᵀ/√d (+ causal mask))·v for each batch and
// head, a row of scores at a time.
func plainAttention(o, q, k, v []float32, b, h, s, d int, causal bool) {
	scale := float32(1 / math.Sqrt(float64(d)))
	scores := make([]float32, s)
	for bh := range b * h {
		base := bh * s * d
		for i := range s {
			qi := q[base+i*d:][:d]
			keys := s
			if causal {
				keys = i + 1
			}
			m := float32(math.Inf(-1))
			for j := range keys {
				var dot float32
				for t, x := range k[base+j*d:][:d] {
					dot += qi[t] * x
				}
				scores[j] = dot * scale
				m = max(m, scores[j])
			}
			var sum float32
			for j := range keys {
				scores[j] = float32(math.Exp(float64(scores[j] - m)))
				sum += scores[j]
			}
			oi := o[base+i*d:][:d]
			clear(oi)
			for j := range keys {
				p := scores[j] / sum
				for t, x := range v[base+j*d:][:d] {
					oi[t] += p * x
				}
			}
		}
	}
}
