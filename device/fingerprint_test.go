package device

import "testing"

func TestFromFingerprint(t *testing.T) {
	for _, want := range []Target{
		{Name: "cpu", CPU: &CPU{Model: "Intel(R) Xeon(R) Processor @ 2.80GHz", Cores: 2, ISA: ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}},
		{Name: "cpu", CPU: &CPU{Model: "arm64", Cores: 10}},
		{Name: "cpu", CPU: &CPU{Model: "odd/model name", Cores: 64, ISA: ISA{AVX2: true}}},
		{Name: "cpu", CPU: &CPU{Model: "arm64", Cores: 64, ISA: ISA{ASIMD: true, FP16: true, BF16: true, I8MM: true, SVEBits: 256}}},
		{Name: "cpu", CPU: &CPU{Model: "arm64", Cores: 8, ISA: ISA{ASIMD: true}}},
	} {
		got, err := FromFingerprint(want.Fingerprint())
		if err != nil || got.Fingerprint() != want.Fingerprint() || got.CPU.Cores != want.CPU.Cores || got.CPU.ISA != want.CPU.ISA {
			t.Errorf("FromFingerprint(%q) = %+v, %v", want.Fingerprint(), got.CPU, err)
		}
	}
	sm86, _ := Lookup("sm_86")
	named := *sm86.GPU
	named.Name, named.Driver = "NVIDIA GeForce RTX 3090/Ti", "550.54.15"
	for _, want := range []Target{sm86, {Name: "sm_86", GPU: &named}} {
		got, err := FromFingerprint(want.Fingerprint())
		if err != nil || got.Fingerprint() != want.Fingerprint() || got.Name != "sm_86" || got.GPU.Limits != want.GPU.Limits {
			t.Errorf("FromFingerprint(%q) = %+v, %v", want.Fingerprint(), got.GPU, err)
		}
	}
	for _, bad := range []string{"cuda/sm_99", "cuda/", "cuda/sm_86/name-without-driver", "cuda/sm_86/name/", "cpu/x/avx2/0c", "cpu/x/avx3/2c", "cpu/x/avx2/2", "cpu/2c", "cpu/x/fma+avx2/2c", "cpu/x/avx2/99999999999c",
		"cpu/x/sve/2c", "cpu/x/sve100/2c", "cpu/x/sve4096/2c", "cpu/x/asimd+sve0/2c", "cpu/x/sve128+asimd/2c", "cpu/x/asimd+asimd/2c", "cpu/x/none+asimd/2c"} {
		if _, err := FromFingerprint(bad); err == nil {
			t.Errorf("FromFingerprint(%q) succeeded", bad)
		}
	}
}
