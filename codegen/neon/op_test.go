package neon

import "testing"

// TestOpEncodings checks each Op against the encoding an assembler gives
// (LLVM's, for the registers named).
func TestOpEncodings(t *testing.T) {
	for _, c := range []struct {
		op      Op
		d, n, m int
		want    uint32
	}{
		{FADD, 0, 0, 0, 0x4e20d400},
		{FSUB, 3, 5, 7, 0x4ea7d4a3},
		{FMUL, 0, 0, 0, 0x6e20dc00},
		{FDIV, 0, 0, 0, 0x6e20fc00},
		{FMAX, 0, 0, 0, 0x4e20f400},
		{FADDP, 0, 0, 0, 0x6e20d400},
		{FMAXP, 0, 0, 0, 0x6e20f400},
		{FADD, 31, 1, 30, 0x4e3ed43f},
		{FCMGT, 18, 4, 0, 0x6ea0e492},
	} {
		if got := c.op.encode(c.d, c.n, c.m); got != c.want {
			t.Errorf("%s V%d, V%d, V%d = %#08x, want %#08x", c.op.Name, c.d, c.n, c.m, got, c.want)
		}
	}
}
