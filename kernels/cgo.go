package kernels

import (
	"cmp"
	"fmt"
	"strings"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/dtype"
)

// OneDNNPrelude returns the C every oneDNN baseline starts with, its
// identifiers prefixed with prefix (the Go kernel's name, so that several
// baselines fit in one Go file): the headers; an engine and a stream on the
// CPU, created by prefix_start; prefix_ok, which aborts the process with
// what failed when a call returns an error (a baseline that cannot run has
// no result to give, and the harness records the crash); prefix_md, a
// memory descriptor of dt (f32, bf16 or f16) with explicit strides; prefix_mem, a memory
// object of such a descriptor without a buffer; prefix_prim, a primitive
// from an operation descriptor and attributes; and prefix_exec, which runs
// a primitive on n arguments, binding each memory object to its buffer for
// the call only (Go memory may be lent to C for the length of a call, not
// kept), and waits for the stream.
//
// The baselines are built with cgo and link oneDNN (-ldnnl): Debian's
// libdnnl-dev, version 2 of the C API. oneDNN runs on its own threads, one
// per core unless OMP_NUM_THREADS says otherwise.
func OneDNNPrelude(prefix string, dt dtype.DType) string {
	return strings.NewReplacer("P_", prefix+"_", "DNNL_DT", OneDNNType(dt)).Replace(`#cgo LDFLAGS: -ldnnl
#include <stdio.h>
#include <stdlib.h>
#include <oneapi/dnnl/dnnl.h>

static dnnl_engine_t P_engine;
static dnnl_stream_t P_stream;

static void P_ok(dnnl_status_t s, const char *what) {
	if (s != dnnl_success) {
		fprintf(stderr, "onednn: %s: status %d\n", what, (int)s);
		abort();
	}
}

static void P_start(void) {
	P_ok(dnnl_engine_create(&P_engine, dnnl_cpu, 0), "engine");
	P_ok(dnnl_stream_create(&P_stream, P_engine, dnnl_stream_default_flags), "stream");
}

static dnnl_memory_desc_t P_md(int ndims, const dnnl_dim_t *dims, const dnnl_dim_t *strides) {
	dnnl_memory_desc_t md;
	dnnl_dims_t d, s;
	for (int i = 0; i < ndims; i++) {
		d[i] = dims[i];
		s[i] = strides[i];
	}
	P_ok(dnnl_memory_desc_init_by_strides(&md, ndims, d, DNNL_DT, s), "memory descriptor");
	return md;
}

static dnnl_memory_t P_mem(const dnnl_memory_desc_t *md) {
	dnnl_memory_t m;
	P_ok(dnnl_memory_create(&m, md, P_engine, DNNL_MEMORY_NONE), "memory");
	return m;
}

static dnnl_primitive_t P_prim(const_dnnl_op_desc_t desc, const_dnnl_primitive_attr_t attr) {
	dnnl_primitive_desc_t pd;
	dnnl_primitive_t p;
	P_ok(dnnl_primitive_desc_create(&pd, desc, attr, P_engine, NULL), "primitive descriptor");
	P_ok(dnnl_primitive_create(&p, pd), "primitive");
	P_ok(dnnl_primitive_desc_destroy(pd), "destroying a primitive descriptor");
	return p;
}

static void P_exec(dnnl_primitive_t p, int n, dnnl_exec_arg_t *args, void **bufs) {
	for (int i = 0; i < n; i++) {
		if (bufs[i]) P_ok(dnnl_memory_set_data_handle(args[i].memory, bufs[i]), "binding a buffer");
	}
	P_ok(dnnl_primitive_execute(p, P_stream, n, args), "execute");
	P_ok(dnnl_stream_wait(P_stream), "wait");
	for (int i = 0; i < n; i++) {
		if (bufs[i]) P_ok(dnnl_memory_set_data_handle(args[i].memory, NULL), "unbinding a buffer");
	}
}
`)
}

// OneDNNType returns oneDNN's C name of dt (a zero dt is dtype.Default):
// dnnl_f32, dnnl_bf16 or dnnl_f16.
func OneDNNType(dt dtype.DType) string {
	return "dnnl_" + string(cmp.Or(dt, dtype.Default))
}

// CElem returns the C type of the elements of a kernel's buffers of dt:
// float, or uint16_t for the 16 bits of bf16 and f16 (as GoElem).
func CElem(dt dtype.DType) string {
	if dt.Size() == 2 {
		return "uint16_t"
	}
	return "float"
}

// OneDNNDims returns the C initialiser of a dnnl_dim_t array: "{2, 3, 4}".
func OneDNNDims(xs ...int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// CgoCall returns the Go statements of a kernel that calls the C function
// fn of a cgo preamble with a pointer to the first element of each slice,
// after checking that each holds at least its length in lens: a short
// slice panics in Go, as for the tuned kernels, before C reads past it.
// The slices are []float32 and fn's parameters float *.
func CgoCall(fn string, slices []string, lens []int) []jen.Code {
	return CgoCallOf(fn, dtype.F32, slices, lens)
}

// CgoCallOf is CgoCall for slices of dt (GoElem) and parameters of CElem(dt) *.
func CgoCallOf(fn string, dt dtype.DType, slices []string, lens []int) []jen.Code {
	var body []jen.Code
	var args []jen.Code
	for i, s := range slices {
		body = append(body, jen.Id("_").Op("=").Id(s).Index(jen.Lit(lens[i]-1)))
		args = append(args, jen.Parens(jen.Op("*").Qual("C", CElem(dt))).Call(
			jen.Qual("unsafe", "Pointer").Call(jen.Op("&").Id(s).Index(jen.Lit(0)))))
	}
	return append(body, jen.Qual("C", fn).Call(args...))
}
