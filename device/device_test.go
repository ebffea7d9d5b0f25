package device

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"
)

func TestNames(t *testing.T) {
	want := []string{"auto", "cpu", "sm_70", "sm_75", "sm_80", "sm_86", "sm_89", "sm_90"}
	if got := Names(); !slices.Equal(got, want) {
		t.Fatalf("Names() = %v, want %v", got, want)
	}
}

func TestLookupCUDA(t *testing.T) {
	// The numbers are restated from the CUDA programming guide rather than read from archs,
	// so a typo in the table fails here.
	tests := []struct {
		name         string
		major, minor int
		want         Limits
	}{
		{"sm_70", 7, 0, Limits{1024, 49152, 98304, 98304, 65536, 65536, 255, 32, 32, 64}},
		{"sm_75", 7, 5, Limits{1024, 49152, 65536, 65536, 65536, 65536, 255, 32, 16, 32}},
		{"sm_80", 8, 0, Limits{1024, 49152, 166912, 167936, 65536, 65536, 255, 32, 32, 64}},
		{"sm_86", 8, 6, Limits{1024, 49152, 101376, 102400, 65536, 65536, 255, 32, 16, 48}},
		{"sm_89", 8, 9, Limits{1024, 49152, 101376, 102400, 65536, 65536, 255, 32, 24, 48}},
		{"sm_90", 9, 0, Limits{1024, 49152, 232448, 233472, 65536, 65536, 255, 32, 32, 64}},
	}
	if len(tests) != len(archs) {
		t.Errorf("testing %d architectures, table has %d", len(tests), len(archs))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg, err := Lookup(tt.name)
			if err != nil {
				t.Fatal(err)
			}
			if !tg.IsCUDA() || tg.CPU != nil || tg.Name != tt.name || tg.String() != tt.name {
				t.Fatalf("Lookup(%q) = %+v", tt.name, tg)
			}
			g := tg.GPU
			if g.Arch != tt.name || g.Major != tt.major || g.Minor != tt.minor || g.Name != "" || g.Driver != "" {
				t.Errorf("GPU = %+v", *g)
			}
			if g.Limits != tt.want {
				t.Errorf("Limits = %+v, want %+v", g.Limits, tt.want)
			}
			l := g.Limits
			if l.SharedMemPerBlock > l.SharedMemPerBlockOptin || l.SharedMemPerBlockOptin > l.SharedMemPerSM ||
				l.MaxThreadsPerBlock > l.MaxWarpsPerSM*l.WarpSize || l.RegistersPerBlock > l.RegistersPerSM {
				t.Errorf("inconsistent limits %+v", l)
			}
		})
	}
}

func TestLookupCPU(t *testing.T) {
	// Lookup asks no probe, so "auto" must be the host.
	for _, name := range []string{"cpu", "auto"} {
		t.Run(name, func(t *testing.T) {
			tg, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if tg.IsCUDA() || tg.GPU != nil || tg.CPU == nil || tg.Name != "cpu" {
				t.Fatalf("Lookup(%q) = %+v", name, tg)
			}
			if *tg.CPU != *Host().CPU {
				t.Errorf("Lookup(%q).CPU = %+v, Host().CPU = %+v", name, *tg.CPU, *Host().CPU)
			}
		})
	}
}

func TestResolve(t *testing.T) {
	sm86, err := Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	card := sm86
	card.GPU.Name, card.GPU.Driver = "Fake GPU 9000", "13.0"
	found := func() (Target, error) { return card, nil }
	none := func() (Target, error) { return Target{}, errors.New("no driver") }
	const host, table, gpu = "host", "table", "gpu"
	for _, tt := range []struct {
		name  string
		probe Probe
		want  string // host: Host(); table: Lookup(name); gpu: the probe's card
	}{
		{"auto", found, gpu},
		{"auto", none, host},
		{"auto", nil, host},
		{"sm_86", found, gpu}, // the local card's architecture: its name and driver
		{"sm_80", found, table},
		{"sm_86", none, table},
		{"sm_86", nil, table},
		{"cpu", found, host},
	} {
		t.Run(fmt.Sprintf("%s/%s", tt.name, tt.want), func(t *testing.T) {
			calls := 0
			var probe Probe
			if tt.probe != nil {
				probe = func() (Target, error) { calls++; return tt.probe() }
			}
			got, err := Resolve(tt.name, probe)
			if err != nil {
				t.Fatal(err)
			}
			var want Target
			switch tt.want {
			case host:
				want = Host()
			case table:
				want, _ = Lookup(tt.name)
			case gpu:
				want = card
			}
			if got.Fingerprint() != want.Fingerprint() || got.Name != want.Name {
				t.Errorf("Resolve(%q) = %s (%s), want %s (%s)", tt.name, got.Name, got.Fingerprint(), want.Name, want.Fingerprint())
			}
			if tt.name == "cpu" && calls != 0 {
				t.Errorf("Resolve(\"cpu\") asked the probe %d times", calls)
			}
		})
	}
	if _, err := Resolve("sm_99", found); err == nil || !strings.Contains(err.Error(), "unknown device") {
		t.Errorf("Resolve(sm_99) = %v, want unknown device", err)
	}
}

func TestLookupUnknown(t *testing.T) {
	const known = "(known: auto, cpu, sm_70, sm_75, sm_80, sm_86, sm_89, sm_90)"
	for _, name := range []string{"sm_99", "", "SM_86", "sm_86 ", "Cpu", "cuda", "sm86"} {
		t.Run(name, func(t *testing.T) {
			_, err := Lookup(name)
			want := fmt.Sprintf("device: unknown device %q %s", name, known)
			if err == nil || err.Error() != want {
				t.Errorf("Lookup(%q) error = %v, want %s", name, err, want)
			}
		})
	}
}

func TestLookupDoesNotAlias(t *testing.T) {
	a, _ := Lookup("sm_86")
	a.GPU.SharedMemPerBlock = 1
	a.GPU.Arch = "changed"
	if b, err := Lookup("sm_86"); err != nil || b.GPU.SharedMemPerBlock != 49152 {
		t.Errorf("changing a Lookup result changed the table: %+v, %v", b.GPU, err)
	}
	h := Host()
	h.CPU.Cores = -1
	h.CPU.ISA.AVX512 = !h.CPU.ISA.AVX512
	if Host().CPU.Cores < 1 || Host().CPU.ISA == h.CPU.ISA {
		t.Errorf("changing Host() changed the detected CPU: %+v", *Host().CPU)
	}
}

func TestFingerprint(t *testing.T) {
	xeon := &CPU{Model: "Intel(R) Xeon(R) Processor @ 2.80GHz", Cores: 2,
		ISA: ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}, L1D: 48 << 10}
	sm86, _ := Lookup("sm_86")
	detected := *sm86.GPU
	detected.Name, detected.Driver = "NVIDIA GeForce RTX 3090", "550.54.15"
	tests := []struct {
		name string
		t    Target
		want string
	}{
		{"cpu", Target{Name: "cpu", CPU: xeon}, "cpu/Intel(R) Xeon(R) Processor @ 2.80GHz/sse4.2+avx2+fma+avx512/2c"},
		{"cpu no isa", Target{Name: "cpu", CPU: &CPU{Model: "arm64", Cores: 8}}, "cpu/arm64/none/8c"},
		{"sm_86", sm86, "cuda/sm_86"},
		{"sm_86 detected", Target{Name: "sm_86", GPU: &detected}, "cuda/sm_86/NVIDIA GeForce RTX 3090/550.54.15"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.t.Fingerprint(); got != tt.want {
				t.Errorf("Fingerprint() = %q, want %q", got, tt.want)
			}
		})
	}

	t.Run("stable and distinct", func(t *testing.T) {
		seen := map[string]string{}
		for _, name := range Names()[1:] { // "auto" is "cpu" again
			a, _ := Lookup(name)
			b, _ := Lookup(name)
			fa, fb := a.Fingerprint(), b.Fingerprint()
			if fa != fb {
				t.Errorf("%s: fingerprint changed between lookups: %q, %q", name, fa, fb)
			}
			if other, dup := seen[fa]; dup {
				t.Errorf("%s and %s share fingerprint %q", other, name, fa)
			}
			seen[fa] = name
		}
	})

	t.Run("zero target panics", func(t *testing.T) {
		defer func() {
			if recover() == nil {
				t.Error("Fingerprint of the zero Target did not panic")
			}
		}()
		_ = Target{}.Fingerprint()
	})
}

func TestISAString(t *testing.T) {
	tests := []struct {
		isa  ISA
		want string
	}{
		{ISA{}, "none"},
		{ISA{SSE42: true}, "sse4.2"},
		{ISA{AVX512: true}, "avx512"},
		{ISA{FMA: true, AVX2: true}, "avx2+fma"},
		{ISA{AVX512: true, SSE42: true}, "sse4.2+avx512"},
		{ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}, "sse4.2+avx2+fma+avx512"},
		{ISA{ASIMD: true}, "asimd"},
		{ISA{SVEBits: 256, I8MM: true, ASIMD: true, BF16: true, FP16: true}, "asimd+fp16+bf16+i8mm+sve256"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.isa.String(); got != tt.want {
				t.Errorf("%+v.String() = %q, want %q", tt.isa, got, tt.want)
			}
		})
	}
}

func TestISAArch(t *testing.T) {
	for _, tt := range []struct {
		isa  ISA
		want string
	}{
		{ISA{}, ""},
		{ISA{SSE42: true}, "amd64"},
		{ISA{AVX512: true}, "amd64"},
		{ISA{ASIMD: true, FP16: true}, "arm64"},
		{ISA{SVEBits: 128}, "arm64"},
	} {
		if got := tt.isa.Arch(); got != tt.want {
			t.Errorf("%v.Arch() = %q, want %q", tt.isa, got, tt.want)
		}
	}
}

// TestHostArch checks that the detected extensions are this process's
// architecture's: an arm64 build (run under emulation in CI) finds NEON.
func TestHostArch(t *testing.T) {
	isa := Host().CPU.ISA
	switch runtime.GOARCH {
	case "amd64", "arm64":
		if got := isa.Arch(); got != runtime.GOARCH {
			t.Errorf("host ISA %s is of %q, want %q", isa, got, runtime.GOARCH)
		}
	default:
		if isa != (ISA{}) {
			t.Errorf("host ISA on %s = %s, want none", runtime.GOARCH, isa)
		}
	}
}

func TestHost(t *testing.T) {
	h := Host()
	t.Logf("host: %s L1D=%d L2=%d L3=%d", h.Fingerprint(), h.CPU.L1D, h.CPU.L2, h.CPU.L3)
	if h.Name != "cpu" || h.CPU == nil || h.GPU != nil {
		t.Fatalf("Host() = %+v", h)
	}
	c := h.CPU
	if c.Cores < 1 {
		t.Errorf("Cores = %d", c.Cores)
	}
	if strings.TrimSpace(c.Model) == "" {
		t.Errorf("Model = %q", c.Model)
	}
	if c.L1D < 0 || c.L2 < 0 || c.L3 < 0 {
		t.Errorf("negative cache size: %+v", *c)
	}
	if !strings.HasPrefix(h.Fingerprint(), "cpu/"+c.Model+"/") {
		t.Errorf("Fingerprint() = %q", h.Fingerprint())
	}
}
