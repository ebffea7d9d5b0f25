package device

import (
	"strings"
	"testing"
	"testing/fstest"
)

const xeonCPUInfo = `processor	: 0
vendor_id	: GenuineIntel
cpu family	: 6
model		: 106
model name	: Intel(R) Xeon(R) Processor @ 2.80GHz
flags		: fpu vme sse4_2 avx2 fma avx512f

processor	: 1
model name	: Some Other Model
`

func TestParseCPUModel(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"xeon", xeonCPUInfo, "Intel(R) Xeon(R) Processor @ 2.80GHz"},
		{"padded", "model name\t:   Intel(R)  Core(TM)   i7 CPU  \n", "Intel(R) Core(TM) i7 CPU"},
		{"arm64 without model name", "processor\t: 0\nBogoMIPS\t: 50.00\nCPU part\t: 0xd0c\n", ""},
		{"empty", "", ""},
		{"empty value", "model name\t:\n", ""},
		{"no colon", "model name Intel\n", ""},
		{"only the key", "model name", ""},
		{"crlf", "model name : AMD EPYC 7B13\r\n", "AMD EPYC 7B13"},
		{"colon in value", "model name\t: ARMv7 rev 1 (v7l): x\n", "ARMv7 rev 1 (v7l): x"},
		{"long flags line first", "flags\t: " + strings.Repeat("avx ", 100000) + "\nmodel name\t: M\n", "M"},
		{"binary", "\x00\xff\xfe:\x01\n\n::::", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseCPUModel(strings.NewReader(tt.in)); got != tt.want {
				t.Errorf("parseCPUModel = %q, want %q", got, tt.want)
			}
		})
	}
}

// cacheFS builds a sysfs cache directory; each entry is "level type size".
func cacheFS(entries ...string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i, e := range entries {
		dir := "index" + string(rune('0'+i)) + "/"
		for j, v := range strings.Split(e, " ") {
			if v != "-" { // "-" leaves the file out
				fsys[dir+[]string{"level", "type", "size"}[j]] = &fstest.MapFile{Data: []byte(v + "\n")}
			}
		}
	}
	return fsys
}

func TestParseCaches(t *testing.T) {
	tests := []struct {
		name        string
		fsys        fstest.MapFS
		l1d, l2, l3 int
	}{
		{"xeon", cacheFS("1 Data 48K", "1 Instruction 32K", "2 Unified 1280K", "3 Unified 54M"), 48 << 10, 1280 << 10, 54 << 20},
		{"instruction only", cacheFS("1 Instruction 32K"), 0, 0, 0},
		{"no l3", cacheFS("1 Data 32K", "1 Instruction 32K", "2 Unified 2048K"), 32 << 10, 2 << 20, 0},
		{"plain bytes and G", cacheFS("1 Data 49152", "3 Unified 1G"), 48 << 10, 0, 1 << 30},
		{"empty", fstest.MapFS{}, 0, 0, 0},
		{"malformed size", cacheFS("1 Data 48Q", "2 Unified K", "3 Unified -1M"), 0, 0, 0},
		{"missing files", cacheFS("1 Data -", "- Unified 1M", "3 - 32M"), 0, 0, 0},
		{"wrong level for type", cacheFS("2 Data 48K", "1 Unified 1M", "4 Unified 128M"), 0, 0, 0},
		{"overflow", cacheFS("3 Unified 99999999999999999999G"), 0, 0, 0},
		{"first wins", cacheFS("2 Unified 1M", "2 Unified 2M"), 0, 1 << 20, 0},
		{"not a directory", fstest.MapFS{"index0": {Data: []byte("1 Data 48K")}}, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l1d, l2, l3 := parseCaches(tt.fsys)
			if l1d != tt.l1d || l2 != tt.l2 || l3 != tt.l3 {
				t.Errorf("parseCaches = %d, %d, %d; want %d, %d, %d", l1d, l2, l3, tt.l1d, tt.l2, tt.l3)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int
		ok   bool
	}{
		{"48K", 48 << 10, true},
		{"1280K", 1280 << 10, true},
		{"54M", 54 << 20, true},
		{"1G", 1 << 30, true},
		{"4096", 4096, true},
		{"0K", 0, true},
		{"", 0, false},
		{"K", 0, false},
		{"48k", 0, false},
		{"-1K", 0, false},
		{"+1K", 0, false},
		{"1.5M", 0, false},
		{"48 K", 0, false},
		{"17179869184G", 0, false}, // 2^34 GiB = 2^64 bytes
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseSize(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseSize(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzParseCPUModel(f *testing.F) {
	f.Add(xeonCPUInfo)
	f.Add("model name\t:  a  b \n")
	f.Fuzz(func(t *testing.T, in string) {
		m := parseCPUModel(strings.NewReader(in))
		if m != strings.Join(strings.Fields(m), " ") {
			t.Errorf("model %q has untrimmed or repeated spaces", m)
		}
	})
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"48K", "54M", "1G", "4096", "", "-1K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if n, ok := parseSize(in); n < 0 || (!ok && n != 0) {
			t.Errorf("parseSize(%q) = %d, %v", in, n, ok)
		}
	})
}
