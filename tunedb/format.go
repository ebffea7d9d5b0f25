package tunedb

import (
	"fmt"
	"time"
)

// FormatNS writes a duration in nanoseconds with three significant digits,
// "412 µs", as autotune best and db ls print a record's times; "-" for 0 or
// less (a statistic a record does not have).
func FormatNS(ns float64) string {
	if ns <= 0 {
		return "-"
	}
	d := time.Duration(ns)
	switch {
	case d < time.Microsecond:
		return fmt.Sprintf("%.3g ns", ns)
	case d < time.Millisecond:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	case d < time.Second:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
	return fmt.Sprintf("%.3g s", ns/1e9)
}
