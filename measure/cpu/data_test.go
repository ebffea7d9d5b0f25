package cpu

import (
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/autotune-dev/autotune/measure"
)

func TestInputsDeterministic(t *testing.T) {
	tmpl := testTemplate()
	shape := []int{1000}
	a, b, c := newData(tmpl, shape, 7), newData(tmpl, shape, 7), newData(tmpl, shape, 8)
	if !slices.Equal(a.ins[0], b.ins[0]) || !slices.Equal(a.want, b.want) {
		t.Error("the same seed gave different inputs")
	}
	if slices.Equal(a.ins[0], c.ins[0]) {
		t.Error("different seeds gave the same inputs")
	}
	neg := 0
	for i, x := range a.ins[0] {
		if m := math.Abs(float64(x)); m < measure.InputMin || m > measure.InputMax {
			t.Fatalf("input %d = %v, outside ±[%v, %v]", i, x, measure.InputMin, measure.InputMax)
		}
		if x < 0 {
			neg++
		}
		if a.want[i] != 2*float64(x)+1 {
			t.Fatalf("reference %d = %v for input %v", i, a.want[i], x)
		}
	}
	if neg < 400 || neg > 600 {
		t.Errorf("%d of 1000 inputs are negative; want about half", neg)
	}
}

// The cache hands out the data of the last workload and recomputes it for
// another shape or seed.
func TestDataCache(t *testing.T) {
	var c dataCache
	tmpl := testTemplate()
	d1 := c.get(tmpl, []int{10}, 1)
	if c.get(tmpl, []int{10}, 1) != d1 {
		t.Error("same workload: data recomputed")
	}
	if d := c.get(tmpl, []int{11}, 1); d == d1 || len(d.want) != 11 {
		t.Error("another shape: data not recomputed")
	}
	if d := c.get(tmpl, []int{11}, 2); slices.Equal(d.ins[0], newData(tmpl, []int{11}, 1).ins[0]) {
		t.Error("another seed: data not recomputed")
	}
}

// The files hold exactly what the harness decodes: little-endian float32
// inputs and float64 reference.
func TestDataWrite(t *testing.T) {
	d := newData(testTemplate(), []int{5}, 3)
	dir := t.TempDir()
	if err := d.write(dir); err != nil {
		t.Fatal(err)
	}
	in, err := os.ReadFile(filepath.Join(dir, inputFile(0)))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(dir, wantFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(in) != 4*5 || len(want) != 8*5 {
		t.Fatalf("file sizes %d and %d, want 20 and 40", len(in), len(want))
	}
	for i := range 5 {
		if x := math.Float32frombits(binary.LittleEndian.Uint32(in[4*i:])); x != d.ins[0][i] {
			t.Errorf("input %d reads back as %v, want %v", i, x, d.ins[0][i])
		}
		if w := math.Float64frombits(binary.LittleEndian.Uint64(want[8*i:])); w != d.want[i] {
			t.Errorf("reference %d reads back as %v, want %v", i, w, d.want[i])
		}
	}
}
