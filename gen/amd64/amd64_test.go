package amd64

import (
	"testing"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/gemm"
	"github.com/autotune-dev/autotune/kernels/softmax"
)

// TestFormsOf checks what a config needs, its scalar form and whether it
// has a plain form, for configs of each level, with and without
// assembly.
func TestFormsOf(t *testing.T) {
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: AVX512.ISA()}}
	for _, tt := range []struct {
		name   string
		tmpl   string
		shape  []int
		cfg    string
		needs  Level
		scalar string
		plain  bool
	}{
		{"scalar", "softmax", []int{64, 100},
			"vec=1,unroll=2,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
			Scalar, "vec=1,unroll=2,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", false},
		{"avx2", "softmax", []int{64, 100},
			"vec=8,unroll=2,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached",
			AVX2FMA, "vec=1,unroll=2,algo=online,exp=poly4,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", false},
		// vec=1 is no valid asm config: the scalar form is the default
		// for a CPU without vectors.
		{"avx512 asm", "softmax", []int{64, 100},
			"vec=16,unroll=2,algo=threepass,exp=poly5,threads=2,rows_per_chunk=4,code=asm,prefetch=true,convert=block,store=cached",
			AVX512, "vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", true},
		{"avx2 asm", "softmax", []int{64, 100},
			"vec=8,unroll=2,algo=threepass,exp=poly4,threads=1,rows_per_chunk=1,code=asm,prefetch=false,convert=block,store=cached",
			AVX2FMA, "vec=1,unroll=4,algo=online,exp=poly5,threads=1,rows_per_chunk=1,code=go,prefetch=false,convert=block,store=cached", true},
		{"gemm asm", "gemm", []int{100, 70, 300},
			"vec=16,mr=12,nr_vecs=2,kc=256,mc=96,nc=256,pack_b=true,unroll=1,threads=2,micro=asm,split=m,chunks=4,pack_a=true,convert=copy",
			AVX512, "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tmpl := softmax.Template
			if tt.tmpl == "gemm" {
				tmpl = gemm.Template
			}
			cfg, err := tmpl.Space(tt.shape, target).Parse(tt.cfg)
			if err != nil {
				t.Fatal(err)
			}
			f, err := FormsOf(tmpl, cfg, tt.shape, target)
			if err != nil {
				t.Fatal(err)
			}
			if f.Needs != tt.needs || f.Plain != tt.plain {
				t.Errorf("needs %d, plain %v; want %d, %v", f.Needs, f.Plain, tt.needs, tt.plain)
			}
			if tt.scalar != "" && f.Scalar.String() != tt.scalar {
				t.Errorf("scalar form %s, want %s", f.Scalar, tt.scalar)
			}
			if f.Scalar.Int("vec") != 1 {
				t.Errorf("scalar form %s has vectors", f.Scalar)
			}
			if !tmpl.Space(tt.shape, device.Target{Name: "cpu", CPU: &device.CPU{Cores: 4, ISA: Scalar.ISA()}}).Valid(f.Scalar) {
				t.Errorf("scalar form %s is not valid on a CPU without vectors", f.Scalar)
			}
		})
	}
}
