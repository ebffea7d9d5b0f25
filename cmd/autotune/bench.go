package main

import "fmt"

var benchCommand = command{
	name:    "bench",
	summary: "compare the tuned kernel with baselines, side by side",
	help: `
Usage: autotune bench --op OP --shape SHAPE [--device DEV] [flags]

Runs the best tuned kernel of a workload from the tuning database next to its
baselines (plain Go, gonum, a memory-copy floor, an FMA-peak loop) in one
process, interleaved, and prints median times, throughput and ratios.

Not implemented yet: bench validates its arguments and then exits 1,
saying so.

Examples:
  autotune bench --op softmax --shape 4096x1024 --device cpu
  autotune bench --op gemm --shape 1024x1024x1024 --json
`,
	run: runBench,
}

func runBench(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var o tuneOptions
	o.workloadFlags.register(fs)
	dbFlag(fs, &o.db)
	fs.BoolVar(&o.json, "json", false, "print the results as one JSON object")
	fs.Uint64Var(&o.seed, "seed", 1, "seed of the random inputs")
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
	if _, err := tunable(w, "benchmark"); err != nil {
		return err
	}
	return fmt.Errorf("bench is not implemented yet for %s: use 'autotune best' for the tuned time", w.op.Name)
}
