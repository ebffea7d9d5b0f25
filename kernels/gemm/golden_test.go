package gemm

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldens are the configs whose generated code is checked in: the fast
// AVX-512 path with packing and threads, AVX2 with B in place and tails in
// every dimension, and scalar code.
var goldens = []struct{ name, shape, config string }{
	{"vec16_4x32_packed", "1024x1024x1024", "vec=16,mr=4,nr_vecs=2,kc=256,mc=96,nc=1024,pack_b=true,unroll=2,threads=2"},
	{"vec8_8x8_inplace_tails", "17x20x33", "vec=8,mr=8,nr_vecs=1,kc=64,mc=24,nc=256,pack_b=false,unroll=4,threads=1"},
	{"scalar_2x2", "5x3x7", "vec=1,mr=2,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=1"},
}

// epilogueGoldens are the golden configs of the epilogue templates, one
// each: AVX2 with B packed, two threads and tails in M, N and K, so that the
// bias is loaded whole and with LoadSlicePart, and scalar code is left to
// the grid test.
var epilogueGoldens = []struct{ name, shape, config string }{
	{"vec8_4x16_packed_tails", "17x20x70", "vec=8,mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=2,threads=2"},
}

// goldenSum is the file recording which revision the golden files of
// Template belong to, with a digest of them; each epilogue template has a
// file of its own, so that Template's never changes with theirs.
var goldenSum = filepath.Join("testdata", "golden.sum")

// goldenSets are the templates whose code is checked in, each with its
// revision, its sum file, the prefix of its golden files and of its
// kernels' names, and its configs.
var goldenSets = []struct {
	tmpl                 *kernels.Template
	revision, sum        string
	filePrefix, fnPrefix string
	goldens              []struct{ name, shape, config string }
}{
	{&Template, revision, goldenSum, "", "Gemm", goldens},
	{&BiasTemplate, biasRevision, filepath.Join("testdata", "golden_bias.sum"), "bias_", "GemmBias", epilogueGoldens},
	{&BiasReLUTemplate, biasReLURevision, filepath.Join("testdata", "golden_bias_relu.sum"), "bias_relu_", "GemmBiasReLU", epilogueGoldens},
}

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them. It also refuses golden
// files that changed while their template's revision did not: changed code
// under the old Version would let old tuning records describe new code.
func TestGolden(t *testing.T) {
	for _, set := range goldenSets {
		t.Run(set.tmpl.Op.Name, func(t *testing.T) {
			testGolden(t, set.tmpl, set.revision, set.sum, set.filePrefix, set.fnPrefix, set.goldens)
		})
	}
}

func testGolden(t *testing.T, tmpl *kernels.Template, revision, goldenSum, filePrefix, fnPrefix string,
	goldens []struct{ name, shape, config string }) {
	target := cpu(2, avx512)
	digest := sha256.New()
	for _, g := range goldens {
		shape, err := tmpl.Op.ParseShape(g.shape)
		if err != nil {
			t.Fatal(err)
		}
		sp := tmpl.Space(shape, target)
		cfg, err := sp.Parse(g.config)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		f := golang.NewFile("kernels")
		tmpl.EmitGo(f, fnPrefix+strings.ReplaceAll(kernels.FormatShape(shape), "x", "by"), shape, cfg)
		src, err := golang.Render(f)
		if err != nil {
			t.Fatal(err)
		}
		digest.Write(src)
		path := filepath.Join("testdata", filePrefix+g.name+".golden")
		if *update {
			if err := os.WriteFile(path, src, 0o666); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (go test -update writes it)", err)
		}
		if string(src) != string(want) {
			t.Errorf("%s is stale (go test -update rewrites it); first difference:\n%s", path, firstDiff(string(want), string(src)))
		}
	}

	sum := revision + " " + hex.EncodeToString(digest.Sum(nil))[:16] + "\n"
	recorded, err := os.ReadFile(goldenSum)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if !*update {
		if string(recorded) != sum {
			t.Errorf("%s says %q, want %q (go test -update rewrites it)", goldenSum, recorded, sum)
		}
		return
	}
	oldRevision, oldDigest, _ := strings.Cut(strings.TrimSpace(string(recorded)), " ")
	if oldRevision == revision && oldDigest != strings.Fields(sum)[1] {
		t.Fatalf("the generated code changed but revision is still %q: bump it (gemm.go, epilogue.go), then run -update again", revision)
	}
	if err := os.WriteFile(goldenSum, []byte(sum), 0o666); err != nil {
		t.Fatal(err)
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
