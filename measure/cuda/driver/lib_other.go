//go:build !linux

package driver

import (
	"errors"
	"fmt"
	"runtime"
)

type library struct{ path string }

func openLib(notFound error, paths ...string) (*library, error) {
	return nil, fmt.Errorf("%w (autotune loads CUDA libraries on Linux only, not %s)", notFound, runtime.GOOS)
}

func (l *library) bind(fptr any, name string) error { return errors.New("unreachable") }

func (l *library) has(name string) bool { return false }
