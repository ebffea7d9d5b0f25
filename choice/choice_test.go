package choice

import (
	"slices"
	"strings"
	"testing"
)

type kind struct {
	Name string
	N    int
}

func name(k kind) string { return k.Name }

func TestList(t *testing.T) {
	l := New("fruit: fruit", name, kind{"apple", 1}, kind{"pear", 2}, kind{"plum", 3})
	if got := l.Names(); !slices.Equal(got, []string{"apple", "pear", "plum"}) {
		t.Errorf("Names() = %v", got)
	}
	if d := l.Default(); d.Name != "apple" {
		t.Errorf("Default() = %v", d)
	}
	all := l.All()
	all[0].Name = "changed"
	if l.Default().Name != "apple" {
		t.Error("All returned the list's own slice")
	}
	if k, err := l.Lookup("pear"); err != nil || k.N != 2 {
		t.Errorf("Lookup(pear) = %v, %v", k, err)
	}
	for _, bad := range []string{"", "Pear", "pear ", "fig"} {
		_, err := l.Lookup(bad)
		want := `fruit: unknown fruit "` + bad + `" (known: apple, pear, plum)`
		if err == nil || err.Error() != want {
			t.Errorf("Lookup(%q) = %v, want %s", bad, err, want)
		}
	}
}

func TestNewPanics(t *testing.T) {
	for name, items := range map[string][]kind{
		"empty":     nil,
		"duplicate": {{"apple", 1}, {"pear", 2}, {"apple", 3}},
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), "fruit") {
					t.Errorf("New(%v) recovered %v, want a panic naming the list", items, r)
				}
			}()
			New("fruit: fruit", func(k kind) string { return k.Name }, items...)
		})
	}
}
