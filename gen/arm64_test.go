package gen

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/emul"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// graviton is the fingerprint of an arm64 CPU the records below were
// "tuned" on.
const graviton = "cpu/arm64/asimd+fp16+bf16+i8mm+sve256/64c"

// TestGenerateARM64 generates a package from arm64 records (gemm's NEON
// tiles with tails in M, N and K, gemm_bias_relu's, softmax's and
// rmsnorm's and layernorm's NEON rows with tails, attention's and causal
// attention's NEON tiles and online softmax with partial blocks),
// checks its files, vets it for arm64 and amd64, and runs its tests in an
// arm64 build, natively or under emulation (skipped where neither can
// run) and in this machine's build, where the NEON kernels run their
// scalar forms.
func TestGenerateARM64(t *testing.T) {
	target, err := device.FromFingerprint(graviton)
	if err != nil {
		t.Fatal(err)
	}
	mem := tunedb.NewMemory()
	var recs []tunedb.Record
	for _, w := range []struct {
		op    string
		shape []int
		cfg   string
	}{
		{"gemm", []int{67, 45, 33}, "vec=4,mr=6,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=2,pack_a=false,convert=copy"},
		{"gemm_bias_relu", []int{33, 70, 17}, "vec=4,mr=4,nr_vecs=4,kc=64,mc=24,nc=256,pack_b=false,unroll=1,threads=1,micro=asm,split=m,chunks=1,pack_a=true,convert=copy"},
		{"softmax", []int{37, 45}, "vec=4,unroll=4,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=block,store=cached"},
		{"rmsnorm", []int{5, 37}, "vec=4,unroll=8,threads=1,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block"},
		{"layernorm", []int{5, 37}, "vec=4,unroll=2,algo=onepass,threads=2,rows_per_chunk=1"},
		{"attention", []int{1, 2, 37, 17}, "vec=4,br=8,bc=16,exp=poly5,threads=2,layout=lanes,mr=6,nv=2,micro=asm,convert=copy"},
		{"attention_causal", []int{2, 1, 29, 9}, "vec=4,br=16,bc=8,exp=poly4,threads=1,layout=lanes,mr=12,nv=1,micro=asm,convert=copy"},
	} {
		tmpl, _ := kernels.TemplateFor(w.op, kernels.CPU)
		sp := tmpl.Space(w.shape, target)
		cfg, err := sp.Parse(w.cfg)
		if err != nil || !sp.Valid(cfg) {
			t.Fatalf("%s %v: %s is not valid on arm64: %v", w.op, w.shape, w.cfg, err)
		}
		recs = append(recs, tunedb.Record{Schema: 1,
			Workload: tunedb.Workload{Op: w.op, Shape: w.shape, DType: "f32", Device: graviton, Template: tmpl.Version},
			Config:   cfg, Status: tunedb.StatusOK, SamplesNS: []float64{1000}, MedianNS: 1000,
			Time: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Tool: "test"})
	}
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	files, err := Generate(mem, Options{Pkg: "fk", Device: graviton, Ops: []string{"gemm", "gemm_bias_relu", "softmax", "rmsnorm", "layernorm", "attention", "attention_causal"}, Command: "autotune gen --pkg fk"})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"gemm_arm64.go", "gemm_arm64.s", "gemm_bias_relu_arm64.go", "gemm_bias_relu_arm64.s", "softmax_arm64.go", "softmax_arm64.s", "rmsnorm_arm64.go", "rmsnorm_arm64.s", "layernorm_arm64.go", "layernorm_arm64.s",
		"attention_arm64.go", "attention_arm64.s", "attention_causal_arm64.go", "attention_causal_arm64.s"} {
		if files[name] == nil {
			t.Errorf("no %s", name)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, "_simd.go") || strings.HasSuffix(name, "_plain.go") || strings.Contains(name, "amd64") {
			t.Errorf("%s: a package of arm64 records has NEON forms and scalar ones only", name)
		}
	}
	if src := string(files["gemm_arm64.go"]); !strings.Contains(src, "\n//go:build arm64\n") || !strings.Contains(src, "func init()") {
		t.Errorf("gemm_arm64.go is not under the arm64 tag, or installs nothing")
	}
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Write(filepath.Join(mod, "fk"), files); err != nil {
		t.Fatal(err)
	}
	goCmd(t, mod, false, "vet", "./fk")
	goCmd(t, mod, false, "test", "-count=1", "./fk")
	arm64 := func(args ...string) *exec.Cmd {
		cmd := exec.Command("go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=", "GOWORK=off", "GOEXPERIMENT=", "GOARCH=arm64", "CGO_ENABLED=0")
		return cmd
	}
	if out, err := arm64("vet", "./fk").CombinedOutput(); err != nil {
		t.Fatalf("go vet for arm64: %v\n%s", err, out)
	}
	wrapper, ok := emul.For("arm64")
	if !ok {
		t.Skip("arm64 programs cannot run here: no qemu-aarch64-static and " + emul.Env + " unset")
	}
	args := []string{"test", "-count=1"}
	if len(wrapper) > 0 {
		args = append(args, "-exec", strings.Join(wrapper, " "))
	}
	if out, err := arm64(append(args, "./fk")...).CombinedOutput(); err != nil {
		t.Fatalf("go test for arm64: %v\n%s", err, out)
	}
}
