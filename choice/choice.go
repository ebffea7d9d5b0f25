package choice

import (
	"fmt"
	"slices"
	"strings"
)

// List is a closed list of named alternatives, the default first. The zero
// List is not usable; make one with New.
type List[T any] struct {
	what  string // "search: strategy", for errors
	name  func(T) string
	items []T
}

// New returns the list of items, named by name, the default first. what
// says what an item is, prefixed by its package as errors are:
// "search: strategy". New panics on an empty list or two items of one name:
// both are mistakes in the declaring package's source, not in input.
func New[T any](what string, name func(T) string, items ...T) List[T] {
	if len(items) == 0 {
		panic("choice: empty list of " + what)
	}
	seen := map[string]bool{}
	for _, it := range items {
		n := name(it)
		if seen[n] {
			panic(fmt.Sprintf("choice: two items named %q in the list of %s", n, what))
		}
		seen[n] = true
	}
	return List[T]{what: what, name: name, items: slices.Clone(items)}
}

// All returns every item, the default first; the slice is the caller's.
func (l List[T]) All() []T { return slices.Clone(l.items) }

// Default returns the first item.
func (l List[T]) Default() T { return l.items[0] }

// Names returns the items' names, in order.
func (l List[T]) Names() []string {
	names := make([]string, len(l.items))
	for i, it := range l.items {
		names[i] = l.name(it)
	}
	return names
}

// Lookup returns the item named name (case-sensitive). The error is one
// line that lists the names there are:
//
//	search: unknown strategy "annealing" (known: evolutionary, random, grid)
func (l List[T]) Lookup(name string) (T, error) {
	for _, it := range l.items {
		if l.name(it) == name {
			return it, nil
		}
	}
	pkg, noun, _ := strings.Cut(l.what, ": ")
	var zero T
	return zero, fmt.Errorf("%s: unknown %s %q (known: %s)", pkg, noun, name, strings.Join(l.Names(), ", "))
}
