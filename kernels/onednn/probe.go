//go:build onednn

package onednn

// #cgo LDFLAGS: -ldnnl
// #include <stdlib.h>
// #include <oneapi/dnnl/dnnl.h>
// #include <oneapi/dnnl/dnnl_debug.h>
//
// static dnnl_engine_t engine;
//
// static dnnl_status_t md(dnnl_memory_desc_t *m, int n, const long *dims, const long *strides, dnnl_data_type_t dt) {
// 	dnnl_dims_t d, s;
// 	for (int i = 0; i < n; i++) {
// 		d[i] = dims[i];
// 		s[i] = strides[i];
// 	}
// 	return dnnl_memory_desc_init_by_strides(m, n, d, dt, s);
// }
//
// // has creates (and destroys) a primitive descriptor for the operation
// // descriptor op with attributes attr.
// static dnnl_status_t has(const_dnnl_op_desc_t op, const_dnnl_primitive_attr_t attr) {
// 	dnnl_status_t s = dnnl_success;
// 	if (!engine) s = dnnl_engine_create(&engine, dnnl_cpu, 0);
// 	if (s != dnnl_success) return s;
// 	dnnl_primitive_desc_t pd;
// 	s = dnnl_primitive_desc_create(&pd, op, attr, engine, NULL);
// 	if (s == dnnl_success) dnnl_primitive_desc_destroy(pd);
// 	return s;
// }
//
// static dnnl_status_t softmax(int n, const long *dims, const long *strides, dnnl_data_type_t dt, int axis) {
// 	dnnl_memory_desc_t m;
// 	dnnl_softmax_desc_t d;
// 	dnnl_status_t s = md(&m, n, dims, strides, dt);
// 	if (s == dnnl_success) s = dnnl_softmax_forward_desc_init(&d, dnnl_forward_inference, &m, axis);
// 	return s == dnnl_success ? has(&d, NULL) : s;
// }
//
// // mds holds the dims and then the strides of each memory descriptor, n
// // of each.
// static dnnl_status_t matmul(int n, const long *mds, int bias, dnnl_data_type_t dt, int scale, int relu) {
// 	dnnl_memory_desc_t m[4];
// 	dnnl_status_t s = dnnl_success;
// 	for (int i = 0; i < 3 + bias && s == dnnl_success; i++) s = md(&m[i], n, mds + 2*n*i, mds + 2*n*i + n, dt);
// 	dnnl_matmul_desc_t d;
// 	if (s == dnnl_success) s = dnnl_matmul_desc_init(&d, &m[0], &m[1], bias ? &m[3] : NULL, &m[2]);
// 	if (s != dnnl_success) return s;
// 	dnnl_primitive_attr_t attr;
// 	if ((s = dnnl_primitive_attr_create(&attr)) != dnnl_success) return s;
// 	const float one = 1;
// 	if (scale) s = dnnl_primitive_attr_set_output_scales(attr, 1, 0, &one);
// 	if (relu && s == dnnl_success) {
// 		dnnl_post_ops_t po;
// 		if ((s = dnnl_post_ops_create(&po)) == dnnl_success) {
// 			s = dnnl_post_ops_append_eltwise(po, 1.0f, dnnl_eltwise_relu, 0.0f, 0.0f);
// 			if (s == dnnl_success) s = dnnl_primitive_attr_set_post_ops(attr, po);
// 			dnnl_post_ops_destroy(po);
// 		}
// 	}
// 	if (s == dnnl_success) s = has(&d, attr);
// 	dnnl_primitive_attr_destroy(attr);
// 	return s;
// }
//
// static dnnl_status_t lnorm(int n, const long *dims, const long *strides, dnnl_data_type_t dt, float eps) {
// 	dnnl_memory_desc_t m;
// 	dnnl_layer_normalization_desc_t d;
// 	dnnl_status_t s = md(&m, n, dims, strides, dt);
// 	if (s == dnnl_success) s = dnnl_layer_normalization_forward_desc_init(&d, dnnl_forward_inference, &m, NULL, eps,
// 		dnnl_use_scale | dnnl_use_shift);
// 	return s == dnnl_success ? has(&d, NULL) : s;
// }
//
// static dnnl_status_t add(int n, const long *mds, dnnl_data_type_t dt) {
// 	dnnl_memory_desc_t a, b;
// 	dnnl_binary_desc_t d;
// 	dnnl_status_t s = md(&a, n, mds, mds + n, dt);
// 	if (s == dnnl_success) s = md(&b, n, mds + 2*n, mds + 3*n, dt);
// 	if (s == dnnl_success) s = dnnl_binary_desc_init(&d, dnnl_binary_add, &a, &b, &a);
// 	return s == dnnl_success ? has(&d, NULL) : s;
// }
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/autotune-dev/autotune/dtype"
)

// An MD is the layout of a memory object: its dims and strides, in
// elements, outermost first.
type MD struct{ Dims, Strides []int }

// A Matmul is oneDNN's matmul primitive Src·Weights → Dst, all of one
// dtype, with the bias argument when Bias is set.
type Matmul struct {
	Src, Weights, Dst MD
	Bias              *MD
	Scale             bool // an output scale (attention's 1/√D)
	ReLU              bool // ReLU as an eltwise post-op
}

// mu serialises the probes: the engine is created at the first.
var mu sync.Mutex

// Softmax returns why oneDNN has no forward-inference softmax along axis
// over md in dt here, or "".
func Softmax(dt dtype.DType, md MD, axis int) string {
	n, buf := layouts(md)
	return missing("softmax", dt, func(dims *C.long, ct C.dnnl_data_type_t) C.dnnl_status_t {
		return C.softmax(C.int(n), dims, (*C.long)(&buf[n]), ct, C.int(axis))
	}, buf)
}

// LayerNorm returns why oneDNN has no forward-inference layer
// normalization with scale and shift (dnnl_use_scale|dnnl_use_shift,
// which oneDNN 2 holds in float32 whatever dt is) over the last axis of
// md in dt here, or "".
func LayerNorm(dt dtype.DType, md MD, eps float32) string {
	n, buf := layouts(md)
	return missing("layer normalization", dt, func(dims *C.long, ct C.dnnl_data_type_t) C.dnnl_status_t {
		return C.lnorm(C.int(n), dims, (*C.long)(&buf[n]), ct, C.float(eps))
	}, buf)
}

// Missing returns why oneDNN has no such matmul in dt here, or "".
func (m Matmul) Missing(dt dtype.DType) string {
	mds := []MD{m.Src, m.Weights, m.Dst}
	if m.Bias != nil {
		mds = append(mds, *m.Bias)
	}
	n, buf := layouts(mds...)
	return missing("matmul", dt, func(p *C.long, ct C.dnnl_data_type_t) C.dnnl_status_t {
		return C.matmul(C.int(n), p, C.int(len(mds)-3), ct, cbool(m.Scale), cbool(m.ReLU))
	}, buf)
}

// Add returns why oneDNN has no binary primitive adding src1 to src0 in
// place in dt here, or "".
func Add(dt dtype.DType, src0, src1 MD) string {
	n, buf := layouts(src0, src1)
	return missing("binary add", dt, func(p *C.long, ct C.dnnl_data_type_t) C.dnnl_status_t {
		return C.add(C.int(n), p, ct)
	}, buf)
}

// layouts returns the rank of mds, which must all have it, and their dims
// and strides in one C array of longs: each one's dims, then its strides.
func layouts(mds ...MD) (int, []C.long) {
	n := len(mds[0].Dims)
	var buf []C.long
	for _, md := range mds {
		if len(md.Dims) != n || len(md.Strides) != n {
			panic(fmt.Sprintf("onednn: layouts of ranks %d and %d/%d", n, len(md.Dims), len(md.Strides)))
		}
		for _, x := range append(append([]int(nil), md.Dims...), md.Strides...) {
			buf = append(buf, C.long(x))
		}
	}
	return n, buf
}

// missing runs probe on buf in dt's oneDNN type and describes its
// failure, or returns "".
func missing(what string, dt dtype.DType, probe func(*C.long, C.dnnl_data_type_t) C.dnnl_status_t, buf []C.long) string {
	ct, ok := types[dt]
	if !ok {
		panic("onednn: no oneDNN type for " + string(dt))
	}
	mu.Lock()
	s := probe(&buf[0], ct)
	mu.Unlock()
	runtime.KeepAlive(buf)
	if s == C.dnnl_success {
		return ""
	}
	v := C.dnnl_version()
	why := fmt.Sprintf("oneDNN %d.%d.%d has no %s %s here (%s", v.major, v.minor, v.patch, dt, what, C.GoString(C.dnnl_status2str(s)))
	if isa := os.Getenv("ONEDNN_MAX_CPU_ISA"); isa != "" {
		why += ", ONEDNN_MAX_CPU_ISA=" + isa
	}
	return why + ")"
}

var types = map[dtype.DType]C.dnnl_data_type_t{dtype.F32: C.dnnl_f32, dtype.BF16: C.dnnl_bf16, dtype.F16: C.dnnl_f16}

func cbool(b bool) C.int {
	if b {
		return 1
	}
	return 0
}
