package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/autotune-dev/autotune/tunedb"
)

// TestReportShowsWhatBestPrints writes the report of a seeded database and
// finds in it the median, spread, config and record counts that best and
// db ls print for the same database.
func TestReportShowsWhatBestPrints(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "tune.db")
	seed(t, path)
	code, stdout, stderr := run(t, "", "best", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "cpu", "--json")
	if code != 0 {
		t.Fatalf("best: exit %d, %s", code, stderr)
	}
	var best bestJSON
	if err := json.Unmarshal([]byte(stdout), &best); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = run(t, "", "db", "ls", "--db", path, "--json")
	if code != 0 {
		t.Fatalf("db ls: exit %d, %s", code, stderr)
	}
	var ls []struct {
		Records  int                   `json:"records"`
		ByStatus map[tunedb.Status]int `json:"by_status"`
	}
	if err := json.Unmarshal([]byte(stdout), &ls); err != nil || len(ls) != 1 {
		t.Fatalf("db ls --json: %v, %d workloads", err, len(ls))
	}

	out := filepath.Join(dir, "report.html")
	code, stdout, stderr = run(t, "", "report", "--db", path, "--out", out)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "wrote "+out+": 1 workloads") {
		t.Fatalf("report: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	b2 := best.Best
	for _, want := range []string{
		`<span class="best-median">` + tunedb.FormatNS(b2.MedianNS) + `</span>`,
		"(p20 " + tunedb.FormatNS(b2.P20NS) + ", p80 " + tunedb.FormatNS(b2.P80NS) + ", 3 samples)",
		`<code class="best-config">` + b2.Config.String() + `</code>`,
		fmt.Sprintf("%d in 1 tuning run(s): %d ok", ls[0].Records, ls[0].ByStatus[tunedb.StatusOK]),
		`id="w1-roofline"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	if !strings.Contains(page, "measured by autotune report on this machine") {
		t.Errorf("the report of a workload of this machine has no measured roofline")
	}
	// To stdout, the same page but for its date.
	code, stdout, _ = run(t, "", "report", "--db", path, "--op", "softmax", "--shape", "64x33", "--device", "cpu")
	if code != 0 || !strings.Contains(stdout, `<span class="best-median">`+tunedb.FormatNS(b2.MedianNS)) {
		t.Errorf("report to stdout: exit %d, no best median in %d bytes", code, len(stdout))
	}
	// A workload that is not there.
	code, _, stderr = run(t, "", "report", "--db", path, "--op", "softmax", "--shape", "64x34", "--device", "cpu")
	if code != 1 || !strings.Contains(stderr, "no workload in") {
		t.Errorf("report of an absent workload: exit %d, %q; want 1 saying no workload matches", code, stderr)
	}
}

func TestReportUsageErrors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tune.db")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--all", "--op", "softmax", "--shape", "4x4"}, "--all reports every workload"},
		{[]string{"report", "--op", "softmax"}, "--shape is required"},
		{[]string{"report", "--shape", "4x4"}, "--op is required"},
		{[]string{"report", "--all", "--device", "sm_99"}, `unknown device "sm_99"`},
		{[]string{"report", "stray"}, `unexpected argument "stray"`},
	} {
		code, stdout, stderr := run(t, "", append(tc.args, "--db", path)...)
		if code != 2 || stdout != "" || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line with %q", tc.args, code, stdout, stderr, tc.want)
		}
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("a usage error created the database")
	}
}

// TestWriteFileKeepsTheOldOne: a page whose writing fails halfway (a full
// disk, a kill) never replaces the one before it, and leaves nothing else.
func TestWriteFileKeepsTheOldOne(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte("old page"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := writeFile(path, func(w io.Writer) error {
		io.WriteString(w, "half a new pa")
		return errors.New("disk full")
	})
	entries, _ := os.ReadDir(dir)
	if got, _ := os.ReadFile(path); err == nil || string(got) != "old page" || len(entries) != 1 {
		t.Errorf("writeFile failing halfway: error %v, page %q, %d files; want an error and the old page alone", err, got, len(entries))
	}
}
