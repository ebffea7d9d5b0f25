package norm

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
)

// TestMain lets the test binary serve as the CUDA emulation worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == emu.WorkerArg {
		os.Exit(emu.ServeWorker(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

var cudaTemplates = []*kernels.Template{&RMSCUDATemplate, &LayerCUDATemplate}

// cudaConfigs are the configs the emulation test runs on each shape
// where valid: a warp per row with each vector width and several rows a
// block, and rows of several warps (their barriers and the shared-memory
// reduction), with both LayerNorm algorithms.
var cudaConfigs = []string{
	"tpr=32,rows_per_block=1,vec=1",
	"tpr=32,rows_per_block=4,vec=4",
	"tpr=32,rows_per_block=8,vec=2",
	"tpr=64,rows_per_block=1,vec=1",
	"tpr=256,rows_per_block=1,vec=4",
}

// cudaShapes are the odd shapes TestCUDAEmulated runs per dtype. In
// float32, 9x1024 and 3x4099 are long enough for the large inputs'
// squares to overflow a float32 sum. In 16 bits, 7x13 and 2x4099 are
// swept an element at a time, 5x48 in vectors of up to 8 elements, and
// 3x1030 in vectors of 2 with vec=1 but an element at a time with vec=2
// (1030 is a multiple of 2 floats, not of 4 elements).
var cudaShapes = map[dtype.DType][][]int{
	dtype.F32:  {{1, 1}, {7, 13}, {9, 1024}, {5, 48}, {3, 4099}},
	dtype.BF16: {{1, 1}, {7, 13}, {5, 48}, {3, 1030}, {2, 4099}},
	dtype.F16:  {{1, 2}, {7, 13}, {5, 48}, {3, 1030}},
}

// TestCUDAEmulated runs the CUDA kernels of cudaConfigs on odd shapes in
// the emulator (package measure/cuda/emu) on every input set of the op
// and dtype, against the float64 reference: autotune check runs one set,
// and the large inputs are the ones that take the overflow branch.
func TestCUDAEmulated(t *testing.T) {
	for _, dt := range dtypes {
		t.Run(string(dt), func(t *testing.T) { testCUDAEmulated(t, dt) })
	}
}

func testCUDAEmulated(t *testing.T, dt dtype.DType) {
	c := &emu.Checker{Command: []string{os.Args[0], emu.WorkerArg}, NoPTX: true, Seed: 3, Orders: emu.Orders[:1], DType: dt}
	target, err := device.Lookup("sm_80")
	if err != nil {
		t.Fatal(err)
	}
	shapes := cudaShapes[dt]
	if testing.Short() {
		shapes = shapes[:3]
	}
	for _, tmpl := range cudaTemplates {
		for _, shape := range shapes {
			sp := tmpl.Space(shape, target)
			sets := measure.Inputs(tmpl.Op, shape, dt, 7)
			for _, base := range cudaConfigs {
				for _, algo := range algos {
					text := base
					if tmpl.Op.Name == LayerOp.Name {
						text += ",algo=" + algo
					} else if algo != algos[0] {
						continue
					}
					cfg, err := sp.Parse(text)
					if err != nil || !sp.Valid(cfg) {
						continue
					}
					k := tmpl.CUDA.EmitCUDA(kernels.Kernel{Name: "k", Shape: shape, DType: dt, Config: cfg})
					o, err := c.EmulateSets(context.Background(), k, "sm_80", sets)
					if errors.Is(err, emu.ErrNoCompiler) {
						t.Skip(err)
					} else if err != nil {
						t.Fatal(err)
					}
					if !o.OK {
						t.Errorf("%s %v %s: %s", tmpl.Op.Name, shape, cfg, o)
					}
				}
			}
		}
	}
}

// TestCUDAConstraints checks the constraints of the CUDA space.
func TestCUDAConstraints(t *testing.T) {
	sm86, err := device.Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		shape, config, want string
	}{
		{"4096x4096", "tpr=32,rows_per_block=4,vec=4", ""},
		{"4096x4099", "tpr=32,rows_per_block=4,vec=4", "vec_divides_cols"},
		{"4096x4096", "tpr=128,rows_per_block=2,vec=4", "multiwarp_rows_alone"},
		{"64x64", "tpr=64,rows_per_block=1,vec=4", "threads_at_most_vectors"},
		{"64x64", "tpr=32,rows_per_block=1,vec=4", ""},
	} {
		shape, err := RMSOp.ParseShape(tt.shape)
		if err != nil {
			t.Fatal(err)
		}
		kerneltest.CheckConstraint(t, rms.cudaSpace(shape, sm86), tt.config, tt.want)
	}
	kerneltest.CheckConstraint(t, rms.cudaSpace([]int{8, 8}, device.Host()), "tpr=32,rows_per_block=1,vec=1", "needs_cuda_target")
}
