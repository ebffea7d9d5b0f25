package all

import (
	"testing"

	"github.com/autotune-dev/autotune/kernels"
)

// TestGeneric checks that every shipped CPU template emits shape-generic
// kernels too, which is what lets a config tuned for one shape serve every
// shape; and that a template with assembly has the generic assembly.
func TestGeneric(t *testing.T) {
	ops := kernels.Ops()
	if len(ops) == 0 {
		t.Fatal("no ops registered")
	}
	for _, op := range ops {
		tmpl, ok := kernels.TemplateFor(op.Name, kernels.CPU)
		if !ok {
			continue
		}
		if tmpl.EmitGoGeneric == nil {
			t.Errorf("the CPU template of %s has no EmitGoGeneric", op.Name)
		}
		if tmpl.EmitAsm != nil && tmpl.EmitAsmGeneric == nil {
			t.Errorf("the CPU template of %s has EmitAsm but no EmitAsmGeneric", op.Name)
		}
	}
}
