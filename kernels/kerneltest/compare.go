package kerneltest

import "math"

// A Comparison is how far one output is from the reference.
type Comparison struct {
	Bad, First int     // wrong outputs, and the index of the first (-1 if none)
	Worst      float64 // largest error as a fraction of the tolerance
}

// Compare checks got against want: |got-want| ≤ abs + rel·|want|, which
// NaN never is.
func Compare(got []float32, want []float64, rel, abs float64) Comparison {
	c := Comparison{First: -1}
	for i, w := range want {
		tol := abs + rel*math.Abs(w)
		err := math.Abs(float64(got[i]) - w)
		if err <= tol {
			c.Worst = max(c.Worst, err/tol)
			continue
		}
		if c.Bad == 0 {
			c.First = i
		}
		c.Bad++
	}
	return c
}

// CompareNaN is Compare for references that may be NaN: it wants NaN
// exactly where want is NaN, and elsewhere |got-want| ≤ abs + rel·|want|.
func CompareNaN(got []float32, want []float64, rel, abs float64) Comparison {
	c := Comparison{First: -1}
	for i, w := range want {
		g := float64(got[i])
		var ok bool
		if math.IsNaN(w) {
			ok = math.IsNaN(g)
		} else {
			tol := abs + rel*math.Abs(w)
			err := math.Abs(g - w)
			ok = err <= tol // false for NaN
			if ok {
				c.Worst = max(c.Worst, err/tol)
			}
		}
		if !ok {
			if c.Bad == 0 {
				c.First = i
			}
			c.Bad++
		}
	}
	return c
}
