package softmax

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/dave/jennifer/jen"

	"github.com/autotune-dev/autotune/codegen/golang"
	"github.com/autotune-dev/autotune/kernels"
)

func TestBaselinesAreListed(t *testing.T) {
	seen := map[string]bool{"tuned": true, "floor": true} // the bench's own entries
	for _, b := range Template.Baselines {
		if !regexp.MustCompile(`^[a-z][a-z0-9]*$`).MatchString(b.Name) || seen[b.Name] {
			t.Errorf("baseline name %q: want short, lower-case and unique", b.Name)
		}
		seen[b.Name] = true
		if b.Doc == "" || strings.Contains(b.Doc, "\n") || b.EmitGo == nil {
			t.Errorf("baseline %s: Doc %q (want one line) or no emitter", b.Name, b.Doc)
		}
	}
	if !seen["naive"] {
		t.Error("no naive baseline")
	}
	// Baselines are not the tuned code: they must not move the version
	// that keys the tuning records.
	if Template.Version != versionOf(revision, space) {
		t.Errorf("Version %s depends on more than the revision and the space", Template.Version)
	}
}

// TestNaiveBaseline builds the naive baseline for every test shape with the
// test driver and checks it against the reference on every kind of input,
// as TestKernels checks the generated kernels: a wrong baseline would make
// every ratio autotune bench prints meaningless.
func TestNaiveBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the baseline")
	}
	var naive kernels.Baseline
	for _, b := range Template.Baselines {
		if b.Name == "naive" {
			naive = b
		}
	}
	dir := t.TempDir()
	code, table := golang.NewFile("main"), golang.NewFile("main")
	var rows []jen.Code
	for i, shape := range testShapes {
		name := fmt.Sprintf("B%d", i)
		naive.EmitGo(code, name, shape)
		rows = append(rows, jen.Values(jen.Lit(name), jen.Lit(naive.Name), jen.Lit(shape[0]), jen.Lit(shape[1]), jen.Id(name)))
	}
	table.Var().Id("kernels").Op("=").Index().Id("kernel").Values(rows...)
	driver, err := os.ReadFile(filepath.Join("testdata", "driver", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string][]byte{
		"go.mod": []byte("module baselinetest\n\ngo 1.26\n"), "main.go": driver,
		"baselines.go": render(t, code), "table.go": render(t, table),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), src, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "driver")
	goTool(t, dir, "build", "-o", bin, ".")
	goTool(t, dir, "vet", ".")

	type job struct {
		shape []int
		kind  string
		in    []float32
	}
	var jobs []job
	var list strings.Builder
	rng := rand.New(rand.NewPCG(3, 4))
	for i, shape := range testShapes {
		for _, kind := range inputKinds {
			file := filepath.Join(dir, fmt.Sprintf("in_%d_%s.bin", i, kind))
			in := input(shape, kind, rng)
			writeFloats(t, file, in)
			jobs = append(jobs, job{shape, kind, in})
			fmt.Fprintf(&list, "B%d %s\n", i, file)
		}
	}
	jobsFile := filepath.Join(dir, "jobs")
	if err := os.WriteFile(jobsFile, []byte(list.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "run", jobsFile).Output()
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	for _, j := range jobs {
		n := len(j.in)
		if len(out) < 4*n {
			t.Fatalf("driver output ends before %v %s", j.shape, j.kind)
		}
		got := make([]float32, n)
		for i := range got {
			got[i] = math.Float32frombits(binary.LittleEndian.Uint32(out[4*i:]))
		}
		out = out[4*n:]
		want := make([]float64, n)
		Template.Reference(j.shape, [][]float32{j.in}, want)
		rel, abs := Template.Tolerance(j.shape)
		if c := compare(got, want, rel, abs); c.bad > 0 {
			t.Errorf("%s on %v %s: %d of %d outputs wrong; first [%d]: got %g, want %g",
				naive.Name, j.shape, j.kind, c.bad, n, c.first, got[c.first], want[c.first])
		} else {
			t.Logf("%v %s: largest error %.2f of the tolerance", j.shape, j.kind, c.worst)
		}
	}
}
