package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDoctor(t *testing.T) {
	for _, bad := range []string{"0s", "-1s", "2m", "soon"} {
		if code, _, errs := run(t, "", "doctor", "--window", bad); code != 2 {
			t.Errorf("--window %s: exit %d, %q; want a usage error", bad, code, errs)
		}
	}
	code, out, errs := run(t, "", "doctor", "--window", "20ms", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var d doctorJSON
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if d.Cores < 1 || d.PeakRuns < 10 || !(d.PeakSteadiness > 0 && d.PeakSteadiness <= 1) || d.Processes == nil ||
		!(strings.HasPrefix(d.Verdict, "quiet") || strings.HasPrefix(d.Verdict, "busy")) {
		t.Errorf("doctor --json: %+v", d)
	}
	code, out, _ = run(t, "", "doctor", "--window", "20ms")
	if code != 0 || !strings.Contains(out, "peak loop") || !strings.Contains(out, "verdict") {
		t.Errorf("doctor: exit %d, %q", code, out)
	}

	for _, bad := range []string{"-1", "10001", "many"} {
		if code, _, errs := run(t, "", "doctor", "--window", "20ms", "--samples", bad); code != 2 {
			t.Errorf("--samples %s: exit %d, %q; want a usage error", bad, code, errs)
		}
	}
	code, out, errs = run(t, "", "doctor", "--window", "20ms", "--samples", "3", "--json")
	if code != 0 {
		t.Fatalf("--samples: exit %d: %s", code, errs)
	}
	d = doctorJSON{}
	if err := json.Unmarshal([]byte(out), &d); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(d.Evidence) < 3 {
		t.Fatalf("--samples 3: %d sets, want one per length and goroutine count", len(d.Evidence))
	}
	for _, s := range d.Evidence {
		if len(s.Samples) != 3 || len(s.StealNS) != 3 || s.Goroutines < 1 || s.Samples[0].Wall <= 0 {
			t.Errorf("--samples 3: set %+v", s)
		}
	}
	code, out, _ = run(t, "", "doctor", "--window", "20ms", "--samples", "2")
	if code != 0 || !strings.Contains(out, "lost p50") || !strings.Contains(out, "disturbed") {
		t.Errorf("doctor --samples: exit %d, %q", code, out)
	}
}
