package device

import (
	"fmt"
	"strconv"
	"strings"
)

// maxCores bounds the cores a fingerprint may claim: templates offer a
// thread count per core, and a forged record must not make them allocate
// without bound.
const maxCores = 1 << 12

// The SVE vector lengths the architecture allows: multiples of 128 bits up
// to 2048.
const minSVEBits, maxSVEBits = 128, 2048

// FromFingerprint rebuilds a target from its fingerprint, so that records
// of another machine can be read with the knob space that machine had. A
// CPU's, "cpu/<model>/<isa>/<cores>c", gives cores and ISA, what CPU spaces
// depend on (the ISA's extensions name the architecture, ISA.Arch); cache sizes are not in the fingerprint and stay zero. A CUDA
// one, "cuda/<arch>" or "cuda/<arch>/<name>/<driver>", gives the
// architecture's limits from the table, with the GPU's name and driver when
// the fingerprint has them.
func FromFingerprint(fingerprint string) (Target, error) {
	bad := fmt.Errorf("device: cannot rebuild the target of %q: only cpu/<model>/<isa>/<cores>c and cuda/<arch>[/<name>/<driver>] fingerprints are known", fingerprint)
	if rest, ok := strings.CutPrefix(fingerprint, "cuda/"); ok {
		arch, detected, _ := strings.Cut(rest, "/")
		for _, g := range archs {
			if g.Arch != arch {
				continue
			}
			if detected != "" {
				// The name may hold a '/', so cut the driver from the right.
				i := strings.LastIndexByte(detected, '/')
				if i <= 0 || i == len(detected)-1 {
					return Target{}, bad
				}
				g.Name, g.Driver = detected[:i], detected[i+1:]
			}
			return Target{Name: arch, GPU: &g}, nil
		}
		return Target{}, bad
	}
	rest, ok := strings.CutPrefix(fingerprint, "cpu/")
	if !ok {
		return Target{}, bad
	}
	// The model name may hold anything, so cut from the right.
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return Target{}, bad
	}
	rest, coresText := rest[:i], rest[i+1:]
	i = strings.LastIndexByte(rest, '/')
	if i < 0 {
		return Target{}, bad
	}
	model, isaText := rest[:i], rest[i+1:]
	cores, err := strconv.Atoi(strings.TrimSuffix(coresText, "c"))
	if err != nil || cores < 1 || cores > maxCores {
		return Target{}, bad
	}
	isa, ok := parseISA(isaText)
	if !ok {
		return Target{}, bad
	}
	t := Target{Name: "cpu", CPU: &CPU{Model: model, Cores: cores, ISA: isa}}
	if t.Fingerprint() != fingerprint {
		return Target{}, bad
	}
	return t, nil
}

// parseISA is ISA.String's inverse; ok is false for an unknown extension or
// one that ISA.String would write differently (order, SVE length).
func parseISA(text string) (isa ISA, ok bool) {
	if text == "none" {
		return ISA{}, true
	}
	flags := map[string]*bool{"sse4.2": &isa.SSE42, "avx2": &isa.AVX2, "fma": &isa.FMA, "avx512": &isa.AVX512,
		"avx512bf16": &isa.AVX512BF16, "asimd": &isa.ASIMD, "fp16": &isa.FP16, "bf16": &isa.BF16, "i8mm": &isa.I8MM}
	for _, f := range strings.Split(text, "+") {
		if on := flags[f]; on != nil {
			*on = true
			continue
		}
		bits, err := strconv.Atoi(strings.TrimPrefix(f, "sve"))
		if !strings.HasPrefix(f, "sve") || err != nil || bits < minSVEBits || bits > maxSVEBits || bits%minSVEBits != 0 {
			return ISA{}, false
		}
		isa.SVEBits = bits
	}
	return isa, isa.String() == text
}
