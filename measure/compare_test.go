package measure

import (
	"math"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	nan := math.NaN()
	for _, tt := range []struct {
		got  []float32
		want []float64
		msg  string
	}{
		{[]float32{1, 2, 3}, []float64{1, 2, 3}, ""},
		{[]float32{1, 2.00001, 3}, []float64{1, 2, 3}, ""},
		{[]float32{1, 2.1, 3.1}, []float64{1, 2, 3}, "out[1] = 2.1, want 2"},
		{[]float32{1, float32(nan)}, []float64{1, 2}, "out[1] = NaN, want 2"},
		{[]float32{float32(nan)}, []float64{nan}, ""},
		{[]float32{0}, []float64{nan}, "out[0] = 0, want NaN"},
	} {
		msg := Compare(tt.got, tt.want, 1e-4, 1e-30)
		if (tt.msg == "") != (msg == "") || !strings.HasPrefix(msg, tt.msg) {
			t.Errorf("Compare(%v, %v) = %q, want %q…", tt.got, tt.want, msg, tt.msg)
		}
	}
}
