package arm64

import (
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/gen/amd64"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
)

// Tag is the build constraint of the files of the NEON forms.
const Tag = "arm64"

// Is reports whether target is an arm64 CPU, whose records this package
// writes the forms of.
func Is(target device.Target) bool { return kernels.ArchOf(target) == kernels.ARM64 }

// FormsOf works out the forms of cfg of tmpl at shape (the tuned shape, or
// the op's example for a generic default) on target, an arm64 CPU: whether
// it has a NEON form, and the config of its scalar form, which is cfg
// itself when it has none. The scalar form is cfg with vec=1 when that is
// a valid config for a CPU without vectors, else the template's default
// there.
func FormsOf(tmpl kernels.Template, cfg schedule.Config, shape []int, target device.Target) (neon bool, scalar schedule.Config, err error) {
	if err := tmpl.Space(shape, target).Check(cfg); err != nil {
		return false, schedule.Config{}, fmt.Errorf("arm64: %s: %w", tmpl.Op.Name, err)
	}
	if !amd64.HasAsm(tmpl, cfg) {
		return false, cfg, nil
	}
	cpu := *target.CPU
	cpu.ISA = device.ISA{}
	none := device.Target{Name: target.Name, CPU: &cpu}
	space := tmpl.Space(shape, none)
	if c, ok := amd64.WithScalarVec(cfg); ok {
		if c, err := space.Parse(c.String()); err == nil && space.Valid(c) {
			return true, c, nil
		}
	}
	c, err := tmpl.DefaultConfig(shape, none)
	if err != nil {
		return false, schedule.Config{}, fmt.Errorf("arm64: %w", err)
	}
	return true, c, nil
}

// BuildsDoc is the "Builds" section of the doc of a package generated
// from arm64 records.
func BuildsDoc() string {
	var b strings.Builder
	b.WriteString("Built for arm64 (build tag arm64), the kernels whose configs have Go assembly (gemm's and attention's micro=asm, softmax's and rmsnorm's code=asm, layernorm's vec=4) ")
	b.WriteString("run their NEON form: the tiles or rows in arm64 assembly, plain Go around them, as autotune measured them. ")
	b.WriteString("NEON is part of every arm64 CPU Go runs on, so they are installed at start-up without a check. ")
	b.WriteString("Every other kernel, and every kernel in a build for another architecture, runs its scalar form: ")
	b.WriteString("the same config with vec=1 (or, where that is not a valid config, the template's default for a CPU without vectors), ")
	b.WriteString("in plain Go, correct but several times slower; Variant then names the scalar forms (suffix Scalar).\n\n")
	return b.String()
}
