package device

import (
	"bufio"
	"io"
	"io/fs"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Host returns the target for this machine's CPU. Detection runs once per process; each call
// returns a fresh copy that callers may modify.
func Host() Target {
	c := hostCPU()
	return Target{Name: "cpu", CPU: &c}
}

var hostCPU = sync.OnceValue(detectCPU)

func detectCPU() CPU {
	c := CPU{Model: runtime.GOARCH, Cores: runtime.NumCPU()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		if m := parseCPUModel(f); m != "" {
			c.Model = m
		}
		f.Close()
	}
	// x/sys/cpu also fills X86 on 386, where archsimd does not exist.
	c.ISA = hostISA()
	c.L1D, c.L2, c.L3 = parseCaches(os.DirFS("/sys/devices/system/cpu/cpu0/cache"))
	c.CacheSource = CacheSysfs
	if c.L1D == 0 && c.L2 == 0 && c.L3 == 0 {
		// Some VMs publish no cache directory in sysfs; the processor itself still knows.
		c.L1D, c.L2, c.L3 = cpuidCaches()
		c.CacheSource = CacheCPUID
	}
	if c.L1D == 0 && c.L2 == 0 && c.L3 == 0 {
		c.CacheSource = CacheUnknown
	}
	return c
}

// parseCPUModel returns the first "model name" in /proc/cpuinfo format, with runs of spaces
// collapsed because older kernels pad it and the model is part of the fingerprint. It returns ""
// when there is none, as on many arm64 kernels.
func parseCPUModel(r io.Reader) string {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20) // the flags line grows with every new extension
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(val), " ")
		}
	}
	return ""
}

// hasFeature reports whether the "Features" line of a Linux /proc/cpuinfo
// on arm64 lists feature.
func hasFeature(r io.Reader, feature string) bool {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(key) == "Features" {
			return slices.Contains(strings.Fields(val), feature)
		}
	}
	return false
}

// parseCaches reads a sysfs cache directory (index*/{level,type,size}) and returns the sizes in
// bytes of the level-1 data cache and the level-2 and level-3 unified caches. An entry it cannot
// read or understand is skipped, leaving its size 0.
func parseCaches(fsys fs.FS) (l1d, l2, l3 int) {
	dirs, _ := fs.Glob(fsys, "index*")
	for _, d := range dirs {
		read := func(name string) string {
			b, _ := fs.ReadFile(fsys, d+"/"+name)
			return strings.TrimSpace(string(b))
		}
		size, ok := parseSize(read("size"))
		if !ok {
			continue
		}
		var dst *int
		switch level, typ := read("level"), read("type"); {
		case level == "1" && typ == "Data":
			dst = &l1d
		case level == "2" && typ == "Unified":
			dst = &l2
		case level == "3" && typ == "Unified":
			dst = &l3
		default: // instruction caches, level 4, unknown types
			continue
		}
		if *dst == 0 {
			*dst = size
		}
	}
	return l1d, l2, l3
}

// parseSize parses a sysfs cache size such as "48K", "54M", "1G" or "4096" into bytes.
func parseSize(s string) (int, bool) {
	mult := uint64(1)
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			mult = 1 << 10
		case 'M':
			mult = 1 << 20
		case 'G':
			mult = 1 << 30
		}
		if mult != 1 {
			s = s[:len(s)-1]
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > math.MaxInt/mult {
		return 0, false
	}
	return int(n * mult), true
}
