package halfcopy

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/goasm"
	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// Emitter is the Go emitter of a template whose float32 kernels serve
// bf16 and f16 as well, on float32 copies of the arguments: a kernel of a
// 16-bit dtype is F32's kernel of the same config, named Name+"F32",
// inside a golang.HalfCall named Name that decodes every input, runs it
// and encodes the output. Converting each element once costs little
// beside the arithmetic of an op whose work grows faster than its data
// (GEMM, attention); converting inside the kernels is faster still
// (gemm's convert=pack and convert=dot, kernels/gemm's packhalf.go), and
// this form remains their shape-generic one. Vector reports whether
// a config's kernels have vectors (AVX2 at least), so that the
// conversions of whole vectors may be assembly (goasm.Half).
type Emitter struct {
	Op     kernels.Op
	F32    kernels.GoEmitter
	Vector func(cfg schedule.Config) bool
}

// EmitGo writes F32's kernel for f32, and the copying kernel around it
// for bf16 and f16.
func (e Emitter) EmitGo(f *jen.File, k kernels.Kernel) []byte {
	if k.DType.Size() != 2 {
		return e.F32.EmitGo(f, k)
	}
	inner := k
	inner.Name, inner.DType = k.Name+"F32", dtype.F32
	asm := e.F32.EmitGo(f, inner)
	h := golang.Half{Prefix: k.Name + "Half", DType: k.DType, Asm: e.Vector(k.Config)}
	h.Emit(f)
	api := e.Op.GoAPI()
	var dims []string
	if k.Shape == nil {
		dims = api.Dims
	}
	golang.HalfCall{Name: k.Name, Inner: inner.Name, Half: h, Args: api.Args, Dims: dims}.Emit(f)
	return goasm.WithHalf(asm, h)
}

// Asm is F32's.
func (e Emitter) Asm(cfg schedule.Config) bool { return e.F32.Asm(cfg) }
