package tune

import (
	"testing"

	"github.com/autotune-dev/autotune/costmodel"
	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/search"
)

// TestShippedModel: the shipped model of softmax's revision 2 loads for
// its feature layout and ranks; another layout or a version with none
// shipped gets nothing, and the shipped strategy then falls back to the
// template's estimate; a Task's Shipped model overrides the shipped one.
func TestShippedModel(t *testing.T) {
	rev := softmax.Template.Earlier[0]
	target := device.Target{Name: "cpu", CPU: &device.CPU{Cores: 2, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true, AVX512: true}}}
	shape := []int{1024, 1024}
	space := rev.Space(shape, target)
	feats := rev.ModelFeatures(space, shape, target)
	n := len(feats(space.At(0)))
	m, ok := shippedModel(rev.Version, n)
	if !ok {
		t.Fatalf("no shipped model of %s with %d features", rev.Version, n)
	}
	// The Xeon's best softmax config (tune/lab/testdata), which the
	// model never saw, against a scalar one with math.Exp.
	var cfgs []schedule.Config
	for _, s := range []string{
		"vec=16,unroll=1,algo=threepass,exp=poly4,threads=2,rows_per_chunk=16",
		"vec=1,unroll=1,algo=online,exp=f64,threads=1,rows_per_chunk=16",
	} {
		c, err := space.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		cfgs = append(cfgs, c)
	}
	if got := (modelEstimate{m, feats}).Estimate(cfgs); got[0] <= got[1] {
		t.Errorf("the shipped model scores the best config %.3f, a scalar one %.3f: want the best higher", got[0], got[1])
	}
	if _, ok := shippedModel(rev.Version, n+1); ok {
		t.Error("a shipped model loaded for another feature layout")
	}
	if _, ok := shippedModel("softmax-0-none", n); ok {
		t.Error("a shipped model of a version none was shipped for")
	}
	// Today's softmax has a model for float32 searches (trained on the
	// search space, where convert is pinned), none for the features of a
	// 16-bit search's space, which the shipped strategy then ranks by the
	// template's estimate; a Task's own model comes first.
	for _, c := range []struct {
		dt   dtype.DType
		want string
	}{{dtype.F32, "model"}, {dtype.BF16, "template"}} {
		task := Task{Template: softmax.Template, Shape: shape, DType: c.dt, Target: target, Space: softmax.Template.SearchSpace(shape, c.dt, target)}
		l := &learner{features: softmax.Template.ModelFeatures(task.Space, shape, target)}
		got := "none"
		switch l.estimate(task, search.Shipped).(type) {
		case modelEstimate:
			got = "model"
		case templateEstimate:
			got = "template"
		}
		if got != c.want {
			t.Errorf("today's softmax, %s: the shipped strategy ranks by the %s estimate, want the %s one", c.dt, got, c.want)
		}
		if l.estimate(task, "") != nil {
			t.Error("a strategy that takes no estimate got one")
		}
		task.Shipped = m
		if e, ok := l.estimate(task, search.Shipped).(modelEstimate); !ok || e.model != costmodel.Model(m) {
			t.Errorf("today's softmax, %s: the shipped strategy does not rank by the Task's model", c.dt)
		}
	}
}
