// Package neon emits Go assembly for arm64's Advanced SIMD (NEON): the
// register-tiled outer-product micro-kernels of codegen/goasm's [goasm.Tile],
// written for the 32 128-bit V registers, so that a template whose amd64
// kernels call goasm tiles calls the same functions, with the same Go
// declarations (Tile.Decl), on arm64.
//
// A tile of 4-lane vectors (Lanes 4) keeps its mr·nv accumulators, the nv
// vectors of b of a step and two broadcasts of a in registers, as on
// AVX-512 (goasm.Registers; 32 registers, so 6×4 or 12×2 vectors). Each
// step loads b with VLD1, broadcasts a's element of each row with VLD1R
// (a load and a duplicate in one instruction, walking down the rows of a
// by its row stride) and accumulates with VFMLA, a fused multiply-add
// into the accumulator. FMLA by element, which would broadcast from a
// register instead, needs a of the tile's rows contiguous, which only a
// packed A has; Go's assembler lacks it too.
//
// Go 1.26's arm64 assembler has no vector FADD, FSUB, FMUL, FDIV, FMAX
// or their pairwise forms: the epilogues (Bias, ReLU), Init Scaled and
// the row kernels write them as WORD encodings, each with a comment
// naming the instruction (Op.Word).
//
// For the kernels that sweep rows (softmax's and RMSNorm's NEON rows),
// Exp emits the polynomial exp of codegen/golang and codegen/goasm (same
// operations, same constants, same bits) on 4-lane vectors, and Rows
// writes the loops over a row: groups of unrolled vectors, single
// vectors, and the partial vector a lane at a time, NEON having no masked
// loads. The functions
// follow ABI0 (arguments on the stack, NOSPLIT, no frame) and use R0–R15
// and R19–R20, none of which Go reserves.
//
// File renders the .s file of a kernel's tiles; it starts with
// goasm.Header. The assembly reads and writes memory without bounds checks,
// as goasm's does: the Go caller checks the slices.
package neon
