package kernels

import (
	"fmt"
	"math"
)

// A CUDALaunch says how the host launches a shape-generic CUDA kernel
// (a Kernel without a Shape) for the extents d of a shape, in the order of
// Op.Dims. It is data rather than a function so that a consumer (a
// generated package) can carry it and evaluate it without autotune: the
// grid and the dynamic shared memory follow from the extents by ceiling
// divisions, products and one rounding.
type CUDALaunch struct {
	// Block is the block, fixed by the config.
	Block [3]int
	// Grid[i] is the product of its factors, 1 when it has none.
	Grid [3][]CUDAFactor
	// Shared is the dynamic shared memory per block, in bytes.
	Shared CUDASize
	// Multiple[i], when above 1, is what d[i] must be a multiple of (a
	// vector width the kernel loads rows with); Max[i], when above 0, is
	// the largest d[i] the kernel holds (a register array sized at compile
	// time). Nil or short when no extent has such a limit.
	Multiple, Max []int
}

// A CUDAFactor is ⌈d[Dim]/Div⌉.
type CUDAFactor struct{ Dim, Div int }

// A CUDASize is Base bytes plus, when Per is not 0, Per bytes times
// d[Dim]+Add rounded up to a multiple of Round (1 when 0).
type CUDASize struct{ Base, Per, Dim, Add, Round int }

// At returns the size for the extents d.
func (s CUDASize) At(d []int) int {
	if s.Per == 0 {
		return s.Base
	}
	r := max(s.Round, 1)
	return s.Base + s.Per*((d[s.Dim]+s.Add+r-1)/r*r)
}

// Serves reports why the kernel cannot run the extents d, or "" when it
// can: an extent that is not a multiple the kernel needs or is larger
// than it holds, or an extent or a grid beyond what CUDA launches (extents
// are int arguments; grid.x < 2³¹, grid.y and grid.z ≤ 65535).
func (l CUDALaunch) Serves(d []int) string {
	for i, x := range d {
		if x < 1 || x > math.MaxInt32 {
			return fmt.Sprintf("extent %d is %d, outside 1…%d", i, x, math.MaxInt32)
		}
		if i < len(l.Multiple) && l.Multiple[i] > 1 && x%l.Multiple[i] != 0 {
			return fmt.Sprintf("extent %d is %d, not a multiple of %d", i, x, l.Multiple[i])
		}
		if i < len(l.Max) && l.Max[i] > 0 && x > l.Max[i] {
			return fmt.Sprintf("extent %d is %d, more than the kernel's %d", i, x, l.Max[i])
		}
	}
	g := l.grid(d)
	if g[0] >= 1<<31 || g[1] > 65535 || g[2] > 65535 {
		return fmt.Sprintf("grid %v is larger than CUDA launches", g)
	}
	return ""
}

// At returns the grid and the dynamic shared memory for the extents d, or
// an error when the kernel does not serve them (Serves).
func (l CUDALaunch) At(d []int) (grid [3]int, shared int, err error) {
	if why := l.Serves(d); why != "" {
		return grid, 0, fmt.Errorf("kernels: %s", why)
	}
	return l.grid(d), l.Shared.At(d), nil
}

func (l CUDALaunch) grid(d []int) [3]int {
	var g [3]int
	for i, fs := range l.Grid {
		g[i] = 1
		for _, f := range fs {
			g[i] *= (d[f.Dim] + f.Div - 1) / f.Div
		}
	}
	return g
}
