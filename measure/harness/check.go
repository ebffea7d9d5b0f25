package harness

import (
	"fmt"
	"math"

	"github.com/autotune-dev/autotune/dtype"
)

// Poison fills out with NaN before a checked call, so that an element the
// kernel never writes is wrong.
func Poison(out []float32) {
	nan := float32(math.NaN())
	for i := range out {
		out[i] = nan
	}
}

// Check compares out with the reference want: an element is wrong where
// |got-want| > abs + rel·|want|, or where exactly one of them is NaN (an
// infinite want needs the same infinity). It describes the first wrong
// element and counts them, or returns "".
func Check(out []float32, want []float64, rel, abs float64) string {
	bad, first := 0, -1
	for i, w := range want {
		g := float64(out[i])
		if g == w || math.IsNaN(g) && math.IsNaN(w) {
			continue
		}
		// A NaN difference fails this test too; an infinite want has an
		// infinite tolerance and needs the test above.
		if !math.IsInf(w, 0) && math.Abs(g-w) <= abs+rel*math.Abs(w) {
			continue
		}
		if first < 0 {
			first = i
		}
		bad++
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("out[%d] = %g, want %g (tolerance %g + %g×|want|); %d of %d outputs wrong",
		first, out[first], want[first], abs, rel, bad, len(want))
}

// Changed describes the first element of ins that differs from its
// pristine copy, bit for bit, or returns "": a kernel must not write to
// its inputs.
func Changed(ins, pristine [][]float32) string {
	for i, in := range ins {
		for j, v := range in {
			if math.Float32bits(v) != math.Float32bits(pristine[i][j]) {
				return fmt.Sprintf("the kernel wrote to input %d: in%d[%d] = %g, was %g", i, i, j, v, pristine[i][j])
			}
		}
	}
	return ""
}

// Poison16 fills out with 0xffff before a checked call of a kernel whose
// output is stored in 16 bits: a NaN in bf16 and in f16 alike.
func Poison16(out []uint16) {
	for i := range out {
		out[i] = 0xffff
	}
}

// Changed16 is Changed for inputs stored in 16 bits as dt, whose pristine
// values (already rounded to dt) are pristine.
func Changed16(ins [][]uint16, pristine [][]float32, dt dtype.DType) string {
	for i, in := range ins {
		for j, h := range in {
			if was := dt.Encode(pristine[i][j]); h != was {
				return fmt.Sprintf("the kernel wrote to input %d: in%d[%d] = %g (%#04x), was %g (%#04x)",
					i, i, j, dt.Decode(h), h, pristine[i][j], was)
			}
		}
	}
	return ""
}
