package softmax

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// A kernel of bf16 or f16 stores src and dst in 16 bits and computes in
// float32 with the float32 kernel's own rows (golang.HalfRows): blocks of
// rows decoded into float32 scratch, their softmax, encoded back to
// nearest even. The conversions are Go assembly on whole vectors
// (codegen/goasm.Half) when the kernel's rows are vectors.

func (k kernel) halfRowsFn() string { return k.name + "HalfRows" }

// elem is the element type of the kernel's slices.
func (k kernel) elem() jen.Code { return kernels.GoElem(k.half.DType) }

// emitHalfRows emits the conversions and the rows function of a 16-bit
// kernel, which RowSplit calls in place of rowsFn.
func (k kernel) emitHalfRows(f *jen.File) {
	k.half.Emit(f)
	golang.HalfRows{
		Name: k.halfRowsFn(), Half: k.half, RowsFn: k.rowsFn(),
		Out: "dst", Rows: []string{"src"}, Cols: k.cols,
	}.Emit(f)
}
