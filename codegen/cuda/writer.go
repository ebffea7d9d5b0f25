package cuda

import (
	"fmt"
	"strings"
)

// Writer writes CUDA C source a line at a time, each indented by a tab per
// block open around it. The zero Writer is ready to use.
type Writer struct {
	b      strings.Builder
	indent int
}

// Line writes one line, formatted as by fmt.Sprintf; an empty line gets
// no indentation.
func (w *Writer) Line(format string, args ...any) {
	text := fmt.Sprintf(format, args...)
	if text != "" {
		w.b.WriteString(strings.Repeat("\t", w.indent))
	}
	w.b.WriteString(text + "\n")
}

// Open writes a line ending in " {" and indents what follows.
func (w *Writer) Open(format string, args ...any) {
	w.Line(format+" {", args...)
	w.indent++
}

// Scope opens a block of its own, for declarations local to it.
func (w *Writer) Scope() {
	w.Line("{")
	w.indent++
}

// Close ends the innermost block.
func (w *Writer) Close() {
	w.indent--
	w.Line("}")
}

// Raw writes s as it is, without indentation.
func (w *Writer) Raw(s string) { w.b.WriteString(s) }

// String returns the source written so far.
func (w *Writer) String() string { return w.b.String() }

// CPAsyncHelpers are the device functions of a copy with cp.async: the PTX
// instructions on a GPU compiler; under autotune's emulator (AUTOTUNE_EMU)
// its __pipeline primitives, which queue the copy until the wait, so that
// reading a tile too early reads NaN; where __CUDA_ARCH__ is not defined (a
// host compiler checking the source), a plain copy and waits that do
// nothing.
const CPAsyncHelpers = `// cp.async copies of 4 or 16 bytes; !ok fills the destination with zeros.
template <int BYTES>
__device__ __forceinline__ void cp_async(float *dst, const float *src, bool ok) {
#if defined(__CUDA_ARCH__) && !defined(AUTOTUNE_EMU)
	unsigned s;
	asm volatile("{ .reg .u64 p; cvta.to.shared.u64 p, %1; cvt.u32.u64 %0, p; }" : "=r"(s) : "l"(dst));
	if (BYTES == 16)
		asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" :: "r"(s), "l"(src), "r"(ok ? 16 : 0) : "memory");
	else
		asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(s), "l"(src), "r"(ok ? 4 : 0) : "memory");
#elif defined(AUTOTUNE_EMU)
	__pipeline_memcpy_async(dst, src, BYTES, ok ? 0 : BYTES);
#else
	for (int i = 0; i < BYTES / 4; ++i) dst[i] = ok ? src[i] : 0.f;
#endif
}

__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && !defined(AUTOTUNE_EMU)
	asm volatile("cp.async.commit_group;" ::: "memory");
#elif defined(AUTOTUNE_EMU)
	__pipeline_commit();
#endif
}

template <int N>
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && !defined(AUTOTUNE_EMU)
	asm volatile("cp.async.wait_group %0;" :: "n"(N) : "memory");
#elif defined(AUTOTUNE_EMU)
	__pipeline_wait_prior(N);
#endif
}
`
