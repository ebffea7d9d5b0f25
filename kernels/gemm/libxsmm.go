//go:build libxsmm

package gemm

// The libxsmm baseline calls libxsmm through cgo, so it exists only in
// builds with the libxsmm tag: default builds need no C library. Such a
// build links libxsmm into this package too, although nothing here calls
// it, so that the build fails at once where the library is missing
// (install Debian's libxsmm-dev), not at the first bench. The emitted code
// links it by its own cgo directive.

// #cgo LDFLAGS: -lxsmm -lxsmmnoblas -lpthread -lrt -ldl -lm
// #include <libxsmm.h>
import "C"

import (
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

// libxsmmMaxSide is the largest M, N or K the libxsmm baseline is run for:
// libxsmm is a library of small matrix products, whose kernels it generates
// for the shape at run time and runs on the calling thread; larger products
// it hands to a BLAS, which the Debian library builds without.
const libxsmmMaxSide = 128

// libxsmmBaselines are the baselines of builds with the libxsmm tag.
var libxsmmBaselines = []kernels.Baseline{{
	Name: "libxsmm",
	Doc: "libxsmm's JIT-generated kernel for the shape (libxsmm_smmdispatch) through cgo, on the calling thread; " +
		"column-major, so it computes cᵀ = bᵀ·aᵀ; M, N and K up to 128",
	EmitGo: emitLibxsmm,
	Cgo:    true,
	Skip:   skipLibxsmm,
}}

// skipLibxsmm leaves the libxsmm baseline out of benches of products with a
// side longer than libxsmmMaxSide.
func skipLibxsmm(shape []int) string {
	m, n, k := checkShape(shape)
	if max(m, n, k) > libxsmmMaxSide {
		return fmt.Sprintf("a side of %d, longer than the %d libxsmm is run for (small matrices)", max(m, n, k), libxsmmMaxSide)
	}
	return ""
}

// emitLibxsmm emits the kernel called name: C in the cgo preamble that asks
// libxsmm at the first call for its kernel of the product, and a Go
// function that calls it. libxsmm's matrices are column-major, and a
// row-major matrix read column-major is its transpose, so the row-major
// c = a·b is the column-major cᵀ = bᵀ·aᵀ: an N×M product with K, b as the
// first operand (leading dimension N), a as the second (K), c with N; alpha
// 1 and beta 0.
func emitLibxsmm(f *jen.File, name string, shape []int) {
	m, n, k := checkShape(shape)
	c := strings.NewReplacer("P_", name+"_", "MDIM", fmt.Sprint(m), "NDIM", fmt.Sprint(n), "KDIM", fmt.Sprint(k)).Replace(`#cgo LDFLAGS: -lxsmm -lxsmmnoblas -lpthread -lrt -ldl -lm
#include <stdio.h>
#include <stdlib.h>
#include <libxsmm.h>

static libxsmm_smmfunction P_kernel;

static void P_call(float *c, float *a, float *b) {
	if (!P_kernel) {
		const libxsmm_blasint m = NDIM, n = MDIM, k = KDIM, lda = NDIM, ldb = KDIM, ldc = NDIM;
		const float alpha = 1, beta = 0;
		const int flags = LIBXSMM_GEMM_FLAG_NONE;
		libxsmm_init();
		P_kernel = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ldc, &alpha, &beta, &flags, NULL);
		if (!P_kernel) {
			fprintf(stderr, "libxsmm: no kernel for %dx%dx%d\n", (int)m, (int)n, (int)k);
			abort();
		}
	}
	P_kernel(b, a, c);
}
`)
	f.CgoPreamble(c)
	f.Add(golang.Comment(fmt.Sprintf("%s computes c = a·b for the row-major %d×%d matrix a and %d×%d matrix b "+
		"with libxsmm's kernel of the column-major cᵀ = bᵀ·aᵀ; autotune bench compares tuned kernels with it.", name, m, k, k, n)))
	f.Func().Id(name).Params(jen.List(jen.Id("c"), jen.Id("a"), jen.Id("b")).Index().Float32()).Block(
		kernels.CgoCall(name+"_call", []string{"c", "a", "b"}, []int{m * n, m * k, k * n})...,
	)
}
