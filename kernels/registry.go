package kernels

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/autotune-dev/autotune/device"
)

// Backend is a way to build and run kernels: generated Go and assembly on
// the CPU, CUDA C on an NVIDIA GPU. A target's backend follows from the
// target (BackendOf); templates and measurers are registered per backend.
type Backend string

const (
	CPU  Backend = "cpu"
	CUDA Backend = "cuda"
)

// BackendOf returns the backend that runs code on t.
func BackendOf(t device.Target) Backend {
	if t.IsCUDA() {
		return CUDA
	}
	return CPU
}

// registry holds the registered ops and templates. Op packages fill it from
// their init functions, so reads after main starts need no lock in
// practice; the lock keeps tests that register ops of their own safe.
var registry = struct {
	sync.RWMutex
	ops       map[string]Op
	templates map[templateKey]Template
}{ops: map[string]Op{}, templates: map[templateKey]Template{}}

type templateKey struct {
	op      string
	backend Backend
}

// RegisterOp adds op to the known operators. It panics when op is
// incomplete or its name is taken: registration happens in init functions,
// where a mistake is a bug to fail loudly on.
func RegisterOp(op Op) {
	switch {
	case op.Name == "" || strings.ContainsAny(op.Name, " \t\n/"):
		panic(fmt.Sprintf("kernels: RegisterOp: bad op name %q", op.Name))
	case len(op.Dims) == 0 || op.Example == "":
		panic(fmt.Sprintf("kernels: RegisterOp(%s): no dimensions or no example shape", op.Name))
	case op.Args == nil || op.Reference == nil || op.Tolerance == nil || op.FLOPs == nil || op.Bytes == nil:
		panic(fmt.Sprintf("kernels: RegisterOp(%s): Args, Reference, Tolerance, FLOPs and Bytes are required", op.Name))
	}
	if _, err := op.ParseShape(op.Example); err != nil {
		panic(fmt.Sprintf("kernels: RegisterOp(%s): example shape: %v", op.Name, err))
	}
	for _, v := range op.Variants {
		if v.Flag == "" || v.Op == "" {
			panic(fmt.Sprintf("kernels: RegisterOp(%s): variant %+v needs a flag and an op", op.Name, v))
		}
	}
	registry.Lock()
	defer registry.Unlock()
	if _, dup := registry.ops[op.Name]; dup {
		panic(fmt.Sprintf("kernels: RegisterOp: op %s registered twice", op.Name))
	}
	registry.ops[op.Name] = cloneOp(op)
}

// Register adds t as the template of its op on its backend. The op must be
// registered first, and a backend has at most one template per op. Like
// RegisterOp it panics on a mistake.
func Register(t Template) {
	switch {
	case t.Backend == "":
		panic(fmt.Sprintf("kernels: Register(%s): no backend", t.Op.Name))
	case t.Version == "" || t.Space == nil:
		panic(fmt.Sprintf("kernels: Register(%s, %s): Version and Space are required", t.Op.Name, t.Backend))
	case t.Backend == CPU && t.Go == nil:
		panic(fmt.Sprintf("kernels: Register(%s, cpu): a CPU template needs a Go emitter", t.Op.Name))
	case t.Backend == CUDA && t.CUDA == nil:
		panic(fmt.Sprintf("kernels: Register(%s, cuda): a CUDA template needs a CUDA emitter", t.Op.Name))
	}
	registry.Lock()
	defer registry.Unlock()
	if _, ok := registry.ops[t.Op.Name]; !ok {
		panic(fmt.Sprintf("kernels: Register: op %s is not registered", t.Op.Name))
	}
	key := templateKey{t.Op.Name, t.Backend}
	if _, dup := registry.templates[key]; dup {
		panic(fmt.Sprintf("kernels: Register: a %s template of %s is registered already", t.Backend, t.Op.Name))
	}
	registry.templates[key] = t
}

func cloneOp(op Op) Op {
	op.Dims = slices.Clone(op.Dims)
	op.Variants = slices.Clone(op.Variants)
	return op
}

// Ops returns every registered operator, sorted by name.
func Ops() []Op {
	registry.RLock()
	defer registry.RUnlock()
	out := make([]Op, 0, len(registry.ops))
	for _, op := range registry.ops {
		out = append(out, cloneOp(op))
	}
	slices.SortFunc(out, func(a, b Op) int { return cmp.Compare(a.Name, b.Name) })
	return out
}

// Names returns the names of the registered operators, sorted.
func Names() []string {
	var names []string
	for _, op := range Ops() {
		names = append(names, op.Name)
	}
	return names
}

// Lookup returns the named operator or an error listing the known ones.
func Lookup(name string) (Op, error) {
	registry.RLock()
	op, ok := registry.ops[name]
	registry.RUnlock()
	if !ok {
		return Op{}, fmt.Errorf("unknown op %q (known: %s)", name, strings.Join(Names(), ", "))
	}
	return cloneOp(op), nil
}

// TemplateFor returns the template of op on backend, if one is registered.
func TemplateFor(op string, backend Backend) (Template, bool) {
	registry.RLock()
	defer registry.RUnlock()
	t, ok := registry.templates[templateKey{op, backend}]
	return t, ok
}

// Backends returns the backends that have a template of op, sorted.
func Backends(op string) []Backend {
	registry.RLock()
	defer registry.RUnlock()
	var out []Backend
	for k := range registry.templates {
		if k.op == op {
			out = append(out, k.backend)
		}
	}
	slices.Sort(out)
	return out
}

// VariantFlags returns every flag that some op's Variants use, once each,
// sorted, with the first doc registered for it.
func VariantFlags() []Variant {
	seen := map[string]bool{}
	var out []Variant
	for _, op := range Ops() {
		for _, v := range op.Variants {
			if !seen[v.Flag] {
				seen[v.Flag] = true
				out = append(out, Variant{Flag: v.Flag, Doc: v.Doc})
			}
		}
	}
	slices.SortFunc(out, func(a, b Variant) int { return cmp.Compare(a.Flag, b.Flag) })
	return out
}

// Resolve returns the op that name with the given variant flags set selects:
// `--op attention --causal` is attention_causal. It fails when name is
// unknown or a flag is not a variant of it, naming the ops that take it.
func Resolve(name string, flags ...string) (Op, error) {
	op, err := Lookup(name)
	if err != nil {
		return Op{}, err
	}
	for _, flag := range flags {
		i := slices.IndexFunc(op.Variants, func(v Variant) bool { return v.Flag == flag })
		if i < 0 {
			var takers []string
			for _, o := range Ops() {
				if slices.ContainsFunc(o.Variants, func(v Variant) bool { return v.Flag == flag && v.Op != o.Name }) {
					takers = append(takers, o.Name)
				}
			}
			return Op{}, fmt.Errorf("--%s applies to --op %s only, not %s", flag, strings.Join(takers, ", "), op.Name)
		}
		if op, err = Lookup(op.Variants[i].Op); err != nil {
			return Op{}, fmt.Errorf("op %s: variant --%s: %v", name, flag, err)
		}
	}
	return op, nil
}
