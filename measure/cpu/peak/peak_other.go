//go:build !amd64

package peak

import "math"

// Without assembly the vector widths run the scalar chains lane by lane:
// the same FLOPs, at whatever speed the compiler gives them.

func fma16(steps int, x, y float32, acc *[Chains][16]float32) {
	for l := range 16 {
		var a [Chains][1]float32
		for i := range a {
			a[i][0] = acc[i][l]
		}
		fmaGo(steps, x, y, &a)
		for i := range a {
			acc[i][l] = a[i][0]
		}
	}
}

func fma8(steps int, x, y float32, acc *[Chains][8]float32) {
	for l := range 8 {
		var a [Chains][1]float32
		for i := range a {
			a[i][0] = acc[i][l]
		}
		fmaGo(steps, x, y, &a)
		for i := range a {
			acc[i][l] = a[i][0]
		}
	}
}

// dot16 adds both products of the pairs, low halves first, lane by lane.
func dot16(steps int, x, y uint32, acc *[Chains][16]float32) {
	bf := func(v uint32) float32 { return math.Float32frombits(v << 16) }
	lo, hi := bf(x)*bf(y), bf(x>>16)*bf(y>>16)
	for i := range acc {
		for l := range acc[i] {
			for range steps {
				acc[i][l] += lo
				acc[i][l] += hi
			}
		}
	}
}
