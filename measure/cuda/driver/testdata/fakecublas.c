// A fake libcublas for the binding's tests, used with fakecuda.c, whose
// device memory is host memory: cublasSgemm_v2 computes the column-major
// product on the host, as cuBLAS would on the device, and checks its
// arguments as cuBLAS does (CUBLAS_STATUS_INVALID_VALUE for a leading
// dimension too small). fake_last_sgemm says what the last call got.
// FAKECUBLAS_CREATE makes cublasCreate_v2 fail with that status.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef int cublasStatus_t;

static int handle;
static void *stream = (void *)1; // a fresh handle's is the default stream, 0; 1 tells whether SetStream ran

cublasStatus_t cublasCreate_v2(void **h) {
	const char *e = getenv("FAKECUBLAS_CREATE");
	if (e) return atoi(e);
	*h = &handle;
	return 0;
}
cublasStatus_t cublasDestroy_v2(void *h) { return h == &handle ? 0 : 1; }
cublasStatus_t cublasSetStream_v2(void *h, void *s) {
	if (h != &handle) return 1;
	stream = s;
	return 0;
}

// The last call: transa, transb, m, n, k, lda, ldb, ldc, A, B, C, the
// bits of alpha and of beta, and the stream.
static long long last[14];
void fake_last_sgemm(long long *out) { memcpy(out, last, sizeof last); }

static int max1(int x) { return x > 1 ? x : 1; }

cublasStatus_t cublasSgemm_v2(void *h, int transa, int transb, int m, int n, int k, const float *alpha,
                              const float *A, int lda, const float *B, int ldb, const float *beta, float *C, int ldc) {
	uint32_t ab, bb;
	memcpy(&ab, alpha, 4);
	memcpy(&bb, beta, 4);
	long long call[14] = {transa, transb, m, n, k, lda, ldb, ldc, (long long)(intptr_t)A, (long long)(intptr_t)B,
	                      (long long)(intptr_t)C, ab, bb, (long long)(intptr_t)stream};
	memcpy(last, call, sizeof call);
	if (h != &handle) return 1;
	if (transa < 0 || transa > 2 || transb < 0 || transb > 2 || m < 0 || n < 0 || k < 0) return 7;
	if (lda < max1(transa ? k : m) || ldb < max1(transb ? n : k) || ldc < max1(m)) return 7;
	for (int j = 0; j < n; j++)
		for (int i = 0; i < m; i++) {
			double s = 0;
			for (int p = 0; p < k; p++) {
				float a = transa ? A[p + (long)i * lda] : A[i + (long)p * lda];
				float b = transb ? B[j + (long)p * ldb] : B[p + (long)j * ldb];
				s += (double)a * b;
			}
			float *c = &C[i + (long)j * ldc];
			*c = *alpha * (float)s + (*beta == 0 ? 0 : *beta * *c);
		}
	return 0;
}
