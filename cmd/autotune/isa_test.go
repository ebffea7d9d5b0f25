package main

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

var (
	noVectors = device.ISA{SSE42: true}
	avx2FMA   = device.ISA{SSE42: true, AVX2: true, FMA: true}
	avx512    = device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}
)

// --isa picks a level the CPU has, hides AVX-512 from the target for
// avx2, and gives the harness what keeps every side there: Go's GODEBUG
// (the user's kept), oneDNN's, OpenBLAS's and libxsmm's variables. A
// GODEBUG that hides AVX-512 is the same as --isa avx2; a CPU without
// AVX-512 is at avx2 with nothing to limit.
func TestAtISA(t *testing.T) {
	limits := []string{"ONEDNN_MAX_CPU_ISA=AVX2", "OPENBLAS_CORETYPE=Haswell", "LIBXSMM_TARGET=hsw"}
	tests := []struct {
		name, flag, godebug string
		isa                 device.ISA
		level               string
		avx512              bool     // the target keeps AVX-512
		env                 []string // nil: nothing limited
		err                 string
	}{
		{"the CPU's own", "", "", avx512, "avx512", true, nil, ""},
		{"avx512 asked", "avx512", "", avx512, "avx512", true, nil, ""},
		{"avx2 on AVX-512", "avx2", "", avx512, "avx2", false, append([]string{"GODEBUG=cpu.avx512f=off"}, limits...), ""},
		{"avx2 keeps GODEBUG", "avx2", "gctrace=1", avx512, "avx2", false, append([]string{"GODEBUG=gctrace=1,cpu.avx512f=off"}, limits...), ""},
		{"GODEBUG hides AVX-512", "", "cpu.avx512f=off", avx2FMA, "avx2", false, append([]string{"GODEBUG=cpu.avx512f=off"}, limits...), ""},
		{"GODEBUG and avx2", "avx2", "cpu.avx512bw=off", avx2FMA, "avx2", false, append([]string{"GODEBUG=cpu.avx512bw=off"}, limits...), ""},
		{"an AVX2 CPU", "", "", avx2FMA, "avx2", false, nil, ""},
		{"no vectors", "", "", noVectors, "scalar", false, nil, ""},
		{"arm64", "", "", device.ISA{ASIMD: true, FP16: true}, "neon", false, nil, ""},
		{"avx2 on arm64", "avx2", "", device.ISA{ASIMD: true}, "", false, nil, "--isa avx2: this CPU has no AVX2 and FMA (asimd)"},
		{"avx512 missing", "avx512", "", avx2FMA, "", false, nil, "--isa avx512: this CPU has no AVX-512 (sse4.2+avx2+fma)"},
		{"avx512 hidden", "avx512", "cpu.avx512f=off", avx2FMA, "", false, nil, "with GODEBUG=cpu.avx512f=off"},
		{"avx2 missing", "avx2", "", noVectors, "", false, nil, "--isa avx2: this CPU has no AVX2 and FMA"},
		{"not a level", "sse", "", avx512, "", false, nil, `--isa: "sse" is not a level; use avx2 or avx512`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := device.Target{Name: "cpu", CPU: &device.CPU{Model: "test", Cores: 2, ISA: tt.isa}}
			l, err := atISA(target, tt.flag, tt.godebug)
			if tt.err != "" {
				var u *usageError
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.As(err, &u) {
					t.Fatalf("atISA: %v, want a usage error containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.name != tt.level || l.target.CPU.ISA.AVX512 != tt.avx512 || !slices.Equal(l.env, tt.env) {
				t.Errorf("level %s (AVX-512 %v), env %q; want %s (%v), %q", l.name, l.target.CPU.ISA.AVX512, l.env, tt.level, tt.avx512, tt.env)
			}
			if target.CPU.ISA != tt.isa {
				t.Error("atISA changed the caller's target")
			}
		})
	}
	sm86, err := device.Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := atISA(sm86, "avx2", ""); err == nil || !strings.Contains(err.Error(), "applies to CPU targets") {
		t.Errorf("--isa avx2 for sm_86: %v", err)
	}
	if l, err := atISA(sm86, "", ""); err != nil || l.env != nil || l.target.Name != "sm_86" {
		t.Errorf("no --isa for sm_86: %+v, %v", l, err)
	}
}

// bench --isa avx2 of a workload tuned only with AVX-512 refuses in one
// line that says whether the best config can run at avx2 and how to tune
// there, rather than "run autotune tune first".
func TestBenchRefusesConfigsAboveTheLevel(t *testing.T) {
	host := device.Host()
	if host.CPU == nil || !host.CPU.ISA.AVX2 || !host.CPU.ISA.FMA {
		t.Skip("this CPU has no AVX2 and FMA")
	}
	tmpl, ok := kernels.TemplateFor("softmax", kernels.CPU)
	if !ok {
		t.Fatal("no softmax template")
	}
	above := device.Target{Name: "cpu", CPU: &device.CPU{Model: host.CPU.Model, Cores: host.CPU.Cores, ISA: avx512}}
	for _, tt := range []struct {
		name, cfg, want string
	}{
		{"assembly on Z registers", "vec=16,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
			"cannot run at avx2: "},
		{"AVX2 code tuned among AVX-512", "vec=8,unroll=2,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
			"it was tuned among AVX-512 configs, not at avx2"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "tune.db")
			db, err := tunedb.Open(path, nil)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := schedule.ParseConfig(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := tmpl.Space([]int{64, 33}, above).Check(cfg); err != nil {
				t.Fatal(err)
			}
			w := tunedb.Workload{Op: "softmax", Shape: []int{64, 33}, DType: "f32", Device: above.Fingerprint(), Template: tmpl.Version}
			err = db.Commit([]tunedb.Record{{Workload: w, Config: cfg, Status: tunedb.StatusOK, SamplesNS: []float64{900, 1000, 1100},
				MedianNS: 1000, P20NS: 900, P80NS: 1100, Time: time.Date(2026, 11, 27, 8, 0, 0, 0, time.UTC), Tool: "test"}})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}
			code, stdout, stderr := run(t, "", "bench", "--isa", "avx2", "--op", "softmax", "--shape", "64x33", "--device", "cpu", "--db", path)
			if code != 1 || stdout != "" || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and one line", code, stdout, stderr)
			}
			for _, s := range []string{"was tuned with AVX-512 only", tt.cfg, tt.want, "autotune tune --isa avx2 --op softmax --shape 64x33"} {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q: %s", s, stderr)
				}
			}
		})
	}
}

func TestISAFlagErrors(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", "--op", "softmax", "--shape", "4x4", "--device", "cpu", "--isa", "sse"}, `"sse" is not a level`},
		{[]string{"tune", "--op", "softmax", "--shape", "4x4", "--device", "cpu", "--isa", "neon"}, `"neon" is not a level`},
		{[]string{"tune", "--tasks", "tasks.txt", "--isa", "avx2"}, "not yet to --tasks"},
		{[]string{"bench", "--op", "softmax", "--shape", "4x4", "--device", "sm_86", "--isa", "avx2"}, "applies to CPU targets"},
	} {
		code, stdout, stderr := run(t, "", tt.args...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", tt.args, code, stderr, tt.want)
		}
	}
}

// TestLimitOneDNN checks that bench's process takes ONEDNN_MAX_CPU_ISA
// from the harness's environment, where the onednn baselines ask oneDNN
// whether it has their primitives, and nothing else of it.
func TestLimitOneDNN(t *testing.T) {
	t.Setenv("ONEDNN_MAX_CPU_ISA", "")
	t.Setenv("OPENBLAS_CORETYPE", "")
	limitOneDNN(append([]string{"GODEBUG=" + hideAVX512}, avx2Limits...))
	if got, other := os.Getenv("ONEDNN_MAX_CPU_ISA"), os.Getenv("OPENBLAS_CORETYPE"); got != "AVX2" || other != "" {
		t.Errorf("ONEDNN_MAX_CPU_ISA=%q, OPENBLAS_CORETYPE=%q; want AVX2 and unset", got, other)
	}
}
