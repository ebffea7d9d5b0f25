package main

import (
	"context"
	"fmt"
	"go/token"
	"os"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/gen/gocuda"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var genCommand = command{
	name:    "gen",
	summary: "write a Go package of the tuned kernels",
	help: `
Usage: autotune gen --out DIR --pkg NAME [--db PATH | --log FILE] [--device DEV] [--dtype DTYPE] [--ops OPS] [--variants N]
       autotune gen --device sm_80,sm_86,sm_90 --out DIR --pkg NAME [--db PATH | --log FILE] [--ops OPS] [--variants N]
       autotune gen --torch DIR [--device sm_80,sm_90] [--db PATH | --log FILE] [--ops OPS] [--variants N]

Writes a Go package of the kernels tuned on a device into DIR: for every
tuned workload of the ops, its winner specialised to its shape; for every
op, the shape-generic form of its N most used winners, of the winners
of the buckets of every tuned shape range, and of the template's default
config, so that every shape is served: a call runs the kernel of its
shape when it was tuned, else (inside a tuned range) its nearest
bucket's winner, else the nearest tuned shape's, else the default. The package
imports only the standard library (simd/archsimd under GOEXPERIMENT=simd)
and exports Softmax, Gemm, GemmBias, GemmBiasReLU and Attention, Variant
(which kernel a call runs, and why) and LoadTuning (re-rank the compiled
kernels from a tuning log). Its package doc says what each build runs:
without GOEXPERIMENT=simd, on amd64, the kernels with Go assembly tiles
still run them, with plain Go around, and the others their scalar forms.
From records of an arm64 CPU, the kernels with NEON tiles run them in
arm64 builds (build tag arm64), and their scalar forms elsewhere.

Files whose bytes would not change are not rewritten; files of DIR that
the generator wrote before and no longer produces are removed, any other
file is kept. Every changed file is written in full beside its target
(as .NAME.autotune-*) before any is renamed into place, so a gen that
fails, is killed or is stopped by a signal (exit 128+signal) never
leaves a truncated file in the package. Then run 'go test ./DIR' (with and without GOEXPERIMENT=simd).

--device is cpu (this machine) or a CPU fingerprint as 'autotune db ls'
shows it, to generate from records of another machine. --log reads the
records from a JSON Lines export instead of a database. --dtype is the
element type of the kernels (generated packages hold f32 kernels only,
for now).

--device sm_XX[,sm_YY...] writes a Go package of CUDA kernels instead:
per architecture, the winners of the records of its GPUs specialised to
their shapes, and shape-generic kernels of the N most used winners and of
each template's default, compiled to PTX now (NVRTC when it is installed,
else clang-19) and embedded with a manifest (manifest.json: configs,
template versions, hashes of the sources and the PTX, the compiler). The
package exports Softmax, Gemm, ... taking a stream and device pointers
(uintptr), loads libcuda with purego at its first launch (it builds with
CGO_ENABLED=0), and has Variant and Arch; its tests pass without a GPU.
The kernels are float32. See docs/gen-cuda.md.

--torch DIR writes a PyTorch extension of the same CUDA kernels into DIR
instead, for the architectures of --device or else of the records:
torch.ops.autotune.softmax, gemm, attention (causal=True for the causal
mask), rmsnorm and layernorm, which check their tensors, launch on the
current stream and dispatch by shape and by the device's architecture
(ops.cpp, launch.h, tables.h, the kernels under cu/); f32, and bf16 or
f16 where the records have them. load.py builds it with
torch.utils.cpp_extension (nvcc), setup.py too; bench.py builds it,
checks every op against torch's in float64 and times both. See
docs/gen-cuda.md.

Of the records of a shape, those measured with the Go toolchain that
runs here ('go env GOVERSION') are used; when a shape has only records of
other toolchains (or of an unknown one: databases written before records
named it), gen uses them and says so on stderr.

Examples:
  autotune gen --out ./fastkernels --pkg fastkernels
  autotune gen --out ./kernels --pkg kernels --ops softmax,attention --variants 2
  autotune db export > tuning.jsonl && autotune gen --log tuning.jsonl --out ./k --pkg k
  autotune gen --device sm_80,sm_86,sm_90 --out ./fastcuda --pkg fastcuda
  autotune gen --torch ./ext --log tuning.jsonl && (cd ext && python3 bench.py --json bench.json)
`,
	run: runGen,
}

func runGen(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var path, logPath, out, pkg, dev, opsList, dt string
	dbFlag(fs, &path)
	fs.StringVar(&logPath, "log", "", "read the records from this JSON Lines export instead of a database")
	fs.StringVar(&out, "out", "", "directory of the generated package (required)")
	fs.StringVar(&pkg, "pkg", "", "name of the generated package (required)")
	fs.StringVar(&dev, "device", "cpu", "cpu (this machine), a CPU fingerprint, or CUDA architectures (sm_80,sm_90)")
	fs.StringVar(&opsList, "ops", "", "comma-separated ops (default: every op with a CPU template)")
	dtypeFlag(fs, &dt)
	variants := fs.Int("variants", 3, "shape-generic winners per op, besides the default and the winners of tuned ranges' buckets")
	torchDir := fs.String("torch", "", "write a PyTorch extension of CUDA kernels into this directory instead")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *torchDir != "" {
		return runGenTorch(std, *torchDir, path, logPath, dev, opsList, dt, *variants, out, pkg, args)
	}
	switch {
	case out == "":
		return usagef("--out is required")
	case pkg == "":
		return usagef("--pkg is required")
	case !token.IsIdentifier(pkg):
		return usagef("--pkg %q is not a Go identifier", pkg)
	case *variants < 0:
		return usagef("--variants is %d, want ≥ 0", *variants)
	case logPath != "" && path != "":
		return usagef("--db and --log exclude each other")
	}
	var o gen.Options
	o.Pkg, o.Variants = pkg, *variants
	if o.Variants == 0 {
		o.Variants = -1 // Options reads 0 as the default
	}
	var archs []string
	switch {
	case strings.HasPrefix(dev, "sm_"):
		archs = strings.Split(dev, ",")
		for _, a := range archs {
			if t, err := device.Lookup(a); err != nil || !t.IsCUDA() {
				return usagef("--device: %q is not a CUDA architecture (sm_70 … sm_90)", a)
			}
		}
		if dt != "" && dt != "f32" {
			return usagef("--dtype %s: generated CUDA packages hold f32 kernels only", dt)
		}
	case dev == "cpu":
		o.Device = device.Host().Fingerprint()
	case strings.HasPrefix(dev, "cpu/"):
		if _, err := device.FromFingerprint(dev); err != nil {
			return usagef("--device %q: %v", dev, err)
		}
		o.Device = dev
	default:
		return usagef("--device %q: want cpu or a CPU fingerprint (cpu/MODEL/ISA/Nc): generated packages hold CPU kernels", dev)
	}
	var err error
	if o.DType, err = dtype.Parse(dt); err != nil {
		return usagef("--dtype: %v", err)
	}
	if opsList != "" {
		o.Ops = strings.Split(opsList, ",")
		for _, name := range o.Ops {
			op, err := kernels.Lookup(name)
			if err != nil {
				return usagef("--ops: %v", err)
			}
			if err := op.CheckDType(o.DType); err != nil {
				return usagef("%v", err)
			}
		}
	}
	o.Toolchain, o.Log = tune.LocalToolchain(context.Background(), kernels.CPU), std.errs
	o.Command = "autotune gen " + shellJoin(args)
	src, closeSrc, err := genSource(path, logPath)
	if err != nil {
		return err
	}
	defer closeSrc()
	// Planning happens in memory, where a signal can abandon it; writing
	// is quick, and a signal during it is answered once it is done, so
	// that the package is left whole (gen.Write). Compiling CUDA to PTX
	// stops with the signal.
	ctx, caught, stop := signalContext()
	defer stop()
	if archs != nil {
		err := genCUDA(ctx, std, src, gocuda.Options{Pkg: pkg, Archs: archs, Ops: o.Ops, Variants: o.Variants, Command: o.Command}, out)
		if sig := caught(); sig != nil {
			return stoppedBy(sig, "")
		}
		return err
	}
	var files map[string][]byte
	err = interruptible(ctx, func() (err error) {
		files, err = gen.Generate(src, o)
		return err
	})
	if sig := caught(); sig != nil {
		return stoppedBy(sig, "")
	}
	if err != nil {
		return err
	}
	written, removed, err := gen.Write(out, files)
	if err != nil {
		return err
	}
	if sig := caught(); sig != nil {
		return stoppedBy(sig, fmt.Sprintf("the package in %s", out))
	}
	fmt.Fprintf(std.errs, "autotune gen: %d files in %s: %d written, %d unchanged, %d removed\n",
		len(files), out, len(written), len(files)-len(written), len(removed))
	return nil
}

// genSource returns the records gen reads: those of the JSON Lines export
// at logPath, else the database at path; and what closes it.
func genSource(path, logPath string) (gen.Source, func(), error) {
	if logPath != "" {
		f, err := os.Open(logPath)
		if err != nil {
			return nil, nil, err
		}
		recs, err := tunedb.ReadRecords(f)
		f.Close()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", logPath, err)
		}
		mem := tunedb.NewMemory()
		if err := mem.Commit(recs); err != nil {
			return nil, nil, err
		}
		return mem, func() {}, nil
	}
	db, err := openDB(path, readDB)
	if err != nil {
		return nil, nil, err
	}
	return db, func() { db.Close() }, nil
}

// shellJoin quotes args for a POSIX shell where they need it.
func shellJoin(args []string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		if a != "" && strings.IndexFunc(a, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=,:+", r))
		}) < 0 {
			quoted[i] = a
		} else {
			quoted[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
	}
	return strings.Join(quoted, " ")
}
