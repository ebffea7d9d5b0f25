package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// The ISA levels --isa accepts: the amd64 vector extensions the CPU
// templates choose between (kernels.VectorConstraints).
const (
	isaAVX2   = "avx2"
	isaAVX512 = "avx512"
)

// avx2Limits are the variables that keep each C library of the baselines
// to AVX2 on a CPU with AVX-512: oneDNN's dispatcher, OpenBLAS's choice of
// kernels (Haswell's are its AVX2 ones) and libxsmm's code generator.
var avx2Limits = []string{"ONEDNN_MAX_CPU_ISA=AVX2", "OPENBLAS_CORETYPE=Haswell", "LIBXSMM_TARGET=hsw"}

// hideAVX512 is the GODEBUG setting that hides AVX-512 from Go: from
// simd/archsimd's feature checks (internal/cpu) and from device.Host
// (golang.org/x/sys/cpu), both read at start-up.
const hideAVX512 = "cpu.avx512f=off"

// isaFlag registers --isa.
func isaFlag(fs *flag.FlagSet, isa *string) {
	fs.StringVar(isa, "isa", "", "run at this ISA level: "+isaAVX2+" (AVX-512 hidden from the Go kernels and the C libraries alike) or "+
		isaAVX512+"; default: the level the CPU has, as GODEBUG leaves it")
}

// An isaLevel is the ISA level a command measures at: the target as the
// kernels see it there, and what the measuring child processes need in
// their environment to keep every side of a comparison at it.
type isaLevel struct {
	name   string        // avx512, avx2, scalar (a CPU with neither), or "" for a GPU
	target device.Target // the CPU without what the level leaves out
	env    []string      // for the harness (measurecpu.Options.Env); nil when nothing is limited
}

// atISA returns the level named by --isa for target ("" is the level
// target has, limited as --isa avx2 would be when GODEBUG hides AVX-512
// from this process). godebug is this process's GODEBUG. A level the
// CPU lacks, or one named for a GPU, is a usage error.
func atISA(target device.Target, name, godebug string) (isaLevel, error) {
	if target.CPU == nil {
		if name != "" {
			return isaLevel{}, usagef("--isa applies to CPU targets, not %s", target.Name)
		}
		return isaLevel{target: target}, nil
	}
	isa := target.CPU.ISA
	has := levelOf(isa)
	switch name {
	case "":
		if has == isaAVX2 && hidesAVX512(godebug) {
			return limitToAVX2(target, godebug), nil
		}
		return isaLevel{name: has, target: target}, nil
	case isaAVX512:
		if !isa.AVX512 {
			return isaLevel{}, usagef("--isa avx512: this CPU has no AVX-512 (%s%s)", isa, godebugNote(godebug))
		}
		return isaLevel{name: isaAVX512, target: target}, nil
	case isaAVX2:
		if !isa.AVX2 || !isa.FMA {
			return isaLevel{}, usagef("--isa avx2: this CPU has no AVX2 and FMA (%s%s)", isa, godebugNote(godebug))
		}
		return limitToAVX2(target, godebug), nil
	}
	return isaLevel{}, usagef("--isa: %q is not a level; use %s or %s", name, isaAVX2, isaAVX512)
}

// limitToAVX2 returns the AVX2 level of target: its CPU without AVX-512,
// and GODEBUG (this process's, plus hideAVX512) and avx2Limits for the
// children.
func limitToAVX2(target device.Target, godebug string) isaLevel {
	cpu := *target.CPU
	cpu.ISA.AVX512, cpu.ISA.AVX512BF16 = false, false
	target.CPU = &cpu
	if !hidesAVX512(godebug) {
		godebug = strings.TrimPrefix(godebug+","+hideAVX512, ",")
	}
	return isaLevel{name: isaAVX2, target: target, env: append([]string{"GODEBUG=" + godebug}, avx2Limits...)}
}

// levelOf names the highest level isa has: avx512, avx2, neon (arm64,
// whose one level --isa does not choose), or scalar.
func levelOf(isa device.ISA) string {
	switch {
	case isa.AVX512:
		return isaAVX512
	case isa.AVX2 && isa.FMA:
		return isaAVX2
	case isa.ASIMD:
		return "neon"
	}
	return "scalar"
}

// hidesAVX512 reports whether a GODEBUG value turns off an AVX-512
// feature for Go (cpu.avx512f=off, cpu.avx512bw=off, ...).
func hidesAVX512(godebug string) bool {
	return slices.ContainsFunc(strings.Split(godebug, ","), func(kv string) bool {
		k, v, _ := strings.Cut(strings.TrimSpace(kv), "=")
		return strings.HasPrefix(k, "cpu.avx512") && v == "off"
	})
}

// godebugNote mentions GODEBUG in an error about the CPU's ISA, when it is
// set: it may be what hides an extension.
func godebugNote(godebug string) string {
	if godebug == "" {
		return ""
	}
	return ", with GODEBUG=" + godebug
}

// describe says how the level was reached, for bench's output: "avx2,
// every side limited to it (GODEBUG=... ONEDNN_MAX_CPU_ISA=AVX2 ...)" or
// "avx512".
func (l isaLevel) describe() string {
	if len(l.env) == 0 {
		return l.name
	}
	return fmt.Sprintf("%s, every side limited to it (%s)", l.name, strings.Join(l.env, " "))
}

// envGODEBUG is this process's GODEBUG, for atISA.
func envGODEBUG() string { return os.Getenv("GODEBUG") }

// tunedAbove explains why a command at the AVX2 level finds no tuned
// config for w when w was tuned on this CPU with AVX-512 shown: refuse is
// the error to give instead of "run autotune tune first", naming the best
// config there and whether it can run at AVX2 at all; nil when level is
// not AVX2 or nothing was tuned above it. err is the database's.
func tunedAbove(db *tunedb.DB, w workload, tmpl kernels.Template, tc string, level isaLevel) (refuse, err error) {
	if level.name != isaAVX2 || w.target.CPU == nil {
		return nil, nil
	}
	above := w
	cpu := *w.target.CPU
	cpu.ISA.AVX512 = true
	above.target.CPU = &cpu
	best, ok, err := bestOfToolchain(db, above, tmpl, tc)
	if err != nil || !ok {
		return nil, err
	}
	why := "it was tuned among AVX-512 configs, not at avx2"
	if err := tmpl.Space(w.shape, w.target).Check(best.Config); err != nil {
		why = "it cannot run at avx2: " + strings.TrimPrefix(err.Error(), "schedule: ")
	}
	return fmt.Errorf("%s was tuned with AVX-512 only (best %s), and %s; tune at avx2 first: autotune tune --isa avx2 --op %s --shape %s",
		describeWorkload(w), best.Config, why, w.op.Name, kernels.FormatShape(w.shape)), nil
}

// limitOneDNN sets ONEDNN_MAX_CPU_ISA in this process's environment where
// env, the harness's, sets it: the onednn-bf16 and onednn-f16 baselines
// ask oneDNN here whether it has their primitive (kernels/onednn), and
// oneDNN reads the variable at its first use, so this process must see
// the level the harness will run at before any baseline's Skip.
func limitOneDNN(env []string) {
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == "ONEDNN_MAX_CPU_ISA" {
			os.Setenv(k, v)
		}
	}
}
