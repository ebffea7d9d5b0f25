package driver

import (
	"fmt"

	"github.com/ebitengine/purego"
)

// library is an opened shared library.
type library struct {
	path   string
	handle uintptr
}

// openLib opens the first of paths that the dynamic loader accepts. A path
// without a slash is searched for on the loader's path. notFound is wrapped
// with every reason when none opens.
func openLib(notFound error, paths ...string) (*library, error) {
	var reasons []string
	for _, p := range paths {
		h, err := purego.Dlopen(p, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err == nil {
			return &library{path: p, handle: h}, nil
		}
		reasons = append(reasons, err.Error())
	}
	return nil, fmt.Errorf("%w (tried: %s)", notFound, joinReasons(reasons))
}

// bind sets *fptr to call symbol name. It looks the symbol up first, since
// purego.RegisterLibFunc panics on a missing one.
func (l *library) bind(fptr any, name string) error {
	sym, err := purego.Dlsym(l.handle, name)
	if err != nil || sym == 0 {
		return fmt.Errorf("%w: %s has no %s", ErrMissingSymbol, l.path, name)
	}
	purego.RegisterFunc(fptr, sym)
	return nil
}

// has reports whether the library defines name.
func (l *library) has(name string) bool {
	sym, err := purego.Dlsym(l.handle, name)
	return err == nil && sym != 0
}
