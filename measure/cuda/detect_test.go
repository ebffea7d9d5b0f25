package cuda

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// The fake driver of package driver's tests reports one sm_86 GPU.
func TestDetect(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the binding loads libraries on Linux only")
	}
	cc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("no C compiler to build the fake libcuda")
	}
	lib := filepath.Join(t.TempDir(), "libcuda.so.1")
	if out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-o", lib, filepath.Join("driver", "testdata", "fakecuda.c")).CombinedOutput(); err != nil {
		t.Fatalf("building the fake libcuda: %v\n%s", err, out)
	}
	tg, err := Detect(lib)
	if err != nil {
		t.Fatal(err)
	}
	if tg.Name != "sm_86" || tg.GPU.Name != "Fake GPU 9000" || tg.GPU.Driver != "13.0" || tg.GPU.MaxThreadsPerBlock != 1024 {
		t.Errorf("Detect = %+v, %+v", tg, *tg.GPU)
	}
	if fp := tg.Fingerprint(); fp != "cuda/sm_86/Fake GPU 9000/13.0" {
		t.Errorf("fingerprint %q", fp)
	}
	if _, err := Detect(filepath.Join(t.TempDir(), "missing.so")); err == nil || !strings.Contains(err.Error(), "missing.so") {
		t.Errorf("Detect of a missing library: %v", err)
	}
}
