package tunedb

import (
	"os/exec"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/schedule"
)

// TestClaims walks two tuners, a dead one and one of another host through
// claims on one workload.
func TestClaims(t *testing.T) {
	db := openTemp(t)
	cfgs := func(texts ...string) []schedule.Config {
		var out []schedule.Config
		for _, s := range texts {
			out = append(out, config(t, s))
		}
		return out
	}
	claim := func(o Owner, since time.Time, lease time.Duration, texts ...string) []bool {
		t.Helper()
		taken, err := db.Claim(softmax, cfgs(texts...), o, since, lease)
		if err != nil {
			t.Fatal(err)
		}
		return taken
	}
	want := func(got []bool, want ...bool) {
		t.Helper()
		if !slices.Equal(got, want) {
			t.Errorf("taken %v, want %v", got, want)
		}
	}
	start := time.Now()
	a, b := NewOwner(), NewOwner()
	want(claim(a, start, time.Hour, "vec=8,unroll=1", "vec=8,unroll=2"), false, false)
	want(claim(b, start, time.Hour, "vec=8,unroll=1", "vec=8,unroll=2", "vec=8,unroll=4"), true, true, false)
	want(claim(a, start, time.Hour, "vec=8,unroll=1"), false) // its own, renewed

	// a measures vec=8,unroll=1 but not vec=8,unroll=2 (interrupted).
	r := rec(t, softmax, "vec=8,unroll=1", StatusOK, 100, 0)
	r.Time = time.Now()
	if err := db.Commit([]Record{r}); err != nil {
		t.Fatal(err)
	}
	if err := db.Release(softmax, cfgs("vec=8,unroll=1", "vec=8,unroll=2"), a); err != nil {
		t.Fatal(err)
	}
	// b started before a's record was committed: vec=8,unroll=1 stays
	// taken; the one a left unmeasured is free. A run that read the
	// database after a's release measures it again only when it asks to.
	want(claim(b, start, time.Hour, "vec=8,unroll=1", "vec=8,unroll=2"), true, false)
	want(claim(NewOwner(), time.Now(), time.Hour, "vec=8,unroll=1"), false)

	// A tuner of this host whose process is gone holds nothing; one of
	// another host holds until its lease ends.
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Skip(err)
	}
	dead := Owner{Host: a.Host, PID: gone.Process.Pid, Run: "dead"}
	far := Owner{Host: "elsewhere", PID: 1, Run: "far"}
	want(claim(dead, start, time.Hour, "vec=16,unroll=1"), false)
	want(claim(far, start, time.Hour, "vec=16,unroll=2"), false)
	want(claim(far, start, -time.Second, "vec=16,unroll=4"), false)
	want(claim(b, start, time.Hour, "vec=16,unroll=1", "vec=16,unroll=2", "vec=16,unroll=4"), false, true, false)
}
