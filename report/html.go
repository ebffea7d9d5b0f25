package report

import "html/template"

// pageTemplate is the whole page. It is well-formed XML as well as HTML
// (every element closed, only XML's entities), which the tests rely on to
// check its structure with encoding/xml.
var pageTemplate = template.Must(template.New("page").Funcs(template.FuncMap{
	"minus": func(a, b int) int { return a - b },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<meta name="viewport" content="width=device-width, initial-scale=1"/>
<title>{{.Title}}</title>
<style>` + css + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
{{if .Many}}<section id="summary">
<h2>Summary</h2>
<table>
<thead><tr><th>workload</th><th>device</th><th class="n">records</th><th class="n">ok</th><th class="n">failed</th><th class="n">best</th><th>throughput</th><th class="n">trials to 5%</th><th class="n">compile share</th></tr></thead>
<tbody>
{{range .Sections}}<tr><td><a href="#{{.ID}}">{{.Name}}</a></td><td class="dev">{{.Workload.Device}}</td><td class="n">{{.Records}}</td><td class="n">{{.OK}}</td><td class="n">{{minus .Records .OK}}</td><td class="n">{{or .BestMedian "-"}}</td><td>{{or .Rates "-"}}</td><td class="n">{{if .Within5}}{{.Within5}}{{else}}-{{end}}</td><td class="n">{{.CompileShr}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">Trials to 5%: the first trial, counting every record of the workload in time order, after which the best so far is within 5% of the best. The weights of a tasks file are not recorded in the database, so no weighted total latency is given.</p>
</section>
{{end}}{{if .Ranges}}<section id="ranges">
<h2>Shape ranges</h2>
<table>
<thead><tr><th>op</th><th>range</th><th>device</th><th>buckets</th><th class="n">held out</th><th class="n">median regret</th><th class="n">max regret</th><th class="n">trials</th></tr></thead>
<tbody>
{{range .Ranges}}<tr><td>{{.Op}}</td><td>{{.Range}}</td><td class="dev">{{.Device}}</td><td>{{.Buckets}}</td><td class="n">{{.HeldOut}}</td><td class="n">{{.Median}}</td><td class="n">{{.Max}}</td><td class="n">{{.Trials}}</td></tr>
{{end}}</tbody>
</table>
<p class="note">Each range was tuned as one (autotune tune --shape lo..hi): a shape of the range runs the winner of its nearest bucket. The regret of a held-out shape is how much slower that winner runs there than the best config measured there after a short tune of the shape alone; inf: the winner cannot run the shape.</p>
</section>
{{end}}{{range .Sections}}<section id="{{.ID}}" class="workload">
<h2>{{.Name}}</h2>
{{if .Note}}<p class="note">{{.Note}}</p>
{{end}}<table class="facts">
<tr><td>device</td><td>{{.Workload.Device}}</td></tr>
<tr><td>template</td><td>{{.Workload.Template}}</td></tr>
<tr><td>records</td><td>{{.Records}} in {{.Runs}} tuning run(s): {{.OK}} ok, {{minus .Records .OK}} failed</td></tr>
{{if .Best}}<tr><td>best config</td><td><code class="best-config">{{.Best.Config}}</code></td></tr>
<tr><td>median</td><td><span class="best-median">{{.BestMedian}}</span> (p20 {{.BestP20}}, p80 {{.BestP80}}, {{len .Best.SamplesNS}} samples){{if .Rates}}  {{.Rates}}{{end}}</td></tr>
{{end}}<tr><td>within 5% of the best</td><td>{{if .Within5}}after {{.Within5}} trials{{else}}-{{end}}</td></tr>
<tr><td>time</td><td>compile {{.Compile}}, execute {{.Execute}}: compile is {{.CompileShr}} of the tuning time</td></tr>
</table>

<h3 id="{{.ID}}-curves">Tuning curves</h3>
{{if .CurveTrials}}<div class="charts">{{.CurveTrials}}{{.CurveTime}}</div>
<p class="note">One line per tuning run (inferred from the records' times and tool: the database keeps no run id, strategy or seed); crosses mark leaders measured again at the end of a run.</p>
{{else}}<p class="note">No correct config yet.</p>
{{end}}
<h3 id="{{.ID}}-latency">Latencies and failures</h3>
{{.Latency}}
<table class="failures">
<thead><tr><th>status</th><th class="n">records</th></tr></thead>
<tbody>
<tr><td>ok</td><td class="n">{{.OK}}</td></tr>
{{range .Failures}}<tr><td>{{.Status}}</td><td class="n">{{.Count}}</td></tr>
{{end}}</tbody>
</table>

<h3 id="{{.ID}}-time">Compile and execute time</h3>
{{.Batches}}
<p>Compile (code generation and build) {{.Compile}}, execute (checking and timing) {{.Execute}}: compile is {{.CompileShr}} of the time.</p>
{{if .BatchNote}}<p class="note">{{.BatchNote}}</p>
{{end}}
<h3 id="{{.ID}}-roofline">Roofline</h3>
{{.Roofline}}
{{if .RoofNote}}<p class="note">{{.RoofNote}}</p>
{{end}}
<h3 id="{{.ID}}-top">Top configs</h3>
{{if .Top}}<div class="wide"><table class="top">
<thead><tr><th class="n">#</th><th class="n">median</th><th class="n">p20–p80</th><th class="n">samples</th><th class="n">× best</th><th class="n">GFLOP/s</th><th class="n">GB/s</th>{{range .TopKnobs}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>
{{range .Top}}<tr><td class="n">{{.Rank}}</td><td class="n">{{.Median}}</td><td class="n">{{.P20}} – {{.P80}}</td><td class="n">{{.Samples}}</td><td class="n">{{.VsBest}}</td><td class="n">{{or .GFLOPs "-"}}</td><td class="n">{{or .GBps "-"}}</td>{{range .Knobs}}<td>{{.}}</td>{{end}}</tr>
{{end}}</tbody>
</table></div>
<p class="note">Ranked as autotune best ranks them: each config by its latest correct record. Only the knobs whose values differ among these configs are shown{{with .Top}}; the rest are as in the best config{{end}}.</p>
{{else}}<p class="note">No correct config yet.</p>
{{end}}
<h3 id="{{.ID}}-model">Cost model</h3>
{{if .ModelTau}}<p>A fresh boosted-tree model trained on the first {{.Model.Train}} records (in time order) ranks the {{.Model.Test}} later ones with Kendall τ <span class="tau">{{.ModelTau}}</span> (1: the measured order, 0: no better than chance; failures count as the slowest).</p>
{{.ModelChart}}
<table class="importance">
<thead><tr><th>knob</th><th class="n">τ lost when shuffled</th></tr></thead>
<tbody>
{{range .Model.Importance}}<tr><td>{{.Name}}</td><td class="n">{{printf "%.3f" .Drop}}</td></tr>
{{end}}</tbody>
</table>
{{else if .Model.Why}}<p class="note">No evaluation: {{.Model.Why}}.</p>
{{else}}<p class="note">No evaluation: the records are not of this autotune's template.</p>
{{end}}{{if .Model.Saved}}<p class="note">Saved model: {{.Model.Saved}}.</p>
{{end}}</section>
{{end}}{{if .Generated}}<p class="note">Written {{.Generated}} by autotune report.</p>
{{end}}</body>
</html>
`))

// css contains neither '<' nor '&', so that the page stays well-formed XML.
const css = `
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 62em; padding: 1em 2em; color: #222; line-height: 1.4; }
h1 { font-size: 1.6em; }
h2 { border-top: 2px solid #ccc; padding-top: 0.8em; margin-top: 2em; }
h3 { font-size: 1.05em; margin-top: 1.6em; }
table { border-collapse: collapse; margin: 0.5em 0; font-size: 0.9em; }
th, td { border-bottom: 1px solid #ddd; padding: 0.2em 0.6em; text-align: left; vertical-align: top; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
code { font-size: 0.9em; word-break: break-all; }
svg { max-width: 100%; height: auto; display: block; margin: 0.5em 0; }
.note { color: #555; font-size: 0.9em; }
.wide { overflow-x: auto; }
.dev { font-size: 0.85em; overflow-wrap: anywhere; }
.facts td:first-child { color: #555; white-space: nowrap; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(24em, 1fr)); gap: 0.5em 1.5em; }
`
