package cuda

import (
	"fmt"

	"github.com/autotune-dev/autotune/dtype"
)

// MMAHelpers returns the device functions of a warp's tensor-core
// product in the 16-bit dtype dt (bf16 or f16), whose elements kernels
// keep as their bits; it panics for another dtype. They are
//
//	void at_ldmatrix_x4(unsigned (&r)[4], const void *row)        ldmatrix .m8n8.x4.shared.b16
//	void at_ldmatrix_x4_trans(unsigned (&r)[4], const void *row)  the same with .trans
//	void at_mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
//
// at_mma is mma.sync.aligned.m16n8k16.row.col.f32.T.T.f32 with T the
// dtype, accumulating into d. Every lane of the warp must call them
// together (they are .sync.aligned), row a 16-byte-aligned address in
// shared memory (lanes 8i..8i+7 give the rows of matrix i); the fragment
// layouts are the PTX ISA's ("Matrix Fragments for mma.m16n8k16 with
// floating point type", "Warp-level matrix load instruction: ldmatrix").
//
// On a GPU compiler they are inline PTX and need sm_80 (bf16 mma does;
// the kernels that use them require it). Under autotune's emulator
// (AUTOTUNE_EMU) they are its warp collectives emu_ldmatrix and
// emu_mma_m16n8k16, which hand every lane the elements the layouts say,
// so a kernel that assumes another layout computes a wrong product there
// as on a GPU. Where __CUDA_ARCH__ is not defined (a host compiler
// checking the source) they leave zeros and d unchanged.
func MMAHelpers(dt dtype.DType) string {
	var t, bf16 string
	switch dt {
	case dtype.BF16:
		t, bf16 = "bf16", "true"
	case dtype.F16:
		t, bf16 = "f16", "false"
	default:
		panic(fmt.Sprintf("cuda: MMAHelpers of %s, not a 16-bit dtype", dt))
	}
	return fmt.Sprintf(mmaHelpers, t, bf16)
}

const mmaHelpers = `// Tensor-core fragments of %[1]s: ldmatrix and mma.sync m16n8k16.
#if defined(__CUDA_ARCH__) && !defined(AUTOTUNE_EMU)
#define AT_MMA_GPU 1
__device__ __forceinline__ unsigned at_shared_addr(const void *p) {
	unsigned s;
	asm("{ .reg .u64 p; cvta.to.shared.u64 p, %%1; cvt.u32.u64 %%0, p; }" : "=r"(s) : "l"(p));
	return s;
}
#endif

__device__ __forceinline__ void at_ldmatrix_x4(unsigned (&r)[4], const void *row) {
#if defined(AT_MMA_GPU)
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%%0, %%1, %%2, %%3}, [%%4];"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at_shared_addr(row)));
#elif defined(AUTOTUNE_EMU)
	emu_ldmatrix(r, 4, false, row);
#else
	r[0] = r[1] = r[2] = r[3] = 0u;
#endif
}

__device__ __forceinline__ void at_ldmatrix_x4_trans(unsigned (&r)[4], const void *row) {
#if defined(AT_MMA_GPU)
	asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%%0, %%1, %%2, %%3}, [%%4];"
		: "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3]) : "r"(at_shared_addr(row)));
#elif defined(AUTOTUNE_EMU)
	emu_ldmatrix(r, 4, true, row);
#else
	r[0] = r[1] = r[2] = r[3] = 0u;
#endif
}

__device__ __forceinline__ void at_mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(AT_MMA_GPU)
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.%[1]s.%[1]s.f32 {%%0, %%1, %%2, %%3}, {%%4, %%5, %%6, %%7}, {%%8, %%9}, {%%0, %%1, %%2, %%3};"
		: "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
		: "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#elif defined(AUTOTUNE_EMU)
	emu_mma_m16n8k16(d, a, b, %[2]s);
#endif
}
`
