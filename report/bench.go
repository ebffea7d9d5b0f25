package report

import (
	"fmt"
	"html/template"
	"io"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/autotune-dev/autotune/tunedb"
)

// Bench is the result of autotune bench, as it prints it: one row per
// entry, the tuned kernel first.
type Bench struct {
	Workload string // "softmax 4096x1024 f32"
	Machine  string
	ISA      string // the ISA level every side ran at, and how it was limited
	Tuned    string // the tuned config
	Samples  int    // of each entry
	Rows     []BenchRow
	// PeakGFLOPs is bench's peak (measurecpu.PeakGFLOPs), 0 when none;
	// FloorGBps the floor entry's GB/s, 0 when none. Both are drawn as
	// limits on the charts.
	PeakGFLOPs, FloorGBps float64
	Notes                 []string // bench's closing lines
}

// BenchRow is one entry of a bench, with the figures bench computed.
type BenchRow struct {
	Name, Doc              string
	MedianNS, P20NS, P80NS float64
	GBps, GFLOPs, VsTuned  float64
	NoGBps, NoGFLOPs       bool // the peak moves no memory, the floor computes nothing
}

// WriteBench writes a bench as a self-contained HTML page: its table and
// bar charts of each entry's median time, GFLOP/s against the peak and
// GB/s against the floor.
func WriteBench(w io.Writer, b Bench) error {
	pg := benchPage{Bench: b}
	for _, r := range b.Rows {
		row := benchRowText{Name: r.Name, Doc: r.Doc, Median: tunedb.FormatNS(r.MedianNS),
			Spread: tunedb.FormatNS(r.P20NS) + " – " + tunedb.FormatNS(r.P80NS),
			GBps:   fmt.Sprintf("%.1f", r.GBps), GFLOPs: fmt.Sprintf("%.1f", r.GFLOPs), VsTuned: fmt.Sprintf("%.2f", r.VsTuned)}
		if r.NoGBps {
			row.GBps = "-"
		}
		if r.NoGFLOPs {
			row.GFLOPs = "-"
		}
		pg.Rows = append(pg.Rows, row)
	}
	var err error
	if pg.Time, err = benchBars(b.Rows, "median time per call", "µs", func(r BenchRow) (float64, bool) { return r.MedianNS / 1e3, r.MedianNS > 0 }, 0, ""); err != nil {
		return err
	}
	if pg.GFLOPs, err = benchBars(b.Rows, "GFLOP/s", "GFLOP/s", func(r BenchRow) (float64, bool) { return r.GFLOPs, !r.NoGFLOPs }, b.PeakGFLOPs, "FMA peak"); err != nil {
		return err
	}
	if pg.GBps, err = benchBars(b.Rows, "GB/s", "GB/s", func(r BenchRow) (float64, bool) { return r.GBps, !r.NoGBps }, b.FloorGBps, "copy floor"); err != nil {
		return err
	}
	return benchTemplate.Execute(w, pg)
}

type benchPage struct {
	Bench
	Rows               []benchRowText
	Time, GFLOPs, GBps template.HTML
}

type benchRowText struct {
	Name, Doc, Median, Spread, GBps, GFLOPs, VsTuned string
}

// benchBars is a horizontal bar per entry that has the value, with a
// limit drawn as a vertical line when it is positive.
func benchBars(rows []BenchRow, title, unit string, value func(BenchRow) (float64, bool), limit float64, limitName string) (template.HTML, error) {
	var vs plotter.Values
	var names []string
	for _, r := range rows {
		if v, ok := value(r); ok {
			vs, names = append(vs, v), append(names, r.Name)
		}
	}
	if len(vs) == 0 {
		return "", nil
	}
	bars, err := plotter.NewBarChart(vs, vg.Points(14))
	if err != nil {
		return "", err
	}
	bars.Horizontal = true
	bars.Color, bars.LineStyle.Width = plotutil.Color(0), 0
	p := newPlot(title, unit, "")
	p.Add(bars)
	p.NominalY(names...)
	if limit > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: limit, Y: -0.5}, {X: limit, Y: float64(len(vs)) - 0.5}})
		if err != nil {
			return "", err
		}
		l.Color, l.Width = plotutil.Color(1), vg.Points(2)
		p.Add(l)
		p.Legend.Add(fmt.Sprintf("%s %.1f %s", limitName, limit, unit), l)
	}
	p.X.Min = 0
	return svg(p, chartW, vg.Points(float64(60+22*len(vs))))
}

var benchTemplate = template.Must(template.New("bench").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>autotune bench: {{.Workload}}</title>
<style>` + css + `</style>
</head>
<body>
<h1>autotune bench: {{.Workload}}</h1>
<table class="facts">
<tr><td>machine</td><td>{{.Machine}}</td></tr>
{{if .ISA}}<tr><td>ISA level</td><td>{{.ISA}}</td></tr>{{end}}
<tr><td>tuned</td><td><code>{{.Tuned}}</code></td></tr>
<tr><td>samples</td><td>{{.Samples}} of each entry, interleaved</td></tr>
</table>
<section id="bench">
<table class="bench">
<thead><tr><th>name</th><th class="n">median</th><th class="n">p20–p80</th><th class="n">GB/s</th><th class="n">GFLOP/s</th><th class="n">× tuned</th><th>what</th></tr></thead>
<tbody>
{{range .Rows}}<tr><td>{{.Name}}</td><td class="n">{{.Median}}</td><td class="n">{{.Spread}}</td><td class="n">{{.GBps}}</td><td class="n">{{.GFLOPs}}</td><td class="n">{{.VsTuned}}</td><td class="note">{{.Doc}}</td></tr>
{{end}}</tbody>
</table>
{{range .Notes}}<p>{{.}}</p>
{{end}}</section>
<section id="charts">
{{.Time}}{{.GFLOPs}}{{.GBps}}
</section>
</body>
</html>
`))
