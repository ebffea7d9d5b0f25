//go:build !amd64

package peak

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
