package kernels

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/autotune-dev/autotune/schedule"
)

// Version returns a template version: revision, a number the template's
// author bumps by hand when the emitted code changes in a way the knob space
// does not show, followed by a hash of the revision, any extra facts the
// code depends on (one per line, e.g. a register budget) and the space's
// knobs, values and constraints. Build space for a fixed shape and a fixed
// reference target, so that the version is the same on every machine and
// changes whenever a knob, a value or a constraint does.
//
// The tuning database keys records by it: records of another version are
// never the best of the current template.
func Version(revision string, space *schedule.Space, extra ...string) string {
	var b strings.Builder
	b.WriteString(revision)
	for _, e := range extra {
		b.WriteString("\n" + e)
	}
	for _, k := range space.Knobs() {
		b.WriteString("\n" + k.String())
	}
	b.WriteString("\n" + strings.Join(space.Constraints(), ","))
	sum := sha256.Sum256([]byte(b.String()))
	return revision + "-" + hex.EncodeToString(sum[:6])
}
