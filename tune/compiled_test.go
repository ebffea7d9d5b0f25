package tune

import (
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/tunedb"
)

// TestHistoryKnowsCompiledResources: the rows of CUDA records carry the
// registers and local bytes their kernels were given, and a config
// compiled at another shape has them in the features the search scores,
// while one never compiled has them unknown.
func TestHistoryKnowsCompiledResources(t *testing.T) {
	tmpl, ok := kernels.TemplateFor(softmax.Op.Name, kernels.CUDA)
	if !ok {
		t.Fatal("no CUDA template of softmax")
	}
	target, err := device.Lookup("sm_90")
	if err != nil {
		t.Fatal(err)
	}
	db, err := tunedb.Open(filepath.Join(t.TempDir(), "tune.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	recorded, shape := []int{8, 64}, []int{32, 64}
	space := tmpl.Space(recorded, target)
	var cfgs []tunedb.Record
	for i := int64(0); len(cfgs) < 3; i++ {
		c := space.At(i)
		if !space.Valid(c) {
			continue
		}
		r := tunedb.Record{Schema: tunedb.SchemaVersion, Workload: Workload(tmpl, recorded, target), Config: c, Status: tunedb.StatusOK,
			MedianNS: float64(100 + i), Time: time.Unix(1e9+i, 0).UTC(), Tool: "test", Registers: 30 + len(cfgs), LocalBytes: 7 * len(cfgs)}
		cfgs = append(cfgs, r)
	}
	cfgs[2].Registers, cfgs[2].LocalBytes = 0, 0 // measured before registers were recorded
	if err := db.Commit(cfgs); err != nil {
		t.Fatal(err)
	}
	task := Task{Template: tmpl, Shape: shape, Target: target, Space: tmpl.Space(shape, target), Store: db}
	h, err := loadHistory(task, task.Workload())
	if err != nil {
		t.Fatal(err)
	}
	if len(h.rows) != 3 {
		t.Fatalf("%d rows, want 3", len(h.rows))
	}
	// The rows, in the store's order, end with each record's own.
	var got [][]float64
	for _, r := range h.rows {
		got = append(got, r.Features[len(r.Features)-3:])
	}
	want := [][]float64{{0, 0, 0}, {1, 30, 0}, {1, 31, 3}}
	slices.SortFunc(got, slices.Compare)
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("the rows end with %v, want %v", got, want)
	}
	feats := tmpl.ModelFeaturesCompiled(task.Space, shape, target, h.compiled.lookup)
	for i, r := range cfgs {
		got := feats(r.Config)
		if known := got[len(got)-3] == 1; known != (i < 2) || known && got[len(got)-2] != float64(30+i) {
			t.Errorf("config %s at %v: features end with %v; want its registers from %v when it had them", r.Config, shape, got[len(got)-3:], recorded)
		}
	}
}
