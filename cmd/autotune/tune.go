package main

import (
	"fmt"

	"github.com/autotune-dev/autotune/kernels"
)

var tuneCommand = command{
	name:    "tune",
	summary: "tune one workload and record every measurement",
	help: `
Usage: autotune tune --op OP --shape SHAPE [--device DEV] [flags]
       autotune --op OP --shape SHAPE [--device DEV] [flags]

Explores the knobs of the op's template for one workload, measures each
candidate, and stores every measurement in the tuning database. Rerunning the
same command resumes: configs already measured are not measured again.

No op has a template yet: tune validates its arguments and then exits 1,
saying so.

Examples:
  autotune --op softmax --shape 4096x1024 --device cpu
  autotune tune --op gemm --shape 1024x1024x1024 --device cpu --seed 7
  autotune tune --op attention --shape 1x8x1024x64 --device sm_86 --json
`,
	run: runTune,
}

// tuneOptions are the flags of tune.
type tuneOptions struct {
	workloadFlags
	db   string
	json bool
	seed uint64
}

func runTune(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o tuneOptions
	o.workloadFlags.register(fs)
	dbFlag(fs, &o.db)
	fs.BoolVar(&o.json, "json", false, "print the result as one JSON object")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the search's random proposals; the same seed proposes the same configs")
	args, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := o.resolve()
	if err != nil {
		return err
	}
	return errNoTemplate(w, "tune")
}

// errNoTemplate is the failure for an op whose template does not exist yet.
func errNoTemplate(w workload, what string) error {
	return fmt.Errorf("no template for op %s yet: cannot %s %s %s on %s",
		w.op.Name, what, w.op.Name, kernels.FormatShape(w.shape), w.target)
}
