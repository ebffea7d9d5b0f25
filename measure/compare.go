package measure

import (
	"fmt"
	"math"
)

// Compare returns "" when every got[i] is within abs + rel·|want[i]| of
// want[i], and otherwise describes the first element that is not and how
// many are wrong: "out[32] = NaN, want 0.0117 (tolerance ...); 3 of 165
// elements wrong". NaN is right only where the reference is NaN too, so an
// element a kernel never wrote (the output is poisoned with NaN) is wrong.
// Backends that check a kernel's output on the host share it.
func Compare(got []float32, want []float64, rel, abs float64) string {
	bad, first := 0, -1
	for i, g := range got {
		w := want[i]
		ok := math.IsNaN(w) && math.IsNaN(float64(g)) || math.Abs(float64(g)-w) <= abs+rel*math.Abs(w)
		if !ok {
			if first < 0 {
				first = i
			}
			bad++
		}
	}
	if bad == 0 {
		return ""
	}
	return fmt.Sprintf("out[%d] = %v, want %v (tolerance %.3g + %.3g·|want|); %d of %d elements wrong",
		first, got[first], want[first], abs, rel, bad, len(got))
}
