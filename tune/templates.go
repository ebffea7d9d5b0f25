package tune

import (
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/attention"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
)

// templates are the ops that can be tuned. An op listed in kernels without a
// template here is known (its shapes parse) but cannot be tuned yet.
var templates = []kernels.Template{
	softmax.Template,
	gemm.Template,
	gemm.BiasTemplate,
	gemm.BiasReLUTemplate,
	attention.Template,
	attention.TemplateCausal,
}

// Template returns the template of the named op.
func Template(op string) (kernels.Template, bool) {
	for _, t := range templates {
		if t.Op.Name == op {
			return t, true
		}
	}
	return kernels.Template{}, false
}
