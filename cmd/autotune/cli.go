package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/cuda"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
)

// version is the tool version stamped into every record; release builds set
// it with -ldflags "-X main.version=v1.2.3".
var version = "devel"

// A command is one subcommand: its help text and how to run it.
type command struct {
	name    string
	summary string
	help    string // synopsis, description and examples; flags are appended
	run     func(c *command, std *stdio, args []string) error
}

// stdio is where a command reads and writes: results to out, progress and
// logs to errs.
type stdio struct {
	in   io.Reader
	out  io.Writer
	errs io.Writer
}

func commands() []command {
	return []command{tuneCommand, bestCommand, benchCommand, checkCommand, genCommand, reportCommand, simulateCommand, listCommand, doctorCommand, dbCommand, brokerCommand, workerCommand, workersCommand, versionCommand}
}

// usageError is a mistake on the command line; it exits 2. Every other
// error is a failure and exits 1.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// Main runs autotune with the given arguments (without the program name)
// and returns the exit code: 0 success, 1 failure, 2 usage error.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	std := &stdio{in: stdin, out: stdout, errs: stderr}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "autotune: no command; run 'autotune --help'")
		return 2
	}
	name, rest := args[0], args[1:]
	switch name { // hidden: the child processes of the CUDA measurer and of check
	case cuda.WorkerArg:
		return cuda.ServeWorker(stdin, stdout)
	case emu.WorkerArg:
		return emu.ServeWorker(stdin, stdout)
	}
	switch {
	case name == "-h" || name == "-help" || name == "--help" || name == "help":
		printUsage(stdout)
		return 0
	case name == "-version" || name == "--version":
		name = "version"
	case strings.HasPrefix(name, "-"):
		// The bare form `autotune --op softmax ...` means `autotune tune ...`.
		name, rest = "tune", args
	}
	for _, c := range commands() {
		if c.name == name {
			return exitCode(stderr, c.name, c.run(&c, std, rest))
		}
	}
	fmt.Fprintf(stderr, "autotune: unknown command %q; run 'autotune --help'\n", name)
	return 2
}

// exitCode prints err as one line and maps it to the exit code.
func exitCode(stderr io.Writer, cmd string, err error) int {
	if err == nil {
		return 0
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	msg := strings.ReplaceAll(err.Error(), "\n", "; ")
	var se *signalError
	if errors.As(err, &se) {
		fmt.Fprintf(stderr, "autotune %s: %s\n", cmd, msg)
		return se.exitStatus()
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(stderr, "autotune %s: %s\n", cmd, msg)
		return 2
	}
	fmt.Fprintf(stderr, "autotune %s: %s\n", cmd, msg)
	return 1
}

func printUsage(w io.Writer) {
	fmt.Fprint(w, `autotune tunes softmax, GEMM and attention kernels for this CPU and NVIDIA GPUs,
keeps every measurement in a tuning database, reports the winners, and writes
them as a Go package.

Usage:
  autotune --op OP --shape SHAPE [--device DEV]   same as 'autotune tune ...'
  autotune COMMAND [flags]

Commands:
`)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, c := range commands() {
		fmt.Fprintf(tw, "  %s\t%s\n", c.name, c.summary)
	}
	tw.Flush()
	fmt.Fprint(w, `
Examples:
  autotune --op softmax --shape 4096x1024 --device cpu
  autotune best --op softmax --shape 4096x1024
  autotune list
  autotune report --out report.html
  autotune db export > records.jsonl

Run 'autotune COMMAND --help' for the flags of a command.
Exit status: 0 success, 1 failure, 2 usage error; 128 plus the signal's
number when SIGINT (Ctrl-C), SIGTERM or SIGHUP stopped a command, which
keeps what it measured.
`)
}

// newFlags returns a flag set that reports errors instead of printing them,
// so that Main can print one line, and prints help to stdout on --help.
func newFlags(c *command, std *stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	fs.SetOutput(std.out)
	fs.Usage = func() {
		fmt.Fprint(std.out, strings.TrimLeft(c.help, "\n"))
		printFlags(std.out, fs)
	}
	return fs
}

// printFlags lists the flags the way the help texts write them, with two
// dashes (the flag package accepts one or two).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	first := true
	fs.VisitAll(func(f *flag.Flag) {
		if first {
			fmt.Fprintln(w, "\nFlags:")
			first = false
		}
		arg, usage := flag.UnquoteUsage(f)
		if arg != "" {
			arg = " " + arg
		}
		def := ""
		if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
			def = fmt.Sprintf(" (default %s)", f.DefValue)
		}
		fmt.Fprintf(w, "  --%s%s\n      %s%s\n", f.Name, arg, usage, def)
	})
}

// parse parses flags and positional arguments in any order (the standard
// flag package stops at the first positional argument), and turns parse
// errors into usage errors. --help prints the help and returns flag.ErrHelp.
func parse(fs *flag.FlagSet, args []string) (positional []string, err error) {
	for {
		// The flag package prints errors and calls Usage itself; silence both
		// so that Main reports an error as one line and help prints once.
		out, usage := fs.Output(), fs.Usage
		fs.SetOutput(io.Discard)
		fs.Usage = func() {}
		err := fs.Parse(args)
		fs.SetOutput(out)
		fs.Usage = usage
		if errors.Is(err, flag.ErrHelp) {
			fs.Usage()
			return nil, err
		}
		if err != nil {
			return nil, usagef("%v; see 'autotune %s --help'", err, fs.Name())
		}
		args = fs.Args()
		if len(args) == 0 {
			return positional, nil
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
}

// parseFlags parses the flags of a command that takes no positional
// arguments.
func parseFlags(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args)
	if err != nil {
		return err
	}
	return noArgs(fs, rest)
}

// noArgs rejects positional arguments for commands that take none.
func noArgs(fs *flag.FlagSet, args []string) error {
	if len(args) > 0 {
		return usagef("unexpected argument %q; see 'autotune %s --help'", args[0], fs.Name())
	}
	return nil
}

// workloadFlags are the flags that name a workload: --op, --shape, --dtype,
// --device, and a bool flag for every variant of an op (kernels.Op.Variants),
// such as --causal, which turns --op attention into attention_causal.
type workloadFlags struct {
	op, shape, dtype, device string
	variants                 map[string]*bool
}

func (w *workloadFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&w.op, "op", "", "operator: "+strings.Join(kernels.Names(), ", ")+" (required)")
	fs.StringVar(&w.shape, "shape", "", "shape: "+shapeForms()+" (required)")
	dtypeFlag(fs, &w.dtype)
	fs.StringVar(&w.device, "device", "auto", "target: auto, cpu or a CUDA architecture such as sm_86 (see 'autotune list')")
	w.variants = map[string]*bool{}
	for _, v := range kernels.VariantFlags() {
		w.variants[v.Flag] = fs.Bool(v.Flag, false, v.Doc)
	}
}

// lookupDevice resolves a --device flag, "auto" and the local GPU's
// architecture through the CUDA driver (device.Resolve).
func lookupDevice(name string) (device.Target, error) { return device.Resolve(name, cuda.Probe) }

// dtypeFlag registers --dtype.
func dtypeFlag(fs *flag.FlagSet, dt *string) {
	fs.StringVar(dt, "dtype", string(dtype.Default), "element type: "+dtype.List(dtype.Known()))
}

// parseDType reads --dtype for op: an unknown dtype, or one op has no
// kernels of, is a usage error.
func parseDType(s string, op kernels.Op) (dtype.DType, error) {
	dt, err := dtype.Parse(s)
	if err != nil {
		return "", usagef("--dtype: %v", err)
	}
	if err := op.CheckDType(dt); err != nil {
		return "", usagef("%v", err)
	}
	return dt, nil
}

// shapeForms says how each op's shape is written, ops of one form together:
// "RxC for softmax, MxNxK for gemm, gemm_bias, ...".
func shapeForms() string {
	var forms []string
	byForm := map[string][]string{}
	for _, op := range kernels.Ops() {
		f := op.ShapeForm()
		if byForm[f] == nil {
			forms = append(forms, f)
		}
		byForm[f] = append(byForm[f], op.Name)
	}
	var parts []string
	for _, f := range forms {
		parts = append(parts, f+" for "+strings.Join(byForm[f], ", "))
	}
	return strings.Join(parts, "; ")
}

// workload is a validated --op/--shape/--dtype/--device.
type workload struct {
	op     kernels.Op
	shape  []int
	dtype  dtype.DType
	target device.Target
}

// resolve validates the flags; every mistake is a usage error.
func (w *workloadFlags) resolve() (workload, error) {
	if kernels.IsShapeRange(w.shape) {
		return workload{}, usagef("--shape %s is a range; only autotune tune takes ranges", w.shape)
	}
	wl, _, err := w.resolveRange()
	return wl, err
}

// resolveRange is resolve for a --shape that may be a range (autotune
// tune): the workload of the range's low corner, and the range.
func (w *workloadFlags) resolveRange() (workload, kernels.ShapeRange, error) {
	var none kernels.ShapeRange
	if w.op == "" {
		return workload{}, none, usagef("--op is required (one of %s)", strings.Join(kernels.Names(), ", "))
	}
	var flags []string
	for _, v := range kernels.VariantFlags() {
		if set := w.variants[v.Flag]; set != nil && *set {
			flags = append(flags, v.Flag)
		}
	}
	op, err := kernels.Resolve(w.op, flags...)
	if err != nil {
		return workload{}, none, usagef("%v", err)
	}
	if w.shape == "" {
		return workload{}, none, usagef("--shape is required (%s for %s, e.g. %s)", op.ShapeForm(), op.Name, op.Example)
	}
	var r kernels.ShapeRange
	if kernels.IsShapeRange(w.shape) {
		r, err = op.ParseShapeRange(w.shape)
	} else {
		r.Lo, err = op.ParseShape(w.shape)
		r.Hi = r.Lo
	}
	if err != nil {
		return workload{}, none, usagef("%v", err)
	}
	dt, err := parseDType(w.dtype, op)
	if err != nil {
		return workload{}, none, err
	}
	target, err := lookupDevice(w.device)
	if err != nil {
		return workload{}, none, usagef("%s", strings.TrimPrefix(err.Error(), "device: "))
	}
	return workload{op: op, shape: r.Lo, dtype: dt, target: target}, r, nil
}

// template returns the template of w's op on the backend of w's target.
func (w workload) template() (kernels.Template, bool) {
	return kernels.TemplateFor(w.op.Name, kernels.BackendOf(w.target))
}

var versionCommand = command{
	name:    "version",
	summary: "print the version of autotune",
	help: `
Usage: autotune version

Prints the version of autotune and of the Go toolchain that built it.

Examples:
  autotune version
`,
	run: func(c *command, std *stdio, args []string) error {
		if err := parseFlags(newFlags(c, std), args); err != nil {
			return err
		}
		goVersion := "unknown"
		if bi, ok := debug.ReadBuildInfo(); ok {
			goVersion = bi.GoVersion
		}
		fmt.Fprintf(std.out, "autotune %s (%s)\n", version, goVersion)
		return nil
	},
}
