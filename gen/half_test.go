package gen

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestGenerateHalf generates packages of bf16 and f16 norms, softmax and
// GEMM (with a bias, converting while packing, and VDPBF16PS tiles where
// the host has AVX512-BF16, as attention's scores there) from records
// with archsimd rows (whose conversions are assembly of the vector form
// alone), assembly rows (with plain forms) and scalar rows, and runs go
// vet, the generated tests (which check every kernel against the float64
// reference on inputs rounded to the dtype) and each benchmark once, with
// and without GOEXPERIMENT=simd.
func TestGenerateHalf(t *testing.T) {
	host := device.Host()
	vec := kernels.WidestVector(host)
	for _, dt := range []dtype.DType{dtype.BF16, dtype.F16} {
		t.Run(string(dt), func(t *testing.T) {
			mem := tunedb.NewMemory()
			var recs []tunedb.Record
			add := func(op string, shape []int, text string) {
				tmpl, _ := kernels.TemplateFor(op, kernels.CPU)
				sp := tmpl.Space(shape, host)
				cfg := tmpl.Default(shape, host)
				if text != "" {
					var err error
					if cfg, err = sp.Parse(text); err != nil || !sp.Valid(cfg) {
						t.Fatalf("%s %v: %s is not valid on the host: %v", op, shape, text, err)
					}
				}
				recs = append(recs, tunedb.Record{Schema: 1,
					Workload: tunedb.Workload{Op: op, Shape: shape, DType: dt, Device: host.Fingerprint(), Template: tmpl.Version},
					Config:   cfg, Status: tunedb.StatusOK, SamplesNS: []float64{1000}, MedianNS: 1000,
					Time: time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC), Tool: "test"})
			}
			add("rmsnorm", []int{64, 100}, "")
			add("layernorm", []int{64, 100}, "")
			if vec > 1 {
				add("rmsnorm", []int{3, 1023}, fmt.Sprintf("vec=%d,unroll=4,threads=2,rows_per_chunk=1,code=asm,store=cached,prefetch=false,convert=block", vec))
				add("layernorm", []int{3, 1023}, fmt.Sprintf("vec=%d,unroll=2,threads=1,rows_per_chunk=1,algo=twopass,code=asm,store=cached,prefetch=false,convert=reg", vec))
				// softmax's default converts in the assembly's registers
				// (convert=reg); this one by blocks around the float32 rows.
				add("softmax", []int{3, 1023}, fmt.Sprintf("vec=%d,unroll=2,algo=threepass,exp=poly5,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached", vec))
				// The degree-3 exp of 16-bit results, and the scaling
				// streamed past the caches.
				add("softmax", []int{130, 64}, fmt.Sprintf("vec=%d,unroll=2,algo=threepass,exp=poly3,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=reg,store=stream", vec))
			}
			add("rmsnorm", []int{5, 17}, "vec=1,unroll=1,threads=1,rows_per_chunk=1,code=go,store=cached,prefetch=false,convert=block")
			add("softmax", []int{37, 45}, "")
			add("gemm_bias", []int{67, 45, 33}, "")
			// GEMM converting while packing, and with VDPBF16PS tiles
			// where the host has AVX512-BF16 (packhalf.go in
			// kernels/gemm), installed by the CPU's features.
			packed := "mr=4,nr_vecs=2,kc=64,mc=24,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=1,pack_a=true"
			if vec > 1 {
				add("gemm", []int{31, 47, 37}, fmt.Sprintf("vec=%d,%s,convert=pack", vec, packed))
			}
			if dt == dtype.BF16 && host.CPU.ISA.AVX512BF16 {
				add("gemm", []int{29, 40, 21}, "vec=16,"+packed+",convert=dot")
				add("gemm_bias", []int{19, 33, 17}, "vec=16,"+packed+",convert=dot")
				// Attention's scores on VDPBF16PS (dot.go in kernels/attention).
				add("attention", []int{1, 2, 37, 7}, "vec=16,br=16,bc=16,exp=poly5,threads=2,layout=lanes,mr=6,nv=1,micro=asm,convert=dot")
			}
			if err := mem.Commit(recs); err != nil {
				t.Fatal(err)
			}
			files, err := Generate(mem, Options{Pkg: "hk", Device: host.Fingerprint(), Ops: []string{"rmsnorm", "layernorm", "softmax", "gemm", "gemm_bias", "attention"}, DType: dt})
			if err != nil {
				t.Fatal(err)
			}
			elem := strings.ToUpper(string(dt))
			if doc := string(files["doc.go"]); !strings.Contains(doc, "RMSNorm(y, x, gamma []"+elem+", rows, cols int)") {
				t.Errorf("doc.go does not show RMSNorm on []%s:\n%s", elem, doc)
			}
			if files["dtype.go"] == nil || !strings.Contains(string(files["dtype.go"]), "type "+elem+" uint16") {
				t.Errorf("no type %s in dtype.go", elem)
			}
			if vec > 1 && files["layernorm_simd_amd64.s"] == nil {
				t.Error("no layernorm_simd_amd64.s for the conversions of the archsimd kernels")
			}
			if vec > 1 && !strings.Contains(string(files["softmax_simd.go"]), "tmp *float32") {
				t.Error("softmax_simd.go declares no assembly of convert=reg (the default's), whose scratch is tmp *float32")
			}
			mod := t.TempDir()
			if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module m\n\ngo 1.26\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			dir := filepath.Join(mod, "hk")
			if _, _, err := Write(dir, files); err != nil {
				t.Fatal(err)
			}
			for _, simd := range []bool{false, true} {
				goCmd(t, mod, simd, "vet", "./hk")
				goCmd(t, mod, simd, "test", "-count=1", "./hk")
				goCmd(t, mod, simd, "test", "-count=1", "-run", "^$", "-bench", ".", "-benchtime", "1x", "./hk")
			}
		})
	}
}
