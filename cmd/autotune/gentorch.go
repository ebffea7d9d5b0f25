package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/gen/torch"
)

// runGenTorch writes a PyTorch extension of CUDA kernels into dir (gen
// --torch DIR): for the architectures of --device, else for those of the
// records.
func runGenTorch(std *stdio, dir, path, logPath, dev, opsList, dt string, variants int, out, pkg string, args []string) error {
	switch {
	case out != "" || pkg != "":
		return usagef("--torch writes an extension, not a Go package: no --out or --pkg")
	case dt != "" && dt != "f32":
		return usagef("--torch: the dtypes are f32 and those of the records; no --dtype")
	case variants < 0:
		return usagef("--variants is %d, want ≥ 0", variants)
	case logPath != "" && path != "":
		return usagef("--db and --log exclude each other")
	}
	o := torch.Options{Variants: variants, Command: "autotune gen " + shellJoin(args)}
	if o.Variants == 0 {
		o.Variants = -1 // Options reads 0 as the default
	}
	if dev != "cpu" { // the flag's default: the architectures of the records
		o.Archs = strings.Split(dev, ",")
		for _, a := range o.Archs {
			if t, err := device.Lookup(a); err != nil || !t.IsCUDA() {
				return usagef("--device: %q is not a CUDA architecture (sm_70 … sm_90)", a)
			}
		}
	}
	if opsList != "" {
		o.Ops = strings.Split(opsList, ",")
		for _, name := range o.Ops {
			if !slices.Contains(torch.Ops, name) {
				return usagef("--ops: %s is not an op of the extension (%s)", name, strings.Join(torch.Ops, ", "))
			}
		}
	}
	src, closeSrc, err := genSource(path, logPath)
	if err != nil {
		return err
	}
	defer closeSrc()
	if o.Archs == nil {
		if o.Archs, err = torch.Archs(src); err != nil {
			return err
		}
		if len(o.Archs) == 0 {
			return usagef("--torch: the records have no CUDA architecture; name them with --device sm_80,sm_90")
		}
	}
	ctx, caught, stop := signalContext()
	defer stop()
	var files map[string][]byte
	err = interruptible(ctx, func() (err error) {
		files, err = torch.Generate(src, o)
		return err
	})
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	written, removed, err := gen.Write(dir, files)
	if err != nil {
		return err
	}
	if sig := caught(); sig != nil {
		return stoppedBy(sig, fmt.Sprintf("the extension in %s", dir))
	}
	fmt.Fprintf(std.errs, "autotune gen: a PyTorch extension for %s, %d files in %s: %d written, %d unchanged, %d removed\n",
		strings.Join(o.Archs, ", "), len(files), dir, len(written), len(files)-len(written), len(removed))
	fmt.Fprintf(std.errs, "autotune gen: build and check it where there are a GPU and PyTorch: cd %s && python3 bench.py\n", dir)
	return nil
}
