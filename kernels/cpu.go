package kernels

import (
	"fmt"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/schedule"
)

// VectorConstraints are the constraints of every CPU template whose "vec"
// knob is a vector width in float32 lanes (1, 8 or 16): Float32x8 code
// needs AVX2 and FMA, Float32x16 code needs AVX-512.
func VectorConstraints(isa device.ISA) []schedule.Constraint {
	return []schedule.Constraint{
		{Name: "vec8_needs_avx2_fma", OK: func(c schedule.Config) bool {
			return c.Int("vec") != 8 || isa.AVX2 && isa.FMA
		}},
		{Name: "vec16_needs_avx512", OK: func(c schedule.Config) bool {
			return c.Int("vec") != 16 || isa.AVX512
		}},
	}
}

// RowChunkConstraints are the constraints of a CPU template that deals
// rows of a rows-long workload to its "threads" goroutines in chunks of
// "rows_per_chunk" (codegen/golang.RowSplit): one thread walks the rows in
// order, so chunk sizes would all be the same kernel; and a goroutine
// without a chunk would have nothing to do.
func RowChunkConstraints(rows int) []schedule.Constraint {
	return []schedule.Constraint{
		{Name: "rows_per_chunk_needs_threads", OK: func(c schedule.Config) bool {
			return c.Int("threads") > 1 || c.Int("rows_per_chunk") == 1
		}},
		{Name: "threads_at_most_chunks", OK: func(c schedule.Config) bool {
			chunk := c.Int("rows_per_chunk")
			return c.Int("threads") <= (rows+chunk-1)/chunk
		}},
	}
}

// ThreadCounts are the values of a "threads" knob: 1 to the CPU's cores
// (at least 1, also for a CPU that does not say).
func ThreadCounts(cpu *device.CPU) []int {
	n := 1
	if cpu != nil {
		n = max(cpu.Cores, 1)
	}
	threads := make([]int, n)
	for i := range threads {
		threads[i] = i + 1
	}
	return threads
}

// WidestVector is the widest "vec" knob value (float32 lanes) that the
// target's ISA runs: 16 with AVX-512, 8 with AVX2 and FMA, else 1.
func WidestVector(t device.Target) int {
	switch {
	case t.CPU == nil:
		return 1
	case t.CPU.ISA.AVX512:
		return 16
	case t.CPU.ISA.AVX2 && t.CPU.ISA.FMA:
		return 8
	}
	return 1
}

// PortableScalar returns k as an emitter without NEON code of its own
// writes it: k itself, except that an arm64 kernel of a scalar config
// (vec=1), plain Go the same on every architecture, is asked for as on
// amd64. It panics for an arm64 kernel of a vector config, which the
// template's arm64 space never offers (VectorConstraints).
func PortableScalar(k Kernel) Kernel {
	if k.Arch.ISA != ARM64.ISA {
		return k
	}
	if k.Config.Int("vec") != 1 {
		panic(fmt.Sprintf("kernels: %s: no arm64 kernel of %s: the template has scalar code only there", k.Name, k.Config))
	}
	k.Arch = AMD64
	return k
}
