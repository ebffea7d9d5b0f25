// A fake libcuda.so.1 for the binding's tests: device memory is host
// memory, a module is any image, and its kernels are C functions that read
// their arguments from the void** of cuLaunchKernel exactly as the GPU would.
// Built by driver_test.go with the C compiler; -DOMIT_LAUNCH leaves
// cuLaunchKernel out, to test a missing symbol. Generated CUDA packages
// (gen/gocuda) are tested against it too: a PTX image (one that starts
// with "//") loads, any other entry point is a kernel that only records
// its launch, and fake_last_launch, fake_last_params and fake_last_attr
// say what the last launch and cuFuncSetAttribute got. measure/cuda's
// bench runs on it with the fake NVRTC of fakenvrtc.c.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static CUresult sticky; // set by the "trap" kernel, reported by cuCtxSynchronize

CUresult cuInit(unsigned flags) {
	const char *e = getenv("FAKECUDA_INIT");
	return e ? atoi(e) : 0;
}
CUresult cuDriverGetVersion(int *v) { *v = 13000; return 0; }
CUresult cuGetErrorName(CUresult code, const char **name) {
	switch (code) {
	case 0: *name = "CUDA_SUCCESS"; return 0;
	case 1: *name = "CUDA_ERROR_INVALID_VALUE"; return 0;
	case 2: *name = "CUDA_ERROR_OUT_OF_MEMORY"; return 0;
	case 100: *name = "CUDA_ERROR_NO_DEVICE"; return 0;
	case 500: *name = "CUDA_ERROR_NOT_FOUND"; return 0;
	case 700: *name = "CUDA_ERROR_ILLEGAL_ADDRESS"; return 0;
	}
	*name = 0;
	return 1;
}
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *dev, int ordinal) { if (ordinal != 0) return 101; *dev = 0; return 0; }
CUresult cuDeviceGetName(char *name, int n, int dev) { strncpy(name, "Fake GPU 9000", n); return 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
	switch (attr) {
	case 75: *v = 8; return 0;        // compute capability 8.6
	case 76: *v = 6; return 0;
	case 38: *v = 1 << 20; return 0;  // L2
	case 97: *v = 99 << 10; return 0; // shared memory per block, opted in
	case 16: *v = 2; return 0;        // multiprocessors
	case 39: *v = 2048; return 0;     // threads per multiprocessor
	}
	*v = 0;
	return 0;
}
static int ctx;
CUresult cuDevicePrimaryCtxRetain(void **c, int dev) { *c = &ctx; return 0; }
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { return 0; }
static void *current;
CUresult cuCtxSetCurrent(void *c) { if (c != &ctx && c != 0) return 1; current = c; return 0; }
CUresult cuCtxGetCurrent(void **c) { *c = current; return 0; }
CUresult cuCtxGetDevice(int *dev) { if (!current) return 201; *dev = 0; return 0; }
CUresult cuCtxSynchronize(void) { return sticky; }
static int module, ptxmodule;
CUresult cuModuleLoadData(void **m, const void *image) {
	if (strncmp((const char *)image, "//", 2) == 0) { *m = &ptxmodule; return 0; }
	if (strcmp((const char *)image, "fake image") != 0) return 200;
	*m = &module;
	return 0;
}
CUresult cuModuleUnload(void *m) { return 0; }

// Kernels. saxpy(float *out, const float *in, int n, float a, double b,
// long long c): out[i] = a*in[i] + b + c + i for i < n.
static void saxpy(void **p) {
	float *out = (float *)*(CUdeviceptr *)p[0];
	const float *in = (const float *)*(CUdeviceptr *)p[1];
	int n = *(int *)p[2];
	float a = *(float *)p[3];
	double b = *(double *)p[4];
	long long c = *(long long *)p[5];
	for (int i = 0; i < n; i++) out[i] = a * in[i] + (float)b + (float)c + (float)i;
}
static void trap(void **p) { sticky = 700; }
// gemm2x3x4(float *c, const float *a, const float *b): the row-major
// product of a 2×4 and a 4×3 matrix, a kernel of fixed shape.
static void gemm2x3x4(void **p) {
	float *c = (float *)*(CUdeviceptr *)p[0];
	const float *a = (const float *)*(CUdeviceptr *)p[1], *b = (const float *)*(CUdeviceptr *)p[2];
	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 3; j++) {
			float s = 0;
			for (int k = 0; k < 4; k++) s += a[i * 4 + k] * b[k * 3 + j];
			c[i * 3 + j] = s;
		}
}
// record keeps the first 8 bytes of each of its arguments, up to a null
// pointer after the last (their slots must hold that many: gen/gocuda's
// do): fake_last_params.
static unsigned long long last_params[16];
static int last_nparams;
void fake_last_params(unsigned long long *out, int n) {
	for (int i = 0; i < n && i < 16; i++) out[i] = i < last_nparams ? last_params[i] : 0;
}
static void record(void **p) {
	for (last_nparams = 0; last_nparams < 16 && p[last_nparams]; last_nparams++)
		last_params[last_nparams] = *(unsigned long long *)p[last_nparams];
}
typedef void (*kernel)(void **);
static struct { const char *name; kernel k; } kernels[] = {{"saxpy", saxpy}, {"trap", trap}, {"record", record}, {"gemm2x3x4", gemm2x3x4}};

CUresult cuModuleGetFunction(void **f, void *m, const char *name) {
	for (unsigned i = 0; i < sizeof kernels / sizeof kernels[0]; i++)
		if (strcmp(name, kernels[i].name) == 0) { *f = (void *)&kernels[i]; return 0; }
	if (m != &ptxmodule) return 500;
	*f = (void *)&kernels[2]; // any other entry point of PTX records its launch
	return 0;
}
CUresult cuFuncGetAttribute(int *v, int attr, void *f) { *v = attr == 4 ? 42 : 0; return 0; }
static int last_attr[2];
void fake_last_attr(int *out) { out[0] = last_attr[0]; out[1] = last_attr[1]; }
CUresult cuFuncSetAttribute(void *f, int attr, int v) { last_attr[0] = attr; last_attr[1] = v; return 0; }

static unsigned last_launch[7]; // grid, block, shared bytes
void fake_last_launch(unsigned *dims) { memcpy(dims, last_launch, sizeof last_launch); }
#ifndef OMIT_LAUNCH
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, void *stream, void **params, void **extra) {
	unsigned dims[7] = {gx, gy, gz, bx, by, bz, shared};
	memcpy(last_launch, dims, sizeof dims);
	if (gx == 0 || bx == 0 || bx * by * bz > 1024) return 1;
	(*(kernel *)((char *)f + sizeof(const char *)))(params);
	return 0;
}
#endif

CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n) {
	if (n == 0) return 1;
	if (n > ((size_t)1 << 40)) return 2;
	*p = (CUdeviceptr)malloc(n);
	return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) { free((void *)p); return 0; }
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n) { memcpy((void *)dst, src, n); return 0; }
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n) { memcpy(dst, (void *)src, n); return 0; }
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) { memmove((void *)dst, (void *)src, n); return 0; }
CUresult cuMemsetD32_v2(CUdeviceptr dst, unsigned v, size_t n) {
	for (size_t i = 0; i < n; i++) ((unsigned *)dst)[i] = v;
	return 0;
}
static int events;
CUresult cuEventCreate(void **e, unsigned flags) { *e = (void *)(intptr_t)(++events); return 0; }
CUresult cuEventDestroy_v2(void *e) { return 0; }
CUresult cuEventRecord(void *e, void *s) { return 0; }
CUresult cuEventSynchronize(void *e) { return 0; }
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
	*ms = 0.25f * (float)((intptr_t)b - (intptr_t)a);
	return 0;
}
