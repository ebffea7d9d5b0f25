package tune_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

// scaledAdd is an op of this test's own, out = a + 3·b, registered and tuned
// through the public API only: adding an op takes nothing outside its own
// package. Its CPU template unrolls by 1, 2 or 4 and has one deliberately
// wrong variant (it forgets the scale), which must become a wrong_answer
// record without stopping the run.
var scaledAdd = kernels.Op{
	Name: "test_scaled_add", Dims: []string{"N"}, Example: "1009",
	Summary: "out = a + 3·b, an op of tune's tests",
	Args:    func(shape []int) ([]int, int) { return []int{shape[0], shape[0]}, shape[0] },
	Reference: func(shape []int, ins [][]float32, out []float64) {
		for i := range out {
			out[i] = float64(ins[0][i]) + 3*float64(ins[1][i])
		}
	},
	// Float32 rounding of a + 3·b is at most 2^-23·(|a| + 3|b|), and the
	// default input sets reach magnitudes of 1024: 5e-4.
	Tolerance: func([]int, dtype.DType) (rel, abs float64) { return 1e-6, 1e-3 },
	FLOPs:     func(shape []int) float64 { return 2 * float64(shape[0]) },
	Bytes:     func(shape []int) float64 { return 12 * float64(shape[0]) },
}

var scaledAddCPU = kernels.Template{
	Op:      scaledAdd,
	Backend: kernels.CPU,
	Version: "test-scaled-add-1",
	Space: func(shape []int, target device.Target) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{
			schedule.Choice("unroll", 1, 2, 4),
			schedule.Enum("scale", "right", "forgotten"),
		})
	},
	Go: kernels.GoFunc(func(f *jen.File, k kernels.Kernel) []byte {
		name, shape, cfg := k.Name, k.Shape, k.Config
		n, u := shape[0], cfg.Int("unroll")
		scale := jen.Lit(float32(3))
		if cfg.Str("scale") == "forgotten" {
			scale = jen.Lit(float32(1))
		}
		body := []jen.Code{jen.Const().Id("n").Op("=").Lit(n), jen.Id("i").Op(":=").Lit(0)}
		var step []jen.Code
		for j := range u {
			idx := jen.Id("i").Op("+").Lit(j)
			step = append(step, jen.Id("out").Index(idx.Clone()).Op("=").Id("a").Index(idx.Clone()).Op("+").
				Add(scale.Clone()).Op("*").Id("b").Index(idx.Clone()))
		}
		body = append(body,
			jen.For(jen.Id("i").Op("+").Lit(u).Op("<=").Id("n")).Block(append(step, jen.Id("i").Op("+=").Lit(u))...),
			jen.For(jen.Id("i").Op("<").Id("n")).Block(
				jen.Id("out").Index(jen.Id("i")).Op("=").Id("a").Index(jen.Id("i")).Op("+").Add(scale.Clone()).Op("*").Id("b").Index(jen.Id("i")),
				jen.Id("i").Op("++"),
			),
		)
		f.Comment(name + " computes out = a + 3·b.")
		f.Func().Id(name).Params(jen.List(jen.Id("out"), jen.Id("a"), jen.Id("b")).Index().Float32()).Block(body...)
		return nil
	}),
}

func TestRegisteredOpTunesEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to build candidates with")
	}
	kernels.RegisterOp(scaledAdd)
	kernels.Register(scaledAddCPU)

	op, err := kernels.Resolve("test_scaled_add")
	if err != nil {
		t.Fatal(err)
	}
	shape, err := op.ParseShape(op.Example)
	if err != nil {
		t.Fatal(err)
	}
	target := device.Host()
	tmpl, ok := kernels.TemplateFor(op.Name, kernels.BackendOf(target))
	if !ok {
		t.Fatal("the registered template is not found")
	}
	measurer, err := tune.NewMeasurer(tmpl.Backend, tune.MeasurerOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	db, err := tunedb.Open(filepath.Join(t.TempDir(), "tune.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	s, err := tune.Run(context.Background(), tune.Task{
		Template: tmpl, Shape: shape, Target: target, Space: tmpl.Space(shape, target),
		Measurer: measurer, Store: db, Strategy: "grid", Seed: 1, Trials: 6, Tool: "test",
	})
	if err != nil {
		t.Fatal(err)
	}
	if s.Trials != 6 || s.Best == nil || s.Best.Config.Str("scale") != "right" {
		t.Fatalf("summary: %d trials, best %+v; want 6 trials and a correct best", s.Trials, s.Best)
	}
	records, err := db.Records(tune.Workload(tmpl, shape, target))
	if err != nil {
		t.Fatal(err)
	}
	status := map[string]int{}
	for _, r := range records {
		status[r.Config.Str("scale")+" "+string(r.Status)]++
	}
	if status["right ok"] != 3 || status["forgotten wrong_answer"] != 3 {
		t.Errorf("records by scale and status: %v; want 3 ok and 3 wrong_answer", status)
	}
}
