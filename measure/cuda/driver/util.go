package driver

import (
	"strings"
	"unsafe"
)

func joinReasons(r []string) string { return strings.Join(r, "; ") }

// goString copies the NUL-terminated C string at p.
func goString(p *byte) string {
	if p == nil {
		return ""
	}
	var b []byte
	for q := p; *q != 0; q = (*byte)(unsafe.Add(unsafe.Pointer(q), 1)) {
		b = append(b, *q)
	}
	return string(b)
}

// cString returns s as a NUL-terminated byte slice.
func cString(s string) []byte { return append([]byte(s), 0) }
