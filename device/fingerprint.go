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

// FromFingerprint rebuilds a CPU target from its fingerprint,
// "cpu/<model>/<isa>/<cores>c", so that records of another machine can be
// read with the knob space that machine had: cores and ISA are what spaces
// depend on. Cache sizes are not in the fingerprint and stay zero. CUDA
// fingerprints are not supported yet.
func FromFingerprint(fingerprint string) (Target, error) {
	bad := fmt.Errorf("device: cannot rebuild the target of %q: only cpu/<model>/<isa>/<cores>c fingerprints are known", fingerprint)
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
	var isa ISA
	if isaText != "none" {
		for _, f := range strings.Split(isaText, "+") {
			switch f {
			case "sse4.2":
				isa.SSE42 = true
			case "avx2":
				isa.AVX2 = true
			case "fma":
				isa.FMA = true
			case "avx512":
				isa.AVX512 = true
			default:
				return Target{}, bad
			}
		}
	}
	t := Target{Name: "cpu", CPU: &CPU{Model: model, Cores: cores, ISA: isa}}
	if t.Fingerprint() != fingerprint {
		return Target{}, bad
	}
	return t, nil
}
