package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halves are the 16-bit dtypes with their conversions, for tests that hold
// for both.
var halves = []DType{BF16, F16}

// TestHalfRoundTrip decodes every 16-bit pattern and encodes it again: a
// value the dtype holds must come back as the same bits (NaNs as some
// NaN), and decoding must be exact (checked through float64, which holds
// every value of both).
func TestHalfRoundTrip(t *testing.T) {
	for _, d := range halves {
		for h := range 1 << 16 {
			x := d.Decode(uint16(h))
			got := d.Encode(x)
			if x != x {
				if y := d.Decode(got); y == y {
					t.Fatalf("%s: NaN %#04x encodes to %#04x, a number", d, h, got)
				}
				continue
			}
			if got != uint16(h) {
				t.Fatalf("%s: %#04x decodes to %g, which encodes to %#04x", d, h, x, got)
			}
		}
	}
}

// TestF16Decode pins the decoding against values computed from the
// binary16 definition in float64.
func TestF16Decode(t *testing.T) {
	for h := range 1 << 16 {
		exp, mant := h>>10&0x1f, h&0x3ff
		var want float64
		switch exp {
		case 0x1f:
			continue // Inf and NaN: covered by the round trip and the cases below
		case 0:
			want = float64(mant) * 0x1p-24
		default:
			want = (1 + float64(mant)/1024) * math.Ldexp(1, exp-15)
		}
		if h&0x8000 != 0 {
			want = -want
		}
		if got := F16ToFloat32(uint16(h)); float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("F16ToFloat32(%#04x) = %g, want %g", h, got, want)
		}
	}
}

// TestHalfNearestEven checks the narrowing conversions on random float32
// values of every magnitude and on every tie between neighbours: the
// result is no farther from x than either neighbour of its own encoding,
// and a tie goes to the even encoding.
func TestHalfNearestEven(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, d := range halves {
		check := func(x float32) {
			h := d.Encode(x)
			v := float64(d.Decode(h))
			if math.IsInf(v, 0) {
				// Past the largest finite value: x must be at least
				// halfway beyond it (ties go to Inf, the even side).
				m := float64(d.Max())
				ulp := m - float64(d.Decode(d.Encode(d.Max())-1))
				if math.Abs(float64(x)) < m+ulp/2 {
					t.Fatalf("%s: %g (%#08x) rounds to Inf", d, x, math.Float32bits(x))
				}
				return
			}
			err := math.Abs(float64(x) - v)
			for _, n := range []uint16{h - 1, h + 1} {
				w := float64(d.Decode(n))
				if n&0x7fff == 0x7fff || math.IsNaN(w) || math.Signbit(w) != math.Signbit(v) && v != 0 {
					continue // no neighbour on that side
				}
				e := math.Abs(float64(x) - w)
				if e < err || e == err && h&1 == 1 {
					t.Fatalf("%s: %g (%#08x) encodes to %#04x (%g), but %#04x (%g) is nearer or the even tie",
						d, x, math.Float32bits(x), h, v, n, w)
				}
			}
		}
		for range 200000 {
			check(math.Float32frombits(rng.Uint32()) /* every exponent */)
			check(float32(rng.NormFloat64()))
		}
		for h := range 1<<16 - 1 {
			a, b := float64(d.Decode(uint16(h))), float64(d.Decode(uint16(h+1)))
			if mid := float32((a + b) / 2); float64(mid) == (a+b)/2 {
				check(mid)
			}
		}
	}
}

func TestHalfValues(t *testing.T) {
	inf := float32(math.Inf(1))
	for _, tt := range []struct {
		d    DType
		x    float32
		want uint16
	}{
		{F16, 1, 0x3c00},
		{F16, -2, 0xc000},
		{F16, 65504, 0x7bff},
		{F16, 65519.99, 0x7bff},
		{F16, 65520, 0x7c00}, // the tie past the largest finite value goes to Inf
		{F16, -inf, 0xfc00},
		{F16, 0x1p-24, 0x0001},
		{F16, 0x1p-25, 0x0000},     // a tie with zero goes to zero (even)
		{F16, 0x1.8p-24, 0x0002},   // 1.5 units: a tie goes to the even 2
		{F16, 0x1.ffcp-15, 0x0400}, // rounds up from the largest subnormal to the smallest normal
		{F16, 1 + 0x1p-11, 0x3c00}, // tie, to even
		{F16, 1 + 0x3p-11, 0x3c02}, // tie, to even
		{BF16, 1, 0x3f80},
		{BF16, 1 + 0x1p-8, 0x3f80},
		{BF16, 1 + 0x3p-8, 0x3f82},
		{BF16, math.MaxFloat32, 0x7f80},
		{BF16, -0x1p-133, 0x8001}, // bf16 keeps float32's subnormals' top bits
	} {
		if got := tt.d.Encode(tt.x); got != tt.want {
			t.Errorf("%s.Encode(%g) = %#04x, want %#04x", tt.d, tt.x, got, tt.want)
		}
	}
	nan := float32(math.NaN())
	for _, d := range halves {
		if v := d.Decode(d.Encode(nan)); v == v {
			t.Errorf("%s: NaN encodes to a number, %g", d, v)
		}
		if d.Round(d.Max()) != d.Max() {
			t.Errorf("%s: Max is not a value of the dtype", d)
		}
		if tiny := float32(d.AbsEpsilon()); d.Round(tiny) != 0 || d.Round(3*tiny) != 4*tiny {
			t.Errorf("%s: AbsEpsilon is not half the smallest subnormal", d)
		}
		if got := d.Round(1 + float32(d.Epsilon())/2); got != 1 {
			t.Errorf("%s: 1 + Epsilon/2 rounds to %g, want 1 (Epsilon is the unit roundoff)", d, got)
		}
		if got := d.Round(1 + 2*float32(d.Epsilon())); got != 1+2*float32(d.Epsilon()) {
			t.Errorf("%s: 1 + 2 Epsilon rounds to %g, want itself (Epsilon is half a unit in the last place of 1)", d, got)
		}
	}
}

// TestBytes round-trips values of each dtype through AppendBytes and
// DecodeBytes, checking the layout of the first element and bit-exact
// values, a NaN's payload and -0 included.
func TestBytes(t *testing.T) {
	for _, d := range []DType{F32, BF16, F16} {
		x := []float32{1, -0.0, float32(math.Inf(-1)), d.Round(3.14159), d.Round(-1e-6), math.Float32frombits(0x7fc10000)}
		b := d.AppendBytes([]byte{0xaa}, x)
		if len(b) != 1+d.Size()*len(x) || b[0] != 0xaa {
			t.Fatalf("%s: %d bytes after one, want %d", d, len(b)-1, d.Size()*len(x))
		}
		if want := map[DType]byte{F32: 0x00, BF16: 0x80, F16: 0x00}[d]; b[1] != want || b[d.Size()] != map[DType]byte{F32: 0x3f, BF16: 0x3f, F16: 0x3c}[d] {
			t.Errorf("%s: 1 is stored as % x, not little-endian %s", d, b[1:1+d.Size()], d)
		}
		got := make([]float32, len(x))
		if err := d.DecodeBytes(got, b[1:]); err != nil {
			t.Fatal(err)
		}
		for i := range x {
			if math.Float32bits(got[i]) != math.Float32bits(x[i]) {
				t.Errorf("%s: element %d: %#08x back as %#08x", d, i, math.Float32bits(x[i]), math.Float32bits(got[i]))
			}
		}
		if err := d.DecodeBytes(got, b[2:]); err == nil {
			t.Errorf("%s: DecodeBytes of a short buffer succeeded", d)
		}
	}
}
