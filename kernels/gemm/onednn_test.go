//go:build onednn

package gemm

import (
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/kerneltest"
)

// TestOneDNN checks the onednn baselines of Template and of the epilogue
// templates against the reference on every test shape and input set; the
// epilogue templates' fuse the bias (matmul's bias argument) and ReLU (an
// eltwise post-op) instead of a Go loop.
func TestOneDNN(t *testing.T) {
	for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			b := tmpl.Baselines[len(tmpl.Baselines)-3]
			if b.Name != "onednn" || !b.Cgo || b.Requires != nil {
				t.Fatalf("third baseline from the end %s, cgo %v, requires %v; want onednn, cgo, no modules", b.Name, b.Cgo, b.Requires)
			}
			f := jen.NewFile("p")
			b.EmitGo(f, "Kernel", []int{3, 5, 7})
			src := f.GoString()
			fused := strings.Contains(src, "DNNL_ARG_BIAS")
			if relu := strings.Contains(src, "dnnl_eltwise_relu"); fused != (tmpl != &Template) || relu != (tmpl == &BiasReLUTemplate) {
				t.Errorf("bias fused %v, ReLU fused %v:\n%s", fused, relu, src)
			}
			kerneltest.CheckBaseline(t, tmpl, "onednn", testShapes)
		})
	}
}

// TestOneDNNHalf checks the onednn-bf16 and onednn-f16 baselines of
// Template and the epilogue templates, oneDNN's matmul on 16-bit
// matrices with the epilogue fused, as TestOneDNN the float32 ones, on
// every input set of their dtype, where this CPU's oneDNN has them.
func TestOneDNNHalf(t *testing.T) {
	for _, tmpl := range append([]*kernels.Template{&Template}, epilogueTemplates...) {
		t.Run(tmpl.Op.Name, func(t *testing.T) {
			kerneltest.CheckHalfBaselines(t, tmpl, "onednn", testShapes)
		})
	}
}
