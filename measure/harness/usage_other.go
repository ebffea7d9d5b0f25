//go:build !unix

package harness

import "time"

// Usage cannot say outside Unix.
func Usage() (cpu time.Duration, involuntary int64, ok bool) { return 0, 0, false }
