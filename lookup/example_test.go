package lookup_test

import (
	"fmt"
	"strings"

	"github.com/autotune-dev/autotune/lookup"
)

// A program that imports only lookup asks for a config. With no records
// every answer is the template's default; the rule says so.
func Example() {
	log := strings.NewReader("") // what `autotune db export` writes; empty here
	t, err := lookup.Load(log)
	if err != nil {
		fmt.Println(err)
		return
	}
	a, err := t.Best("softmax", []int{4096, 1024}, "f32", "cpu/Example CPU/sse4.2+avx2+fma/8c")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(a.Rule)
	// Output: default
}
