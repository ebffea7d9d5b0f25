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

// cpuidTable replays recorded CPUID answers; leaves it does not hold answer zeros, as a real
// processor does for a leaf above its maximum.
type cpuidTable map[[2]uint32][4]uint32

func (tb cpuidTable) cpuid(leaf, subleaf uint32) (eax, ebx, ecx, edx uint32) {
	r := tb[[2]uint32{leaf, subleaf}]
	return r[0], r[1], r[2], r[3]
}

func TestParseCPUIDCaches(t *testing.T) {
	// Recorded on a 2-vCPU AMD EPYC (Zen 4) VM: leaf 4 is empty, 0x8000001D describes the caches.
	zen4 := cpuidTable{
		{0, 0}:          {0x1c, 0x68747541, 0x444d4163, 0x69746e65},
		{0x80000000, 0}: {0x80000021, 0x68747541, 0x444d4163, 0x69746e65},
		{0x80000001, 0}: {0xa10f11, 0x40000000, 0x4003f3, 0x2fd3fbff},
		{0x80000005, 0}: {0xff48ff40, 0xff48ff40, 0x20080140, 0x20080140},
		{0x80000006, 0}: {0x5c002200, 0x6c004200, 0x4006140, 0xa009140},
		{0x8000001D, 0}: {0x121, 0x1c0003f, 0x3f, 0},
		{0x8000001D, 1}: {0x122, 0x1c0003f, 0x3f, 0},
		{0x8000001D, 2}: {0x143, 0x1c0003f, 0x7ff, 2},
		{0x8000001D, 3}: {0x4163, 0x3c0003f, 0x7fff, 1},
	}
	// The same processor without the topology extensions bit: only the legacy leaves remain.
	legacy := cpuidTable{}
	for k, v := range zen4 {
		legacy[k] = v
	}
	legacy[[2]uint32{0x80000001, 0}] = [4]uint32{0xa10f11, 0x40000000, 0x4003f3 &^ (1 << 22), 0x2fd3fbff}
	// An Intel Xeon (Ice Lake) in leaf 4: 48 KiB 12-way L1d, 32 KiB L1i, 1.25 MiB 20-way L2,
	// 54 MiB 12-way L3. EAX also carries the sharing and self-initialising bits that must be
	// masked off.
	icx := cpuidTable{
		{0, 0}: {0x1b, 0x756e6547, 0x6c65746e, 0x49656e69},
		{4, 0}: {0x04000121, (11 << 22) | 63, 63, 0},
		{4, 1}: {0x04000122, (7 << 22) | 63, 63, 0},
		{4, 2}: {0x04000143, (19 << 22) | 63, 1023, 0},
		{4, 3}: {0x04004163, (11 << 22) | 63, 73727, 4},
		{4, 4}: {0, 0, 0, 0},
	}
	// A hypervisor that answers every subleaf with the same cache must not loop forever.
	stuck := cpuidTable{{0, 0}: {4, 0, 0, 0}}
	for s := uint32(0); s < 64; s++ {
		stuck[[2]uint32{4, s}] = [4]uint32{0x43, 63, 1023, 0}
	}
	tests := []struct {
		name        string
		tb          cpuidTable
		l1d, l2, l3 int
	}{
		{"amd 0x8000001D", zen4, 32 << 10, 1 << 20, 32 << 20},
		// The legacy leaf counts the L3 of the whole package (10 CCDs here), not one CCX's.
		{"amd legacy leaves", legacy, 32 << 10, 1 << 20, 320 << 20},
		{"intel leaf 4", icx, 48 << 10, 1280 << 10, 54 << 20},
		{"nothing", cpuidTable{}, 0, 0, 0},
		{"repeating subleaves", stuck, 0, 64 * 1024, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l1d, l2, l3 := parseCPUIDCaches(tt.tb.cpuid)
			if l1d != tt.l1d || l2 != tt.l2 || l3 != tt.l3 {
				t.Errorf("parseCPUIDCaches = %d, %d, %d; want %d, %d, %d", l1d, l2, l3, tt.l1d, tt.l2, tt.l3)
			}
		})
	}
}

func TestHasFeature(t *testing.T) {
	const graviton3 = `processor	: 0
BogoMIPS	: 2100.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp cpuid asimdrdm jscvt fcma lrcpc dcpop sha3 sm3 sm4 asimddp sha512 sve asimdfhm dit uscat ilrcpc flagm ssbs paca pacg dcpodp svei8mm svebf16 i8mm bf16 dgh rng
CPU implementer	: 0x41
`
	for _, tt := range []struct {
		in, feature string
		want        bool
	}{
		{graviton3, "bf16", true},
		{graviton3, "i8mm", true},
		{graviton3, "sve2", false},
		{graviton3, "bf1", false}, // whole words only
		{"processor : 0\nflags : avx2 bf16\n", "bf16", false},
		{"", "bf16", false},
	} {
		if got := hasFeature(strings.NewReader(tt.in), tt.feature); got != tt.want {
			t.Errorf("hasFeature(%.30q, %q) = %v, want %v", tt.in, tt.feature, got, tt.want)
		}
	}
}
