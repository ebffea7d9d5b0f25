package torch

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels"
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/emu"
	"github.com/autotune-dev/autotune/tunedb"
)

var update = flag.Bool("update", false, "rewrite testdata/files.golden")

// TestMain lets the test binary serve as the CUDA emulation worker.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == emu.WorkerArg {
		os.Exit(emu.ServeWorker(os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// fixture is the records of examples/fastcuda (the H100 winners of
// softmax 4096×1024, GEMM 2048³ and attention 1×8×1024×64, sm_90) and,
// on sm_80, a small tuned shape of every op with the template's default
// there as its winner, so that specialised kernels run in the emulator
// too, and one of softmax and one of GEMM in bf16, which bring bf16
// kernels on every architecture (the bf16 GEMM declares its dynamic
// shared memory with another type than the float32 one, under the same
// name).
func fixture(t *testing.T) *tunedb.Memory {
	t.Helper()
	f, err := os.Open("../../examples/fastcuda/testdata/tune.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := tunedb.ReadRecords(f)
	if err != nil {
		t.Fatal(err)
	}
	sm80, err := device.Lookup("sm_80")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		op    string
		shape []int
		dt    dtype.DType
	}{
		{"softmax", []int{33, 1023}, dtype.F32}, {"gemm", []int{64, 48, 40}, dtype.F32}, {"attention", []int{1, 2, 40, 64}, dtype.F32},
		{"attention_causal", []int{1, 2, 40, 64}, dtype.F32}, {"rmsnorm", []int{7, 1000}, dtype.F32}, {"layernorm", []int{7, 1000}, dtype.F32},
		{"softmax", []int{33, 1023}, dtype.BF16}, {"gemm", []int{64, 48, 40}, dtype.BF16},
	} {
		tmpl, _ := kernels.TemplateFor(w.op, kernels.CUDA)
		cfg, err := tmpl.DefaultConfig(w.shape, sm80)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, tunedb.Record{Schema: tunedb.SchemaVersion, Config: cfg, Status: tunedb.StatusOK, MedianNS: 1000,
			Time: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), Tool: "test",
			Workload: tunedb.Workload{Op: w.op, Shape: w.shape, DType: w.dt, Device: "cuda/sm_80/Fake GPU/13000", Template: tmpl.Version}})
	}
	mem := tunedb.NewMemory()
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	return mem
}

func generate(t *testing.T, src gen.Source, archs ...string) (*plan, map[string][]byte) {
	t.Helper()
	p, err := newPlan(src, Options{Archs: archs, Command: "autotune gen --torch DIR"})
	if err != nil {
		t.Fatal(err)
	}
	files, err := p.files()
	if err != nil {
		t.Fatal(err)
	}
	return p, files
}

// TestGolden checks the files of an extension generated from the
// fixture and the kernels its manifest lists (testdata/files.golden;
// -update rewrites it).
func TestGolden(t *testing.T) {
	p, files := generate(t, fixture(t), "sm_80", "sm_90")
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(files)) {
		fmt.Fprintf(&b, "%s\n", name)
	}
	b.WriteString("\n")
	for _, k := range p.manifest().Kernels {
		fmt.Fprintf(&b, "%s %s %s %v %s\n", k.Name, k.DType, k.Kind, k.Shape, k.Config)
	}
	golden := filepath.Join("testdata", "files.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Errorf("the extension's files and kernels differ from %s (go test -update):\n%s", golden, b.String())
	}
	// Every kernel has a unique entry, and its architecture's unit
	// includes it.
	entries := map[string]bool{}
	for _, k := range p.ks {
		if entries[k.k.Entry] {
			t.Errorf("two kernels named %s", k.k.Entry)
		}
		entries[k.k.Entry] = true
		if !strings.Contains(string(files[archFile(k.arch)]), fmt.Sprintf("#include %q", k.cuPath())) {
			t.Errorf("%s does not include %s", archFile(k.arch), k.cuPath())
		}
	}
}

// TestDefaultsOnly generates from no records: every op is served in f32
// by its default alone, and bench.py has an example and an odd case of
// each.
func TestDefaultsOnly(t *testing.T) {
	p, _ := generate(t, tunedb.NewMemory(), "sm_90")
	if len(p.tables) != len(Ops) {
		t.Fatalf("%d tables, want one per op, %d", len(p.tables), len(Ops))
	}
	for _, tb := range p.tables {
		if k := p.ks[tb.def]; k.kind != kindDefault || k.k.Generic == nil || tb.dt != dtype.F32 || len(tb.entries) != 0 {
			t.Errorf("%s: default %s (%s), dtype %s, %d entries", tb.op, k.name, k.kind, tb.dt, len(tb.entries))
		}
	}
	for _, op := range Ops {
		var whys []string
		for _, c := range p.cases().Cases {
			if c.Op == op {
				whys = append(whys, c.Why)
			}
		}
		if !slices.Equal(whys, []string{"example", "untuned"}) {
			t.Errorf("%s: cases %v, want an example and an untuned one", op, whys)
		}
	}
}

// TestEmulator runs every kernel of an extension generated from the
// fixture in the emulator on every input set of its op: a specialised
// kernel at its shape when that is small, a generic one at bench.py's odd
// shape, at the smallest shape and at the odd shape rounded up to
// multiples of 4, those it can run.
func TestEmulator(t *testing.T) {
	if _, err := emu.FindCXX(); err != nil {
		t.Skip(err)
	}
	p, _ := generate(t, fixture(t), "sm_80", "sm_90")
	odd := map[string][]int{}
	for _, c := range p.cases().Cases {
		if c.Why == "untuned" {
			odd[c.Op] = c.Shape
		}
	}
	for _, k := range p.ks {
		var shapes [][]int
		if k.k.Generic == nil {
			if size(k.shape) > 1<<17 {
				continue // the H100 winners: too large to emulate here; they pass the PTX check
			}
			shapes = [][]int{k.shape}
		} else {
			// The odd shape, and for kernels that need multiples of 4
			// (float4 rows) the odd shape rounded up to them.
			ones, quad := slices.Repeat([]int{1}, len(k.tmpl.Op.Dims)), slices.Clone(odd[k.op])
			for i := range quad {
				quad[i] = (quad[i] + 3) / 4 * 4
			}
			for _, s := range [][]int{odd[k.op], ones, quad} {
				if k.k.Generic.Serves(s) == "" && !slices.ContainsFunc(shapes, func(x []int) bool { return slices.Equal(x, s) }) {
					shapes = append(shapes, s)
				}
			}
			if len(shapes) == 0 {
				t.Errorf("%s runs none of %v, %v and %v", k.name, odd[k.op], ones, quad)
			}
		}
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			c := &emu.Checker{Command: []string{os.Args[0], emu.WorkerArg}, NoPTX: true, Seed: 5, DType: k.dt, Orders: emu.Orders[:1]}
			for _, s := range shapes {
				o, err := c.EmulateAt(context.Background(), k.k, s, k.arch, measure.Inputs(k.tmpl.Op, s, k.dt, 9))
				if err != nil {
					t.Fatal(err)
				}
				if !o.OK {
					t.Errorf("at %v: %s", s, o)
				}
			}
		})
	}
}

func size(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestPTX compiles each architecture's translation unit, its kernels
// included in their namespaces, to PTX with clang, and finds every
// kernel's entry in it.
func TestPTX(t *testing.T) {
	clang, err := emu.FindClang()
	if errors.Is(err, emu.ErrNoCompiler) {
		t.Skip(err)
	} else if err != nil {
		t.Fatal(err)
	}
	p, files := generate(t, fixture(t), "sm_80", "sm_90")
	include := regexp.MustCompile(`#include "(cu/[^"]+)"`)
	for _, arch := range p.o.Archs {
		t.Run(arch, func(t *testing.T) {
			t.Parallel()
			// clang compiles a copy in a directory of its own: the
			// sources it includes are put in place.
			src := include.ReplaceAllStringFunc(string(files[archFile(arch)]), func(s string) string {
				return string(files[include.FindStringSubmatch(s)[1]])
			})
			ptx, err := emu.PTX(context.Background(), clang, kernels.CUDAKernel{Source: src, Entry: "kernels_" + arch}, arch, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			for _, i := range p.archKernels(arch) {
				if !bytes.Contains(ptx, []byte(".entry "+p.ks[i].k.Entry+"(")) {
					t.Errorf("the PTX of %s has no entry %s", arch, p.ks[i].k.Entry)
				}
			}
		})
	}
}

// launchTest is a program of launch.h and tables.h: for each line "op
// dtype arch d0 d1 ..." of stdin, it prints the kernel, grid, block and
// shared memory plan gives, or its error.
const launchTest = `#include <iostream>
#include <sstream>
#include "tables.h"

int main() {
	std::string line;
	while (std::getline(std::cin, line)) {
		std::istringstream in(line);
		std::string op, dtype, arch;
		in >> op >> dtype >> arch;
		int64_t shape[autotune::kMaxDims] = {};
		for (int i = 0; i < autotune::kMaxDims && in >> shape[i]; i++) {
		}
		const autotune::Table *t = autotune::find_table(autotune::kExtension, op.c_str(), dtype.c_str(), arch.c_str());
		if (t == nullptr) {
			std::cout << "no table\n";
			continue;
		}
		const autotune::Launch l = autotune::plan(autotune::kExtension, *t, shape);
		if (!l.error.empty()) {
			std::cout << "error " << l.error << "\n";
			continue;
		}
		std::cout << autotune::kExtension.kernels[l.pick.kernel].name << " " << l.grid[0] << " " << l.grid[1] << " " << l.grid[2] << " "
		          << l.block[0] << " " << l.block[1] << " " << l.block[2] << " " << l.shared << "\n";
	}
}
`

// TestLaunchHeader compiles launch.h and the tables of an extension with
// g++, without torch, and checks what it plans for many shapes against
// the Go side: the pick of the Go packages' rule (exact, else the nearest
// tuned shape's generic kernel that runs the shape, else the default),
// and the launch kernels.CUDALaunch computes for a generic kernel, its
// refusals included.
func TestLaunchHeader(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	p, files := generate(t, fixture(t), "sm_80", "sm_90")
	dir := t.TempDir()
	files["main.cpp"] = []byte(launchTest)
	for _, name := range []string{"launch.h", "tables.h", "main.cpp"} {
		if err := os.WriteFile(filepath.Join(dir, name), files[name], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "plan")
	if out, err := exec.Command(cxx, "-std=c++17", "-O1", "-Wall", "-Werror", "-o", bin, filepath.Join(dir, "main.cpp")).CombinedOutput(); err != nil {
		t.Fatalf("g++: %v\n%s", err, out)
	}
	var in, want bytes.Buffer
	r := rand.New(rand.NewPCG(3, 4))
	picks := map[string]int{}
	for _, tb := range p.tables {
		for _, shape := range shapesFor(tb, r) {
			fmt.Fprintf(&in, "%s %s %s %s\n", tb.op, tb.dt, tb.arch, strings.Trim(fmt.Sprint(shape), "[]"))
			line, rule := p.expect(tb, shape)
			picks[rule]++
			want.WriteString(line + "\n")
		}
	}
	il := strings.Split(in.String(), "\n")
	cmd := exec.Command(bin)
	cmd.Stdin = &in
	got, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(want.String(), "\n")
	if len(gl) != len(wl) {
		t.Fatalf("%d lines, want %d", len(gl), len(wl))
	}
	bad := 0
	for i := range wl {
		if gl[i] != wl[i] {
			if bad++; bad <= 10 {
				t.Errorf("%s: launch.h plans %q, want %q", il[i], gl[i], wl[i])
			}
		}
	}
	t.Logf("%d shapes: %v", len(wl)-1, picks)
	for _, rule := range []string{"exact", "nearest", "default", "error"} {
		if picks[rule] == 0 {
			t.Errorf("no shape was planned %s", rule)
		}
	}
}

// shapesFor returns shapes to plan t's op at: its tuned shapes, shapes
// near them, random ones of every size, and extents past the limits.
func shapesFor(t *table, r *rand.Rand) [][]int {
	n := len(t.tmpl.Op.Dims)
	var out [][]int
	for _, e := range t.entries {
		out = append(out, e.shape)
		near := slices.Clone(e.shape)
		near[0]++
		out = append(out, near)
	}
	for range 150 {
		s := make([]int, n)
		for d := range s {
			switch r.IntN(4) {
			case 0:
				s[d] = 1 << r.IntN(13)
			case 1:
				s[d] = 4 * (1 + r.IntN(1000))
			default:
				s[d] = 1 + r.IntN(5000)
			}
		}
		out = append(out, s)
	}
	big := slices.Repeat([]int{1}, n)
	big[0] = 1<<31 - 1
	over := slices.Repeat([]int{1}, n)
	over[n-1] = 1 << 31
	zero := slices.Repeat([]int{3}, n)
	zero[n-1] = 0
	wide := slices.Repeat([]int{7}, n)
	wide[n-1] = 200 // past generic attention's D ≤ 128
	return append(out, big, over, zero, wide)
}

// expect is the line launchTest prints for shape on t, computed in Go,
// and the rule that picked the kernel ("error" for a refusal).
func (p *plan) expect(t *table, shape []int) (string, string) {
	for i, x := range shape {
		if x < 1 || x > 1<<31-1 {
			return fmt.Sprintf("error extent %d is %d, outside 1…%d", i, x, 1<<31-1), "error"
		}
	}
	k, rule := t.def, "default"
	if i := slices.IndexFunc(t.entries, func(e entry) bool { return slices.Equal(e.shape, shape) }); i >= 0 {
		k, rule = t.entries[i].exact, "exact"
	} else {
		best, bestDist, bestSize := -1, 0.0, 0.0
		for _, e := range t.entries {
			if e.near < 0 || p.ks[e.near].k.Generic.Serves(shape) != "" {
				continue
			}
			dist, sz := tunedb.ShapeDistance(shape, e.shape), float64(size(e.shape))
			if best < 0 || dist < bestDist || dist == bestDist && sz < bestSize {
				best, bestDist, bestSize = e.near, dist, sz
			}
		}
		if best >= 0 {
			k, rule = best, "nearest"
		}
	}
	kn := p.ks[k]
	grid, block, shared := kn.k.Grid, kn.k.Block, kn.k.SharedBytes
	if g := kn.k.Generic; g != nil {
		var err error
		if grid, shared, err = g.At(shape); err != nil {
			return "error " + kn.name + ": " + strings.TrimPrefix(err.Error(), "kernels: "), "error"
		}
		block = g.Block
	}
	return fmt.Sprintf("%s %d %d %d %d %d %d %d", kn.name, grid[0], grid[1], grid[2], block[0], block[1], block[2], shared), rule
}

// TestPython compiles the extension's Python files, where python3 is.
func TestPython(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	_, files := generate(t, tunedb.NewMemory(), "sm_90")
	dir := t.TempDir()
	for _, name := range []string{"bench.py", "load.py", "setup.py"} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, files[name], 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(py, "-m", "py_compile", path).CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", name, err, out)
		}
	}
	if !strings.Contains(string(files["load.py"]), `ARCHS = ["sm_90"]`+"\n"+`SOURCES = ["ops.cpp", "kernels_sm_90.cu"]`) {
		t.Errorf("load.py does not name the architecture and sources:\n%s", files["load.py"])
	}
}
