package gocuda

import (
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/gen"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestPlanRanges: a tuned range's buckets get the generic kernel of their
// winner, however many generic variants rank, and the arch's plan holds
// the range with those kernels.
func TestPlanRanges(t *testing.T) {
	target, err := device.Lookup("sm_86")
	if err != nil {
		t.Fatal(err)
	}
	tmpl := softmax.CUDATemplate
	fp := "cuda/sm_86/Fake GPU 9000/13000"
	mem := tunedb.NewMemory()
	var recs []tunedb.Record
	shapes := [][]int{{1, 1023}, {8, 1023}, {64, 1023}}
	for i, c := range []string{
		"tpr=64,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast",
		"tpr=32,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast",
		"tpr=128,rows_per_block=1,vec=4,keep=global,algo=online,exp=fast",
	} {
		cfg, err := tmpl.Space(shapes[i], target).Parse(c)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, tunedb.Record{Schema: tunedb.SchemaVersion, Config: cfg, Status: tunedb.StatusOK, MedianNS: 1000,
			Time: time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC), Tool: "test",
			Workload: tunedb.Workload{Op: "softmax", Shape: shapes[i], DType: dtype.F32, Device: fp, Template: tmpl.Version}})
	}
	if err := mem.Commit(recs); err != nil {
		t.Fatal(err)
	}
	if err := mem.SaveRange(tunedb.Range{Workload: recs[0].Workload, Hi: []int{64, 1023}, Buckets: shapes, Time: recs[0].Time}); err != nil {
		t.Fatal(err)
	}
	sums, _ := mem.Workloads()
	rs, _ := mem.Ranges()
	match := func(f string) bool { return f == fp }
	sel, err := gen.Select(sums, tmpl, dtype.F32, target, match, 1)
	if err != nil {
		t.Fatal(err)
	}
	sel.AddRanges(rs, tmpl, dtype.F32, match)
	var ks []planned
	ap := planArch(&ks, tmpl, "sm_86", sel)
	if len(ap.ranges) != 1 || len(ap.ranges[0].buckets) != 3 {
		t.Fatalf("ranges %+v, want one with 3 buckets", ap.ranges)
	}
	for i, b := range ap.ranges[0].buckets {
		if !slices.Equal(b.shape, shapes[i]) || b.near < 0 || ks[b.near].kind != kindGeneric || !ks[b.near].cfg.Equal(recs[i].Config) {
			t.Errorf("bucket %v: near %d, want the generic kernel of its winner", b.shape, b.near)
		}
	}
}
