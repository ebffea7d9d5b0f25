package attention

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"hash"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// goldens are the configs whose generated code is checked in: the fast
// path with threads; 8 lanes with partial vectors in D and in blocks of
// keys (tail masks) and a partial block of queries; scalar code with exp
// in float64. The causal one (TemplateCausal) has key blocks below,
// across and beyond the diagonal, a partial last block, tail masks and the
// snake-wise dealing of units to threads.
var goldens = []struct {
	name, shape, config string
	causal              bool
}{
	{"vec16_64x64", "1x8x1024x64", "vec=16,br=64,bc=64,exp=poly5,threads=2", false},
	{"vec8_tails", "1x3x7x5", "vec=8,br=4,bc=4,exp=poly4,threads=1", false},
	{"scalar_f64", "1x1x9x3", "vec=1,br=4,bc=8,exp=f64,threads=1", false},
	{"causal_vec8", "1x2x10x5", "vec=8,br=4,bc=4,exp=poly4,threads=2", true},
}

// goldenSum is the file recording which revision the golden files belong
// to, with a digest of them: a line "revision digest" for each template,
// Template's first.
var goldenSum = filepath.Join("testdata", "golden.sum")

// TestGolden compares the generated code of the golden configs with
// testdata/*.golden; go test -update rewrites them. It also refuses golden
// files that changed while revision did not: changed code under the old
// Template.Version would let old tuning records describe new code; the
// same for causalRevision and TemplateCausal.
func TestGolden(t *testing.T) {
	target := cpu(2, avx512)
	revisions := []string{revision, causalRevision}
	digests := []hash.Hash{sha256.New(), sha256.New()}
	for _, g := range goldens {
		tm, digest, prefix := &Template, digests[0], "Attention"
		if g.causal {
			tm, digest, prefix = &TemplateCausal, digests[1], "AttentionCausal"
		}
		shape, err := tm.Op.ParseShape(g.shape)
		if err != nil {
			t.Fatal(err)
		}
		sp := tm.Space(shape, target)
		cfg, err := sp.Parse(g.config)
		if err != nil {
			t.Fatal(err)
		}
		if err := sp.Check(cfg); err != nil {
			t.Fatal(err)
		}
		f := golang.NewFile("kernels")
		tm.EmitGo(f, prefix+strings.ReplaceAll(kernels.FormatShape(shape), "x", "by"), shape, cfg)
		src, err := golang.Render(f)
		if err != nil {
			t.Fatal(err)
		}
		digest.Write(src)
		path := filepath.Join("testdata", g.name+".golden")
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

	var sum string
	for i, rev := range revisions {
		sum += rev + " " + hex.EncodeToString(digests[i].Sum(nil))[:16] + "\n"
	}
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
	old := make(map[string]string)
	for line := range strings.Lines(string(recorded)) {
		rev, digest, _ := strings.Cut(strings.TrimSpace(line), " ")
		old[rev] = digest
	}
	for line := range strings.Lines(sum) {
		rev, digest, _ := strings.Cut(strings.TrimSpace(line), " ")
		if oldDigest, ok := old[rev]; ok && oldDigest != digest {
			t.Fatalf("the generated code changed but its revision is still %q: bump it in attention.go, then run -update again", rev)
		}
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
