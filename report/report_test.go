package report

import (
	"bytes"
	"encoding/xml"
	"flag"
	"fmt"
	htmltemplate "html/template"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels"
	_ "github.com/autotune-dev/autotune/kernels/all"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tunedb"
)

// fixture is a generated tuning history of one workload: runs of batches
// with equal build shares, a re-measurement of the leaders at the end of
// each run, a few failures, and latencies that depend on the config, so
// that a model can learn them.
type fixture struct {
	op     string
	shape  []int
	runs   int // tuning runs
	trials int // per run, in batches of 16
	start  time.Time
}

func (f fixture) workload(t testing.TB) (tunedb.Workload, kernels.Template, *schedule.Space) {
	t.Helper()
	host := testCPU
	tmpl, ok := kernels.TemplateFor(f.op, kernels.CPU)
	if !ok {
		t.Fatalf("no CPU template of %s", f.op)
	}
	w := tunedb.Workload{Op: f.op, Shape: f.shape, DType: "f32", Device: host.Fingerprint(), Template: tmpl.Version}
	return w, tmpl, tmpl.Space(f.shape, host)
}

// testCPU is the machine of the fixtures' records: a CPU with AVX2 and FMA,
// whatever the test runs on, so that every fixture's space has as many
// distinct valid configs as its trials (a CPU without AVX2 has fewer
// softmax configs than two runs of 64 trials).
var testCPU = device.Target{Name: "cpu", CPU: &device.CPU{Model: "Test CPU", Cores: 2, ISA: device.ISA{SSE42: true, AVX2: true, FMA: true}}}

func (f fixture) records(t testing.TB) []tunedb.Record {
	w, tmpl, space := f.workload(t)
	r := rand.New(rand.NewPCG(uint64(len(f.shape)), 9))
	seen := map[string]bool{}
	at := f.start
	var recs []tunedb.Record
	for run := range f.runs {
		var mine []tunedb.Record
		for b := 0; b < f.trials; b += 16 {
			build := int64(2e9 + r.IntN(1e9))
			at = at.Add(time.Duration(16 * build)) // the batch's build
			for range min(16, f.trials-b) {
				var c schedule.Config
				for {
					var err error
					if c, err = space.Sample(r); err != nil {
						t.Fatal(err)
					}
					if !seen[c.String()] {
						break
					}
				}
				seen[c.String()] = true
				rec := tunedb.Record{Workload: w, Config: c, Status: tunedb.StatusOK, BuildNS: build,
					RunNS: int64(1e8 + r.IntN(1e8)), Tool: fmt.Sprintf("autotune v0.%d", run+1)}
				switch k := r.IntN(20); {
				case k == 0:
					rec.Status, rec.Error = tunedb.StatusBuildError, "does not build"
				case k == 1:
					rec.Status, rec.Error = tunedb.StatusTimeout, "too slow"
				default:
					m := cost(space, c, tmpl.FLOPs(f.shape)/50) * (1 + 0.02*r.Float64()) // about 50 GFLOP/s
					rec.SamplesNS = []float64{m * 0.98, m, m * 1.03}
					rec.MedianNS, rec.P20NS, rec.P80NS = measure.Summarize(rec.SamplesNS)
				}
				at = at.Add(time.Duration(rec.RunNS))
				rec.Time = at
				mine = append(mine, rec)
			}
		}
		// The leaders, measured again with one pooled record each.
		top := leaders(mine, 3)
		at = at.Add(time.Second)
		for i, l := range top {
			l.Time, l.BuildNS = at.Add(time.Duration(i)), 3*l.BuildNS
			mine = append(mine, l)
		}
		recs = append(recs, mine...)
		at = at.Add(3 * time.Second) // the next run starts at once
	}
	return recs
}

// cost is a latency landscape around base: each feature of the config
// pulls it one way.
func cost(space *schedule.Space, c schedule.Config, base float64) float64 {
	s := 0.0
	for i, x := range space.Features(c) {
		s += math.Sin(float64(i)+1) * x
	}
	return base * math.Exp(0.3*s/float64(len(space.Knobs())))
}

func leaders(recs []tunedb.Record, k int) []tunedb.Record {
	var ok []tunedb.Record
	for _, r := range recs {
		if r.Status == tunedb.StatusOK {
			ok = append(ok, r)
		}
	}
	for i := range ok {
		for j := i; j > 0 && ok[j].MedianNS < ok[j-1].MedianNS; j-- {
			ok[j], ok[j-1] = ok[j-1], ok[j]
		}
	}
	return ok[:min(k, len(ok))]
}

func newStore(t testing.TB, fs ...fixture) *tunedb.Memory {
	t.Helper()
	db := tunedb.NewMemory()
	for _, f := range fs {
		if err := db.Commit(f.records(t)); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func writeReport(t testing.TB, db *tunedb.Memory, opts *Options) (string, []tunedb.Summary) {
	t.Helper()
	sums, err := db.Workloads()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := Write(&buf, db, sums, opts); err != nil {
		t.Fatal(err)
	}
	return buf.String(), sums
}

// pageOut keeps the page of TestPageStructure, to look at.
var pageOut = flag.String("page", "", "write the page of TestPageStructure to this file")

var (
	softmaxFixture = fixture{op: "softmax", shape: []int{256, 1024}, runs: 2, trials: 64, start: time.Date(2025, 3, 1, 14, 0, 0, 0, time.UTC)}
	gemmFixture    = fixture{op: "gemm", shape: []int{256, 256, 256}, runs: 1, trials: 48, start: time.Date(2025, 3, 2, 9, 0, 0, 0, time.UTC)}
)

// TestPageStructure writes a report of two workloads and checks that it
// is well-formed, has every section, and shows the numbers best shows.
func TestPageStructure(t *testing.T) {
	db := newStore(t, softmaxFixture, gemmFixture)
	host := testCPU.Fingerprint()
	page, sums := writeReport(t, db, &Options{Limits: map[string]Limits{host: {PeakGFLOPs: 200, GBps: 40, Source: "given by the test"}}})

	if *pageOut != "" {
		if err := os.WriteFile(*pageOut, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ids := wellFormed(t, page)
	want := []string{"summary"}
	for i := range sums {
		for _, part := range []string{"", "-curves", "-latency", "-time", "-roofline", "-top", "-model"} {
			want = append(want, fmt.Sprintf("w%d%s", i+1, part))
		}
	}
	for _, id := range want {
		if !ids[id] {
			t.Errorf("no element with id %q", id)
		}
	}
	if n := strings.Count(page, "<svg "); n != 2*6 {
		t.Errorf("%d charts, want 6 per workload (2 curves, latency, batches, roofline, model)", n)
	}
	for _, s := range sums {
		best, ok, err := db.Best(s.Workload)
		if err != nil || !ok {
			t.Fatalf("Best: %v %v", ok, err)
		}
		for _, want := range []string{
			`<span class="best-median">` + tunedb.FormatNS(best.MedianNS) + `</span>`,
			fmt.Sprintf("(p20 %s, p80 %s, %d samples)", tunedb.FormatNS(best.P20NS), tunedb.FormatNS(best.P80NS), len(best.SamplesNS)),
			`<code class="best-config">` + htmltemplate.HTMLEscapeString(best.Config.String()) + `</code>`,
			fmt.Sprintf("<td class=\"n\">%d</td><td class=\"n\">%d</td>", s.Records, s.ByStatus[tunedb.StatusOK]),
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", s.Workload.Op, want)
			}
		}
		for _, st := range []tunedb.Status{tunedb.StatusBuildError, tunedb.StatusTimeout} {
			if n := s.ByStatus[st]; n > 0 && !strings.Contains(page, fmt.Sprintf("<td>%s</td><td class=\"n\">%d</td>", st, n)) {
				t.Errorf("%s: the page does not count %d %s", s.Workload.Op, n, st)
			}
		}
	}
	if !strings.Contains(page, "2 tuning run(s)") {
		t.Errorf("the softmax history has 2 runs; the page does not say so")
	}
	if !regexp.MustCompile(`Kendall τ <span class="tau">-?[0-9.]+</span>`).MatchString(page) {
		t.Errorf("no Kendall τ on the page")
	}
	selfContained(t, page)
}

// wellFormed parses the page as XML, which it is written to be, checks that
// each SVG is inside the body, and returns the ids of its elements.
func wellFormed(t *testing.T, page string) map[string]bool {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	ids := map[string]bool{}
	var stack []string
	svgs := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("the page is not well-formed: %v", err)
		}
		switch el := tok.(type) {
		case xml.StartElement:
			if el.Name.Local == "svg" {
				svgs++
				if len(stack) < 2 || stack[1] != "body" {
					t.Errorf("an svg outside the body: %v", stack)
				}
			}
			stack = append(stack, el.Name.Local)
			for _, a := range el.Attr {
				if a.Name.Local == "id" {
					if ids[a.Value] {
						t.Errorf("id %q twice", a.Value)
					}
					ids[a.Value] = true
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) != 0 {
		t.Errorf("unclosed elements %v", stack)
	}
	return ids
}

// selfContained fails when the page refers to anything outside itself.
func selfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"http:", "https:", "src=", "<script", "<link", "url(", "@import", "xlink:href"} {
		if i := strings.Index(page, bad); i >= 0 {
			t.Errorf("the page refers outside itself: %q at %q", bad, page[max(0, i-40):min(len(page), i+40)])
		}
	}
}

// TestLargeDatabase checks the size bound of the package doc on 10,000
// records.
func TestLargeDatabase(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a report of 10,000 records")
	}
	f := fixture{op: "gemm", shape: []int{1024, 1024, 1024}, runs: 4, trials: 2500, start: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}
	db := newStore(t, f)
	start := time.Now()
	page, sums := writeReport(t, db, nil)
	t.Logf("%d records: %d bytes in %v", sums[0].Records, len(page), time.Since(start))
	if sums[0].Records < 10000 {
		t.Fatalf("%d records, want 10,000", sums[0].Records)
	}
	if len(page) > 3<<20 {
		t.Errorf("the page is %d bytes, over 3 MiB", len(page))
	}
	wellFormed(t, page)
}

// TestRanges: the page's table of shape ranges shows each range's
// buckets and the median and largest regret of its held-out shapes.
func TestRanges(t *testing.T) {
	db := newStore(t, softmaxFixture)
	lo := tunedb.Workload{Op: "softmax", Shape: []int{1, 1024}, DType: "f32", Device: testCPU.Fingerprint(), Template: "t"}
	r := tunedb.Range{Workload: lo, Hi: []int{256, 1024}, Buckets: [][]int{{1, 1024}, {16, 1024}, {256, 1024}}, Trials: 90,
		HeldOut: []tunedb.HeldOut{
			{Shape: []int{4, 1024}, Nearest: []int{1, 1024}, Regret: 0.02},
			{Shape: []int{64, 1024}, Nearest: []int{16, 1024}, Regret: 0.1},
			{Shape: []int{128, 1024}, Nearest: []int{256, 1024}, Regret: math.Inf(1)},
		}}
	page, _ := writeReport(t, db, &Options{Ranges: []tunedb.Range{r}})
	if ids := wellFormed(t, page); !ids["ranges"] {
		t.Error("no shape ranges section")
	}
	// The device cell is escaped by html/template; the rest of the row is
	// as written.
	for _, want := range []string{`<tr><td>softmax f32</td><td>1..256x1024</td><td class="dev">`,
		`</td><td>1x1024, 16x1024, 256x1024</td><td class="n">3</td><td class="n">10.0%</td><td class="n">inf</td><td class="n">90</td></tr>`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page has no row with\n%s", want)
		}
	}
	if page, _ := writeReport(t, db, nil); strings.Contains(page, `id="ranges"`) {
		t.Error("a shape ranges section without ranges")
	}
}
