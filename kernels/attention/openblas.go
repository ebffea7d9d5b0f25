//go:build openblas

package attention

// The openblas baseline calls OpenBLAS through cgo, so it exists only in
// builds with the openblas tag, as gemm's (kernels/gemm/openblas.go,
// which links the library into the build and keeps gonum.org/v1/netlib in
// go.mod); the emitted code links it by its own cgo directive.

import (
	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/kernels"
)

// netlibModule is the module of the cgo bindings of a C BLAS the openblas
// baseline calls; autotune's go.mod requires it.
const netlibModule = "gonum.org/v1/netlib"

// openblasBaselines returns the openblas baseline of Template, or of
// TemplateCausal with causal: the gonum baseline's composition with
// OpenBLAS's cblas_sgemm for the two products, the target's "composition
// of OpenBLAS GEMMs and a plain softmax" (issue 29).
func openblasBaselines(causal bool) []kernels.Baseline {
	doc := "composition: per head, scores = Q·Kᵀ/√D with OpenBLAS's cblas_sgemm (through gonum.org/v1/netlib, cgo) into an S×S buffer, "
	if causal {
		doc += "masked above the diagonal, "
	}
	return []kernels.Baseline{{
		Name: "openblas",
		Doc:  doc + "a plain softmax per row, then cblas_sgemm scores·V, on OpenBLAS's own threads",
		EmitGo: func(f *jen.File, name string, shape []int) {
			f.CgoPreamble("#cgo LDFLAGS: -lopenblas")
			emitComposition(f, name, shape, causal, openblasGemm)
		},
		Requires: []string{netlibModule, gonumModule},
		Cgo:      true,
		Skip:     skipScores,
	}}
}

// openblasGemm is OpenBLAS's sgemm through netlib's Implementation of
// gonum's blas.Float32, which checks the arguments and calls cblas_sgemm
// in row-major order.
var openblasGemm = blasLib{name: "OpenBLAS's cblas_sgemm", gemm: func(transB bool, m, n, k, alpha, a, lda, b, ldb, c, ldc jen.Code) jen.Code {
	return jen.Qual(netlibModule+"/blas/netlib", "Implementation").Values().Dot("Sgemm").Call(
		blasTrans(false), blasTrans(transB), m, n, k, alpha, a, lda, b, ldb, jen.Lit(0), c, ldc)
}}
