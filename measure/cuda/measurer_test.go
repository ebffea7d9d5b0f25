package cuda

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/cuda/driver"
	"github.com/autotune-dev/autotune/schedule"
)

func target(t *testing.T, arch string) device.Target {
	t.Helper()
	tg, err := device.Lookup(arch)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}

func TestNewWithoutDriver(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "libcuda.so.1")
	_, err := New(&Options{DriverPath: missing}, target(t, "sm_86"))
	if !errors.Is(err, driver.ErrNoDriver) {
		t.Fatalf("New without a driver = %v, want ErrNoDriver", err)
	}
	for _, want := range []string{"libcuda.so.1", "sm_86", "--device cpu"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if _, err := New(nil, device.Host()); err == nil {
		t.Error("New for the CPU succeeded")
	}
}

// fakeMeasurer returns a Measurer whose workers are this test binary
// acting out script (see fakeWorker).
func fakeMeasurer(t *testing.T, script string) *Measurer {
	m := &Measurer{
		opts:   (&Options{Timeout: 2 * time.Second, Command: []string{os.Args[0], fakeWorkerArg, script}}).withDefaults(),
		target: target(t, "sm_90"),
	}
	m.start = m.startChild
	return m
}

// batch returns n valid configs of softmax's CUDA template for 8x64.
func batch(t *testing.T, n int) measure.Batch {
	tmpl, ok := kernels.TemplateFor(softmax.Op.Name, kernels.CUDA)
	if !ok {
		t.Fatal("no CUDA template of softmax")
	}
	b := measure.Batch{Template: tmpl, Shape: []int{8, 64}, Target: target(t, "sm_90")}
	sp := tmpl.Space(b.Shape, b.Target)
	for i := int64(0); len(b.Configs) < n; i++ {
		if c := sp.At(i); sp.Valid(c) {
			b.Configs = append(b.Configs, c)
		}
	}
	return b
}

// TestWorkerFailuresCostOneCandidate runs batches through scripted workers
// that crash, hang or poison their context, and checks that each such
// candidate gets its status and every other one its result.
func TestWorkerFailuresCostOneCandidate(t *testing.T) {
	script := "ok,crash,ok,hang,build,sticky,wrong,ok"
	m := fakeMeasurer(t, script)
	b := batch(t, 8)
	res, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	want := []measure.Status{"ok", "crash", "ok", "timeout", "build_error", "runtime_error", "wrong_answer", "ok"}
	if len(res) != len(want) {
		t.Fatalf("%d results, want %d", len(res), len(want))
	}
	for i, r := range res {
		if r.Status != want[i] || !r.Config.Equal(b.Configs[i]) {
			t.Errorf("result %d: %s for %s, want %s for %s (%s)", i, r.Status, r.Config, want[i], b.Configs[i], r.Error)
		}
	}
	if !strings.Contains(res[1].Error, "segmentation violation") {
		t.Errorf("the crash's error %q lacks the worker's stderr", res[1].Error)
	}
	if ok := res[0]; ok.MedianNS != 2 || ok.P20NS == 0 || ok.BuildNS != 7 || ok.RunNS != 11 || ok.Registers != 40 || ok.LocalBytes != 16 {
		t.Errorf("ok result %+v: want median 2 of samples 3,1,2 and the worker's build and run times, registers and local memory", ok)
	}
}

func TestWorkerFatalIsAnError(t *testing.T) {
	m := fakeMeasurer(t, "fatal")
	_, err := m.Measure(context.Background(), batch(t, 1))
	if err == nil || !strings.Contains(err.Error(), "no GPU today") {
		t.Errorf("a fatal worker gave %v, want its message as an error", err)
	}
}

func TestInvalidConfigsAreNotRun(t *testing.T) {
	m := fakeMeasurer(t, "ok")
	b := batch(t, 1)
	bad, err := schedule.ParseConfig("tpr=1024,rows_per_block=8,vec=1,keep=global,algo=online,exp=fast")
	if err != nil {
		t.Fatal(err)
	}
	b.Configs = append(b.Configs, bad)
	res, err := m.Measure(context.Background(), b)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].Status != measure.StatusOK || res[1].Status != measure.StatusInvalid {
		t.Errorf("statuses %s, %s; want ok, invalid", res[0].Status, res[1].Status)
	}
}

// TestMeasureStopsBeforeTheReference: a batch whose context is done gives
// up at once rather than compute the float64 reference first, which for a
// large workload takes minutes, and caches nothing half-made.
func TestMeasureStopsBeforeTheReference(t *testing.T) {
	m := fakeMeasurer(t, "ok")
	b := batch(t, 1)
	b.Shape = []int{1024, 4096}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := m.Measure(ctx, b); !errors.Is(err, context.Canceled) || m.key != "" {
		t.Errorf("a cancelled batch: %v, data cached for %q; want context.Canceled and nothing cached", err, m.key)
	}
}
