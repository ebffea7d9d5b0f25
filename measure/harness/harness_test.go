package harness

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	tests := []struct {
		name string
		out  []float32
		want []float64
		bad  string // substring of the message; "" for none
	}{
		{"exact", []float32{1, 2}, []float64{1, 2}, ""},
		{"within tolerance", []float32{1.001, 100.01}, []float64{1, 100}, ""},
		{"outside", []float32{1, 2.5}, []float64{1, 2}, "out[1] = 2.5, want 2"},
		{"counts", []float32{9, 2, 9}, []float64{1, 2, 3}, "2 of 3 outputs wrong"},
		{"poison left", []float32{float32(nan)}, []float64{1}, "out[0] = NaN"},
		{"NaN wanted", []float32{float32(nan)}, []float64{nan}, ""},
		{"NaN wanted, number got", []float32{1}, []float64{nan}, "want NaN"},
		{"same infinity", []float32{float32(inf)}, []float64{inf}, ""},
		{"other infinity", []float32{float32(-inf)}, []float64{inf}, "want +Inf"},
		{"infinity for a number", []float32{float32(inf)}, []float64{1e30}, "out[0] = +Inf"},
		{"number for an infinity", []float32{3e38}, []float64{inf}, "want +Inf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Check(tt.out, tt.want, 1e-3, 1e-6)
			if tt.bad == "" && got != "" || tt.bad != "" && !strings.Contains(got, tt.bad) {
				t.Errorf("Check = %q, want %q", got, tt.bad)
			}
		})
	}
}

func TestPoisonAndChanged(t *testing.T) {
	out := []float32{1, 2, 3}
	Poison(out)
	for i, v := range out {
		if !math.IsNaN(float64(v)) {
			t.Errorf("out[%d] = %g after Poison", i, v)
		}
	}
	ins := [][]float32{{1, 2}, {3, float32(math.NaN())}}
	pristine := [][]float32{slices.Clone(ins[0]), slices.Clone(ins[1])}
	if msg := Changed(ins, pristine); msg != "" {
		t.Errorf("Changed of equal inputs (a NaN included) = %q", msg)
	}
	ins[1][0] = 4
	if msg := Changed(ins, pristine); !strings.Contains(msg, "input 1: in1[0] = 4, was 3") {
		t.Errorf("Changed = %q", msg)
	}
}

// Write and Read round-trip a workload of two sets bit for bit, and Read
// refuses files of the wrong size.
func TestData(t *testing.T) {
	dir := t.TempDir()
	w := Workload{Inputs: []int{3, 1}, Output: 2, Sets: []SetInfo{{Name: "uniform", Rel: 1e-5, Abs: 1e-7}, {Name: "large", Rel: 1e-5, Abs: 1e-3}}}
	sets := []Set{
		{SetInfo: w.Sets[0], Ins: [][]float32{{1, -2, 3}, {0.5}}, Want: []float64{1.5, math.Inf(-1)}},
		{SetInfo: w.Sets[1], Ins: [][]float32{{100, 200, float32(math.Inf(-1))}, {-4}}, Want: []float64{math.NaN(), 7}},
	}
	if err := Write(dir, w, sets); err != nil {
		t.Fatal(err)
	}
	gw, got, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gw.Inputs, w.Inputs) || gw.Output != w.Output || !slices.Equal(gw.Sets, w.Sets) {
		t.Errorf("workload %+v, want %+v", gw, w)
	}
	// A workload file that names no dtype (a parent before files named
	// one) is f32; one that names it keeps it.
	if gw.DType != DefaultDType {
		t.Errorf("dtype of a workload that names none: %q, want %q", gw.DType, DefaultDType)
	}
	named := w
	named.DType = "x16"
	if err := Write(dir, named, sets); err != nil {
		t.Fatal(err)
	}
	if gw, _, err := Read(dir); err != nil || gw.DType != "x16" {
		t.Errorf("Read of a workload of dtype x16 = %q, %v", gw.DType, err)
	}
	for s := range sets {
		if got[s].SetInfo != sets[s].SetInfo || Changed(got[s].Ins, sets[s].Ins) != "" || Check(float32s(got[s].Want), sets[s].Want, 0, 0) != "" {
			t.Errorf("set %d: %+v, want %+v", s, got[s], sets[s])
		}
	}
	// The files hold little-endian numbers whatever the machine, and Read
	// refuses one of the wrong size.
	raw, err := os.ReadFile(inputFile(dir, 1, 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 12 || binary.LittleEndian.Uint32(raw[4:]) != math.Float32bits(200) {
		t.Errorf("in0.f32 of set 1: % x, want 100, 200, -Inf as little-endian float32", raw)
	}
	if err := os.WriteFile(wantFile(dir, 1), raw[:15], 0o644); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Read(dir); err == nil || !strings.Contains(err.Error(), "15 bytes, want 16") {
		t.Errorf("Read of a truncated want.f64: %v, want its size named", err)
	}
	if err := Write(dir, w, sets[:1]); err == nil {
		t.Error("Write of fewer sets than the workload names: no error")
	}
	w.Inputs[0] = 4
	if err := Write(t.TempDir(), w, sets); err == nil {
		t.Error("Write of an input of the wrong length: no error")
	}
	if err := Write(dir, Workload{Inputs: []int{4, 1}, Output: 2, Sets: w.Sets}, sets); err == nil {
		t.Error("Write did not check the lengths")
	}
}

func float32s(xs []float64) []float32 {
	out := make([]float32, len(xs))
	for i, x := range xs {
		out[i] = float32(x)
	}
	return out
}

func TestSequence(t *testing.T) {
	ok := Event{ID: 3, Event: Result, Status: StatusOK, SamplesNS: []float64{1}}
	tests := []struct {
		name   string
		events []Event
		bad    int // index of the first event out of order; -1 for none
	}{
		{"tuning", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, ok, {ID: 5, Event: Start},
			{ID: 5, Event: Result, Status: StatusCrash, Error: "panic"}, {ID: -1, Event: Done}}, -1},
		{"bench", []Event{{ID: -1, Event: Ready}, {ID: 0, Event: Start}, {ID: 0, Event: Result, Status: StatusOK, Reps: 2},
			{ID: -1, Event: Round, SamplesNS: []float64{1}}, {ID: -1, Event: Done}}, -1},
		{"checked", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 3, Event: Checked, CallNS: 1e6, Calls: 15}, ok,
			{ID: 5, Event: Start}, {ID: 5, Event: Checked, CallNS: 2, Calls: 1}, {ID: 5, Event: Result, Status: StatusOK, SamplesNS: []float64{1}},
			{ID: -1, Event: Done}}, -1},
		{"checked twice", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 3, Event: Checked, CallNS: 1, Calls: 1},
			{ID: 3, Event: Checked, CallNS: 1, Calls: 1}}, 3},
		{"checked of another", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 4, Event: Checked, CallNS: 1, Calls: 1}}, 2},
		{"checked without a time", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 3, Event: Checked, Calls: 1}}, 2},
		{"checked outside a kernel", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Checked, CallNS: 1, Calls: 1}}, 1},
		{"start before ready", []Event{{ID: 3, Event: Start}}, 0},
		{"result of another", []Event{{ID: -1, Event: Ready}, {ID: 2, Event: Start}, ok}, 2},
		{"ok without samples", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 3, Event: Result, Status: StatusOK}}, 2},
		{"unknown status", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 3, Event: Result, Status: "fine"}}, 2},
		{"two starts", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: 4, Event: Start}}, 2},
		{"done while running", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: -1, Event: Done}}, 2},
		{"after done", []Event{{ID: -1, Event: Ready}, {ID: -1, Event: Done}, {ID: 1, Event: Start}}, 2},
		{"round while running", []Event{{ID: -1, Event: Ready}, {ID: 3, Event: Start}, {ID: -1, Event: Round, SamplesNS: []float64{1}}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Sequence
			for i, e := range tt.events {
				err := s.Next(e)
				if (err != nil) != (i == tt.bad) {
					t.Fatalf("event %d (%+v): %v", i, e, err)
				}
				if err != nil {
					return
				}
			}
			if tt.bad >= 0 {
				t.Fatal("no event out of order")
			}
			if !s.Done() {
				t.Error("not done")
			}
		})
	}
}

// A line is an event when it decodes as one; Send writes one line.
func TestSendDecode(t *testing.T) {
	var buf bytes.Buffer
	e := Event{ID: 7, Event: Result, Status: StatusOK, Reps: 4, SamplesNS: []float64{812.5}, AllocBytes: 64, Allocs: 1}
	if err := (Sender{&buf}).Send(e); err != nil {
		t.Fatal(err)
	}
	line, ok := bytes.CutSuffix(buf.Bytes(), []byte("\n"))
	if !ok || bytes.Contains(line, []byte("\n")) {
		t.Fatalf("Send wrote %q, want one line", buf.Bytes())
	}
	got, ok := Decode(line)
	if !ok || got.ID != 7 || got.Reps != 4 || !slices.Equal(got.SamplesNS, e.SamplesNS) || got.AllocBytes != 64 {
		t.Errorf("Decode = %+v, %v", got, ok)
	}
	for _, stray := range []string{"a kernel printed this", "{}", `{"id":3}`, "[1,2]"} {
		if _, ok := Decode([]byte(stray)); ok {
			t.Errorf("Decode(%q) is an event", stray)
		}
	}
}

func TestFilesAndRelocate(t *testing.T) {
	files := Files()
	for _, name := range []string{"check.go", "data.go", "doc.go", "event.go", "source.go"} {
		if !bytes.HasPrefix(files[name], []byte("package harness")) && !bytes.Contains(files[name], []byte("\npackage harness\n")) {
			t.Errorf("Files lacks %s", name)
		}
	}
	for name := range files {
		if strings.HasSuffix(name, "_test.go") {
			t.Errorf("Files holds the test %s", name)
		}
	}
	src := []byte("import (\n\t\"fmt\"\n\t\"" + ImportPath + "\"\n)\n")
	got := string(Relocate(src, "github.com/autotune-dev/autotune/measure/", "autotuneharness/"))
	if !strings.Contains(got, "\"autotuneharness/harness\"") || strings.Contains(got, "github.com") || !strings.Contains(got, "\"fmt\"") {
		t.Errorf("Relocate: %s", got)
	}
}
