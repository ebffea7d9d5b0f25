//go:build openblas

package gemm

// The openblas baseline calls OpenBLAS through cgo, so it exists only in
// builds with the openblas tag: default builds need no C library. Such a
// build links OpenBLAS into this package too, although nothing here calls
// it, for two reasons: the build fails at once where the library is
// missing (install Debian's libopenblas-dev), not at the first bench; and
// the blank import keeps gonum.org/v1/netlib in autotune's go.mod and
// go.sum (go mod tidy) and in go mod download's list, from which the bench
// module requires it. The emitted code links the library by its own cgo
// directive.

// #cgo LDFLAGS: -lopenblas
import "C"

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"

	_ "gonum.org/v1/netlib/blas/netlib"
)

// netlibModule is the module of the cgo bindings of a C BLAS the openblas
// baseline calls; autotune's go.mod requires it.
const netlibModule = "gonum.org/v1/netlib"

// openblasBaselines are the baselines of builds with the openblas tag.
var openblasBaselines = []kernels.Baseline{{
	Name: "openblas",
	Doc: "OpenBLAS's cblas_sgemm through gonum.org/v1/netlib (cgo), on OpenBLAS's own threads " +
		"(all cores unless OPENBLAS_NUM_THREADS says otherwise)",
	EmitGo:   emitOpenBLAS,
	Requires: []string{netlibModule, gonumModule},
	Cgo:      true,
	Note:     func() string { return openblasNote(os.Getenv("OPENBLAS_CORETYPE"), device.Host()) },
}}

// avx512CoreTypes are OpenBLAS's names of the cores whose kernels use
// AVX-512, lower-case.
var avx512CoreTypes = []string{"skylakex", "cooperlake", "sapphirerapids"}

// openblasNote says what OPENBLAS_CORETYPE, when set to coreType, does to
// the openblas baseline on host: OpenBLAS then runs the kernels of that
// core, not those it picks for the CPU. On an AVX-512 CPU, OpenBLAS 0.3.21
// picks Cooperlake's (SkylakeX's without BF16), and Haswell's AVX2 kernels
// run its SGEMM at about half their speed.
func openblasNote(coreType string, host device.Target) string {
	if coreType == "" {
		return ""
	}
	note := fmt.Sprintf("OPENBLAS_CORETYPE=%s makes OpenBLAS run %s's kernels, not those it picks for this CPU", coreType, coreType)
	if host.CPU != nil && host.CPU.ISA.AVX512 && !slices.Contains(avx512CoreTypes, strings.ToLower(coreType)) {
		note += "; they have no AVX-512, which this CPU has, and run OpenBLAS's SGEMM at about half its speed"
	}
	return note + ": unset it to time OpenBLAS at its best"
}

// emitOpenBLAS emits one call of OpenBLAS's sgemm on the row-major
// matrices as they are, C = 1·A·B + 0·C, through netlib's Implementation
// of gonum's blas.Float32 (which checks the arguments and calls
// cblas_sgemm in row-major order), and a cgo directive that links
// libopenblas.
func emitOpenBLAS(f *jen.File, name string, shape []int) {
	m, n, k := checkShape(shape)
	const netlib, blas = netlibModule + "/blas/netlib", gonumModule + "/blas"
	f.CgoPreamble("#cgo LDFLAGS: -lopenblas")
	f.Add(golang.Comment(fmt.Sprintf("%s computes c = a·b for the row-major %d×%d matrix a and %d×%d matrix b "+
		"with OpenBLAS's cblas_sgemm; autotune bench compares tuned kernels with it.", name, m, k, k, n)))
	f.Func().Id(name).Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b")).Index().Float32()).Block(
		jen.Qual(netlib, "Implementation").Values().Dot("Sgemm").Call(
			jen.Qual(blas, "NoTrans"), jen.Qual(blas, "NoTrans"), jen.Lit(m), jen.Lit(n), jen.Lit(k),
			jen.Lit(1), jen.Id("a"), jen.Lit(k), jen.Id("b"), jen.Lit(n), jen.Lit(0), jen.Id("c"), jen.Lit(n)),
	)
}
