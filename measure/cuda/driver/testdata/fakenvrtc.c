// A fake NVRTC for the tests of what runs on the fake libcuda: every
// source compiles, to PTX that is only a comment, which the fake driver
// loads (its kernels are found by name, any other entry only records its
// launch), except a source holding "#error", which fails with a log. No
// cubin: nvrtcGetCUBINSize fails, as for a virtual architecture. Programs
// share no state, so that several threads may compile at once, as NVRTC
// allows.
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

typedef int nvrtcResult;
static const char ptx[] = "// fake PTX\n";
static const char errlog[] = "fake.cu: error: #error in the source";
struct program { int bad, compiled; };

nvrtcResult nvrtcVersion(int *major, int *minor) { *major = 13; *minor = 0; return 0; }
const char *nvrtcGetErrorString(nvrtcResult r) {
	switch (r) {
	case 0: return "NVRTC_SUCCESS";
	case 6: return "NVRTC_ERROR_COMPILATION";
	}
	return "NVRTC_ERROR_INVALID_INPUT";
}
nvrtcResult nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h, const char *const *names) {
	struct program *prog = calloc(1, sizeof *prog);
	prog->bad = strstr(src, "#error") != NULL;
	*p = prog;
	return 0;
}
nvrtcResult nvrtcDestroyProgram(void **p) { free(*p); *p = 0; return 0; }
nvrtcResult nvrtcCompileProgram(void *p, int n, const char *const *opts) {
	struct program *prog = p;
	prog->compiled = 1;
	return prog->bad ? 6 : 0;
}
nvrtcResult nvrtcGetProgramLogSize(void *p, size_t *n) {
	*n = ((struct program *)p)->bad ? sizeof errlog : 1;
	return 0;
}
nvrtcResult nvrtcGetProgramLog(void *p, char *log) {
	if (((struct program *)p)->bad) memcpy(log, errlog, sizeof errlog);
	else *log = 0;
	return 0;
}
nvrtcResult nvrtcGetPTXSize(void *p, size_t *n) { *n = sizeof ptx; return 0; }
nvrtcResult nvrtcGetPTX(void *p, char *out) { memcpy(out, ptx, sizeof ptx); return 0; }
nvrtcResult nvrtcGetCUBINSize(void *p, size_t *n) { return 3; }
nvrtcResult nvrtcGetCUBIN(void *p, char *out) { return 3; }
