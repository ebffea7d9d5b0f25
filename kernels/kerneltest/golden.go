package kerneltest

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// A Golden is a config whose generated code is checked in, as
// testdata/NAME.golden (with its set's FilePrefix), for element type DType:
// "" is f32, and the files of a bf16 or f16 golden end in the dtype,
// testdata/NAME_bf16.golden. Its config must be one a search of DType
// explores (kernels.Template.SearchSpace).
type Golden struct {
	Name, Shape, Config string
	DType               dtype.DType
}

// Path is the path of g's Go golden file in a set of FilePrefix prefix.
func (g Golden) Path(prefix string) string {
	return filepath.Join("testdata", g.file(prefix)+".golden")
}

// file is the name of g's golden files in a set of prefix, less the
// extensions ".golden" and ".s.golden".
func (g Golden) file(prefix string) string {
	if dt := cmp.Or(g.DType, dtype.Default); dt != dtype.Default {
		return prefix + g.Name + "_" + string(dt)
	}
	return prefix + g.Name
}

// A GoldenSet is the golden configs of one template.
type GoldenSet struct {
	Template *kernels.Template
	Revision string // the revision Template.Version is made from
	// FilePrefix starts the names of the golden files, FuncPrefix those of
	// the generated kernels, which end in the shape, "4096by1024".
	FilePrefix, FuncPrefix string
	Goldens                []Golden
	// Generic checks the shape-generic kernels of the configs (a
	// kernels.Kernel without a Shape), each valid for its golden's shape.
	Generic bool
	// Plain checks the plain forms of the configs (kernels.Arch.Plain).
	// Their assembly is that of the archsimd form, checked in with it,
	// and not checked in twice.
	Plain bool
}

// CheckGolden compares the code each set's template generates for its
// golden configs on target with testdata/*.golden, and the assembly of a
// config that has some (what Template.Go's EmitGo returns) with testdata/*.s.golden; go
// test -update rewrites them. The file sumFile records which revision the golden files belong
// to, with a digest of them: a line "revision digest" per set, in order.
// With -update, CheckGolden refuses, before writing anything, golden files
// that changed while their revision did not: changed code under the old Version would let old
// tuning records describe new code. bumpIn names the files where the
// revisions are, for that message.
func CheckGolden(t *testing.T, target device.Target, sumFile, bumpIn string, sets ...GoldenSet) {
	t.Helper()
	var sum string
	files := map[string][]byte{} // golden path → generated code, written with -update once the revisions check
	for _, set := range sets {
		digest := sha256.New()
		for _, g := range set.Goldens {
			tmpl := set.Template
			shape, err := tmpl.Op.ParseShape(g.Shape)
			if err != nil {
				t.Fatal(err)
			}
			sp := tmpl.SearchSpace(shape, g.DType, target)
			cfg, err := sp.Parse(g.Config)
			if err != nil {
				t.Fatal(err)
			}
			if err := sp.Check(cfg); err != nil {
				t.Fatalf("%s: %v", g.file(set.FilePrefix), err)
			}
			name := set.FuncPrefix + strings.ReplaceAll(kernels.FormatShape(shape), "x", "by")
			k := kernels.Kernel{Name: name, Shape: shape, DType: g.DType, Config: cfg, Arch: kernels.AMD64}
			if set.Generic {
				k.Shape = nil
			}
			k.Arch.Plain = set.Plain
			f := golang.NewFile("kernels")
			asm := tmpl.Go.EmitGo(f, k)
			src, err := golang.Render(f)
			if err != nil {
				t.Fatal(err)
			}
			digest.Write(src)
			files[g.Path(set.FilePrefix)] = src
			// The assembly is generated code too: a config with some has it
			// checked in beside the Go, and in the digest.
			if asm != nil && !set.Plain {
				digest.Write(asm)
				files[filepath.Join("testdata", g.file(set.FilePrefix)+".s.golden")] = asm
			}
		}
		sum += set.Revision + " " + hex.EncodeToString(digest.Sum(nil))[:16] + "\n"
	}

	checkFiles(t, sumFile, bumpIn, files, sum)
}

// A CUDAGolden is a config of a CUDA template whose generated source is
// checked in, as testdata/cuda_NAME.golden, of DType ("" is f32). With
// Generic, the config (valid at Shape) is emitted shape-generic and the
// file ends with its launch description; a template's generic goldens go
// in a CheckCUDAGolden of their own, with the generic revision.
type CUDAGolden struct {
	Name, Shape, Config string
	DType               dtype.DType
	Generic             bool
}

// CheckCUDAGolden does for a CUDA template what CheckGolden does for a CPU
// one: it compares the CUDA C that tmpl emits for each golden config on
// target (a CUDA architecture) with testdata/cuda_NAME.golden, the launch
// geometry included, and keeps sumFile's "revision digest" line in step,
// refusing with -update code that changed under the same revision.
func CheckCUDAGolden(t *testing.T, target device.Target, sumFile, bumpIn, revision string, tmpl kernels.Template, goldens ...CUDAGolden) {
	t.Helper()
	files := map[string][]byte{}
	digest := sha256.New()
	for _, g := range goldens {
		shape, err := tmpl.Op.ParseShape(g.Shape)
		if err != nil {
			t.Fatal(err)
		}
		sp := tmpl.Space(shape, target)
		cfg, err := sp.Parse(g.Config)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		name := tmpl.Op.Name + "_" + strings.ReplaceAll(kernels.FormatShape(shape), "x", "by")
		kn := kernels.Kernel{Name: name, Shape: shape, DType: g.DType, Config: cfg}
		if g.Generic {
			kn.Name, kn.Shape = tmpl.Op.Name+"_generic", nil
		}
		k := tmpl.CUDA.EmitCUDA(kn)
		src := []byte(fmt.Sprintf("%s// entry %s, grid %v, block %v, shared %d bytes\n", k.Source, k.Entry, k.Grid, k.Block, k.SharedBytes))
		if k.Generic != nil {
			src = fmt.Appendf(src, "// generic launch %+v\n", *k.Generic)
		}
		digest.Write(src)
		files[filepath.Join("testdata", "cuda_"+g.Name+".golden")] = src
	}
	checkFiles(t, sumFile, bumpIn, files, revision+" "+hex.EncodeToString(digest.Sum(nil))[:16]+"\n")
}

// checkFiles compares files (path → content) with the golden files and sum
// with sumFile, or with -update rewrites them once the revisions check.
func checkFiles(t *testing.T, sumFile, bumpIn string, files map[string][]byte, sum string) {
	t.Helper()
	recorded, err := os.ReadFile(sumFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if !*update {
		for _, path := range slices.Sorted(maps.Keys(files)) {
			checkGoldenFile(t, path, files[path])
		}
		if string(recorded) != sum {
			t.Errorf("%s says %q, want %q (go test -update rewrites it)", sumFile, recorded, sum)
		}
		return
	}
	if rev := unbumped(string(recorded), sum); rev != "" {
		t.Fatalf("the generated code changed but its revision is still %q: bump it in %s, then run -update again", rev, bumpIn)
	}
	for path, src := range files {
		if err := os.WriteFile(path, src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(sumFile, []byte(sum), 0o666); err != nil {
		t.Fatal(err)
	}
}

// unbumped returns a revision whose digest differs between the sum files
// recorded and sum, or "" if none does. Several sets may share a revision
// (a template's specialised and plain forms): the nth line of a revision in sum is compared with the nth
// of recorded, and a line recorded lacks is new, not changed.
func unbumped(recorded, sum string) string {
	old := make(map[string][]string) // revision → its digests, in order
	for line := range strings.Lines(recorded) {
		rev, digest, _ := strings.Cut(strings.TrimSpace(line), " ")
		old[rev] = append(old[rev], digest)
	}
	seen := make(map[string]int)
	for line := range strings.Lines(sum) {
		rev, digest, _ := strings.Cut(strings.TrimSpace(line), " ")
		n := seen[rev]
		seen[rev]++
		if n < len(old[rev]) && old[rev][n] != digest {
			return rev
		}
	}
	return ""
}

// checkGoldenFile compares got with the golden file at path.
func checkGoldenFile(t *testing.T, path string, got []byte) {
	t.Helper()
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is stale (go test -update rewrites it); first difference:\n%s", path, firstDiff(string(want), string(got)))
	}
}

// firstDiff returns the first line where want and got differ, with its number.
func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Sprintf("line %d:\n  want: %s\n  got:  %s", i+1, wl, gl)
		}
	}
	return "(none)"
}
