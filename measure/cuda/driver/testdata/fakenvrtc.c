// A fake NVRTC for the tests of what runs on the fake libcuda: every
// source compiles, to PTX that is only a comment, which the fake driver
// loads (its kernels are found by name, any other entry only records its
// launch). No cubin: nvrtcGetCUBINSize fails, as for a virtual
// architecture.
#include <stddef.h>
#include <string.h>

typedef int nvrtcResult;
static const char ptx[] = "// fake PTX\n";
static int program;

nvrtcResult nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
const char *nvrtcGetErrorString(nvrtcResult r) { return r ? "NVRTC_ERROR_INVALID_INPUT" : "NVRTC_SUCCESS"; }
nvrtcResult nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h, const char *const *names) {
	*p = &program;
	return 0;
}
nvrtcResult nvrtcDestroyProgram(void **p) { *p = 0; return 0; }
nvrtcResult nvrtcCompileProgram(void *p, int n, const char *const *opts) { return p == &program ? 0 : 3; }
nvrtcResult nvrtcGetProgramLogSize(void *p, size_t *n) { *n = 1; return 0; }
nvrtcResult nvrtcGetProgramLog(void *p, char *log) { *log = 0; return 0; }
nvrtcResult nvrtcGetPTXSize(void *p, size_t *n) { *n = sizeof ptx; return 0; }
nvrtcResult nvrtcGetPTX(void *p, char *out) { memcpy(out, ptx, sizeof ptx); return 0; }
nvrtcResult nvrtcGetCUBINSize(void *p, size_t *n) { return 3; }
nvrtcResult nvrtcGetCUBIN(void *p, char *out) { return 3; }
