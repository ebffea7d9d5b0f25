package cpu

import (
	"cmp"
	"context"
	"slices"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// The half template computes out = 2*in + 1 in f32 and bf16, so that the
// harness's path for 16-bit kernels (inputs encoded, output poisoned with
// NaN bits and decoded for the check) can be driven from a batch. Its knob
// mode picks how a bf16 kernel stores its result:
//
//	ok       rounds to nearest even, as dtype.BF16FromFloat32 does
//	trunc    truncates: off by a unit in the last place on about half the
//	         outputs, more than the tolerance of a bf16 output allows
//	short    leaves the last output unwritten
//	clobber  correct, but writes to its input
var halfModes = []string{"ok", "trunc", "short", "clobber"}

func halfTemplate() kernels.Template {
	return kernels.Template{
		Op: kernels.Op{Name: "affine16", Dims: []string{"N"}, Summary: "out = 2*in + 1 in bf16, for tests", Example: "17",
			DTypes: []dtype.DType{dtype.F32, dtype.BF16},
			Args:   func(shape []int) ([]int, int) { return []int{shape[0]}, shape[0] },
			Reference: func(shape []int, ins [][]float32, out []float64) {
				for i, x := range ins[0] {
					out[i] = 2*float64(x) + 1
				}
			},
			Tolerance: func(_ []int, dt dtype.DType) (rel, abs float64) {
				return 1e-6 + kernels.OutputRounding(dt), 1e-6
			},
			FLOPs: func(shape []int) float64 { return 2 * float64(shape[0]) },
			Bytes: func(shape []int) float64 { return 8 * float64(shape[0]) },
		},
		Backend: kernels.CPU,
		Version: "test-half-1",
		Space: func([]int, device.Target) *schedule.Space {
			return schedule.NewSpace([]schedule.Knob{schedule.Enum("mode", halfModes...)})
		},
		Go: kernels.GoFunc(func(f *jen.File, k kernels.Kernel) []byte {
			emitHalf(f, k.Name, k.DType, k.Config.Str("mode"))
			return nil
		}),
	}
}

// emitHalf emits the kernel of mode in dtype dt: f32 computes in place,
// bf16 decodes each input, computes in float32 and encodes as mode says.
func emitHalf(f *jen.File, name string, dt dtype.DType, mode string) {
	elem := kernels.GoElem(dt)
	if dt == dtype.F32 {
		f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("in0")).Index().Add(elem)).Block(
			jen.For(jen.Id("i").Op(":=").Range().Id("out")).Block(
				jen.Id("out").Index(jen.Id("i")).Op("=").Lit(2).Op("*").Id("in0").Index(jen.Id("i")).Op("+").Lit(1)),
		)
		return
	}
	bits := jen.Id("b").Op(":=").Qual("math", "Float32bits").Call(
		jen.Lit(2).Op("*").Qual("math", "Float32frombits").Call(jen.Uint32().Call(jen.Id("x")).Op("<<").Lit(16)).Op("+").Lit(1))
	round := jen.Id("b").Op("+=").Lit(0x7fff).Op("+").Parens(jen.Id("b").Op(">>").Lit(16)).Op("&").Lit(1)
	if mode == "trunc" {
		round = jen.Null()
	}
	n := jen.Len(jen.Id("out"))
	if mode == "short" {
		n = jen.Len(jen.Id("out")).Op("-").Lit(1)
	}
	body := []jen.Code{
		jen.For(jen.Id("i").Op(":=").Range().Id("out").Index(jen.Empty(), n)).Block(
			jen.Id("x").Op(":=").Id("in0").Index(jen.Id("i")),
			bits, round,
			jen.Id("out").Index(jen.Id("i")).Op("=").Uint16().Call(jen.Id("b").Op(">>").Lit(16)),
		),
	}
	if mode == "clobber" {
		body = append(body, jen.Id("in0").Index(jen.Lit(0)).Op("^=").Lit(1))
	}
	f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("in0")).Index().Add(elem)).Block(body...)
}

func halfConfig(t *testing.T, mode string) schedule.Config {
	t.Helper()
	c, err := halfTemplate().Space([]int{1}, device.Host()).Parse("mode=" + mode)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A batch of bf16 kernels: the harness hands them 16-bit inputs and checks
// their decoded output, so a kernel that truncates, skips an output or
// writes its input fails, each with its own status.
func TestMeasureBF16(t *testing.T) {
	needGo(t)
	b := measure.Batch{Template: halfTemplate(), Shape: []int{1031}, DType: dtype.BF16, Target: device.Host(),
		Configs: []schedule.Config{halfConfig(t, "ok"), halfConfig(t, "trunc"), halfConfig(t, "short"), halfConfig(t, "clobber")}}
	got, err := New(fastOptions(t)).Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	check(t, b, got, []want{
		{measure.StatusOK, nil},
		{measure.StatusWrongAnswer, []string{"outputs wrong"}},
		{measure.StatusWrongAnswer, []string{"out[1030] = NaN"}},
		{measure.StatusWrongAnswer, []string{"wrote to input 0", "in0[0]"}},
	})
}

// A bench of a bf16 workload times the bf16 kernel beside the tuned f32
// kernel on the same values, a floor that copies 16-bit elements, the
// float32 baselines on the decoded values and the bf16 baselines on the
// 16-bit buffers, but not the f16 ones; a bf16 baseline known wrong on
// every set, the timed one too, is timed unchecked.
func TestBenchBF16(t *testing.T) {
	needGo(t)
	shape := []int{4099}
	tmpl := halfTemplate()
	half := func(name string, dt dtype.DType, mode string) kernels.Baseline {
		return kernels.Baseline{Name: name, Doc: name, DType: dt,
			EmitGo: func(f *jen.File, fn string, _ []int) { emitHalf(f, fn, cmp.Or(dt, dtype.F32), mode) }}
	}
	tmpl.Baselines = []kernels.Baseline{half("plain", "", "ok"), half("lib-bf16", dtype.BF16, "ok"), half("lib-f16", dtype.F16, "ok"),
		half("trunc-bf16", dtype.BF16, "trunc")}
	tmpl.Baselines[3].KnownWrong = []string{"uniform", "large"}
	b := benchBatch(tmpl, shape, halfConfig(t, "ok"))
	b.DType, b.ConfigF32 = dtype.BF16, halfConfig(t, "ok")
	res, err := New(&Options{Seed: 1}).Bench(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	bytes, checked := map[string]float64{}, map[string]bool{}
	var names []string
	for _, r := range res {
		bytes[r.Name], checked[r.Name] = r.Bytes, r.Checked
		names = append(names, r.Name)
		t.Logf("%-9s median %7.0fns, %v bytes: %s", r.Name, r.MedianNS, r.Bytes, r.Doc)
	}
	n := float64(shape[0])
	want := []string{BenchTuned, BenchTunedF32, "plain", "lib-bf16", "trunc-bf16", BenchPeak, BenchFloor}
	if !slices.Equal(names, want) || bytes[BenchTuned] != 4*n || bytes[BenchTunedF32] != 8*n || bytes[BenchFloor] != 4*n ||
		bytes["plain"] != 8*n || bytes["lib-bf16"] != 4*n {
		t.Errorf("entries %v, their bytes %v; want %v, tuned, lib-bf16 and floor (bf16) 4n, tuned-f32 and plain 8n, n = %v", names, bytes, want, n)
	}
	if !checked["lib-bf16"] || checked["trunc-bf16"] {
		t.Errorf("lib-bf16 checked %v, trunc-bf16 (known wrong on every set) checked %v; want true, false", checked["lib-bf16"], checked["trunc-bf16"])
	}

	// A bf16 kernel that rounds wrongly fails the bench.
	b.Config = halfConfig(t, "trunc")
	if _, err := New(&Options{Seed: 1}).Bench(context.Background(), b); err == nil {
		t.Error("a bench of a truncating bf16 kernel: no error")
	}
}
