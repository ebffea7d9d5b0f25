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

// FromFingerprint rebuilds a target from its fingerprint, so that records
// of another machine can be read with the knob space that machine had. A
// CPU's, "cpu/<model>/<isa>/<cores>c", gives cores and ISA, what CPU spaces
// depend on; cache sizes are not in the fingerprint and stay zero. A CUDA
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
