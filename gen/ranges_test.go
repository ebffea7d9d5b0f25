package gen

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestPlanRanges checks the bucket rule of a planned package: a shape
// inside a tuned range runs the generic kernel of its nearest bucket's
// winner, even where a held-out shape of the range or a shape outside it
// is nearer, and a shape outside the range goes by the nearest rule.
func TestPlanRanges(t *testing.T) {
	host := device.Host()
	tmpl, _ := kernels.TemplateFor("softmax", kernels.CPU)
	shapes := [][]int{{1, 64}, {8, 64}, {64, 64}, {23, 64}, {100, 64}} // three buckets, a held-out shape, one outside
	cfgs := distinctConfigs(t, tmpl, host, shapes)
	mem := tunedb.NewMemory()
	var recs []tunedb.Record
	for i, s := range shapes {
		recs = append(recs, tunedb.Record{Schema: 1,
			Workload: tunedb.Workload{Op: "softmax", Shape: s, DType: "f32", Device: host.Fingerprint(), Template: tmpl.Version},
			Config:   cfgs[i], Status: tunedb.StatusOK, SamplesNS: []float64{1000}, MedianNS: 1000,
			Time: time.Date(2026, 11, 24, 10, 0, 0, 0, time.UTC), Tool: "test"})
	}
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	if err := mem.SaveRange(tunedb.Range{Workload: recs[0].Workload, Hi: []int{64, 64}, Buckets: shapes[:3],
		HeldOut: []tunedb.HeldOut{{Shape: []int{23, 64}, Nearest: []int{64, 64}, Regret: 0.1}}, Time: recs[0].Time}); err != nil {
		t.Fatal(err)
	}
	// One generic variant by rank: the buckets' winners get theirs anyway.
	p, err := newPlan(mem, Options{Pkg: "fk", Device: host.Fingerprint(), Ops: []string{"softmax"}, Variants: 1})
	if err != nil {
		t.Fatal(err)
	}
	op := p.opByName("softmax")
	generic := func(shape []int) int {
		i := slices.IndexFunc(op.tuned, func(t tunedShape) bool { return slices.Equal(t.shape, shape) })
		k := op.tuned[i].near
		if k < 0 || op.variants[k].shape != nil || !op.variants[k].cfg.Equal(op.tuned[i].record.Config) {
			t.Fatalf("bucket %v has no generic kernel of its winner (near %d)", shape, k)
		}
		return k
	}
	for _, tt := range []struct {
		shape  []int
		bucket []int // nil: not the bucket rule
		rule   string
	}{
		{[]int{1, 64}, nil, "exact"},
		{[]int{23, 64}, nil, "exact"},
		{[]int{2, 64}, []int{1, 64}, "bucket 1x64 of 1..64x64"},  // |log2 2 - log2 1| = 1 < 2
		{[]int{3, 64}, []int{8, 64}, "bucket 8x64 of 1..64x64"},  // 1.58 > 1.42: past the middle, √8
		{[]int{22, 64}, []int{8, 64}, "bucket 8x64 of 1..64x64"}, // 1.46 < 1.54, though 23x64 is nearer
		{[]int{24, 64}, []int{64, 64}, "bucket 64x64 of 1..64x64"},
		{[]int{63, 64}, []int{64, 64}, "bucket 64x64 of 1..64x64"},
		{[]int{65, 64}, nil, "nearest 64x64"}, // outside: the nearest rule
		{[]int{90, 64}, nil, "nearest 100x64"},
		{[]int{8, 65}, nil, "nearest 8x64"},
	} {
		k, rule := op.expect(tt.shape)
		if rule != tt.rule {
			t.Errorf("%v: rule %q, want %q", tt.shape, rule, tt.rule)
		}
		if tt.bucket != nil && k != generic(tt.bucket) {
			t.Errorf("%v: kernel %s, want the generic kernel of %v's winner", tt.shape, op.variants[k].name, tt.bucket)
		}
	}
	want := [][]int{{1, 64}, {64, 64}, {65, 64}, {3, 64}, {2, 64}, {4, 64}, {22, 64}, {23, 64}, {24, 64}}
	got := op.rangeShapes()
	for _, s := range want {
		if !slices.ContainsFunc(got, func(g []int) bool { return slices.Equal(g, s) }) {
			t.Errorf("the generated test checks %v, not %v", got, s)
		}
	}
}

// distinctConfigs returns a config of tmpl per shape, each valid at every
// shape and no two alike.
func distinctConfigs(t *testing.T, tmpl kernels.Template, host device.Target, shapes [][]int) []schedule.Config {
	t.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var out []schedule.Config
	for tries := 0; len(out) < len(shapes) && tries < 10000; tries++ {
		c, err := tmpl.Space(shapes[0], host).Sample(r)
		if err != nil {
			t.Fatal(err)
		}
		ok := !slices.ContainsFunc(out, c.Equal)
		for _, s := range shapes {
			ok = ok && tmpl.Space(s, host).Valid(c)
		}
		if ok {
			out = append(out, c)
		}
	}
	if len(out) < len(shapes) {
		t.Fatal("no distinct configs valid at every shape")
	}
	return out
}
