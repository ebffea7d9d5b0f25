package main

import (
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/tunedb"
)

// dtype is the element type of every workload until templates take others.
const dtype = "f32"

var bestCommand = command{
	name:    "best",
	summary: "print the best stored config of a workload",
	help: `
Usage: autotune best --op OP --shape SHAPE [--device DEV] [--db PATH] [--json]

Prints the fastest correct config recorded for a workload on a device, with
its median time and spread. When the database holds records of several
template versions of the op, the version whose best record is newest is used.

Examples:
  autotune best --op softmax --shape 4096x1024 --device cpu
  autotune best --op gemm --shape 1024x1024x1024 --json
`,
	run: runBest,
}

// bestJSON is best's --json output; tune --json prints the same "best" member.
type bestJSON struct {
	Op       string     `json:"op"`
	Shape    []int      `json:"shape"`
	DType    string     `json:"dtype"`
	Device   string     `json:"device"`
	Template string     `json:"template"`
	Best     bestConfig `json:"best"`
}

type bestConfig struct {
	Config   any       `json:"config"`
	MedianNS float64   `json:"median_ns"`
	P20NS    float64   `json:"p20_ns"`
	P80NS    float64   `json:"p80_ns"`
	Samples  int       `json:"samples"`
	Time     time.Time `json:"time"`
	Tool     string    `json:"tool"`
}

func runBest(c *command, std *stdio, args []string) error {
	fs := newFlags(c, std)
	var wf workloadFlags
	var path string
	wf.register(fs)
	dbFlag(fs, &path)
	asJSON := fs.Bool("json", false, "print one JSON object")
	args, err := parse(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(fs, args); err != nil {
		return err
	}
	w, err := wf.resolve()
	if err != nil {
		return err
	}
	db, err := openDB(path, true)
	if err != nil {
		return err
	}
	defer db.Close()
	best, ok, err := latestBest(db, w)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("no successful record for %s in %s; tune it first", describeWorkload(w), db.Path())
	}
	if *asJSON {
		return writeJSON(std, bestJSON{
			Op: w.op.Name, Shape: w.shape, DType: dtype, Device: w.target.Name, Template: best.Workload.Template,
			Best: bestConfig{Config: best.Config, MedianNS: best.MedianNS, P20NS: best.P20NS, P80NS: best.P80NS,
				Samples: len(best.SamplesNS), Time: best.Time, Tool: best.Tool},
		})
	}
	tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "workload\t%s\n", describeWorkload(w))
	fmt.Fprintf(tw, "config\t%s\n", best.Config)
	fmt.Fprintf(tw, "median\t%s (p20 %s, p80 %s, %d samples)\n", formatNS(best.MedianNS), formatNS(best.P20NS),
		formatNS(best.P80NS), len(best.SamplesNS))
	fmt.Fprintf(tw, "template\t%s\n", best.Workload.Template)
	fmt.Fprintf(tw, "measured\t%s by autotune %s\n", best.Time.Format(time.RFC3339), best.Tool)
	return tw.Flush()
}

// latestBest returns the best record of the workload's most recently
// measured template version.
func latestBest(db *tunedb.DB, w workload) (tunedb.Record, bool, error) {
	wls, err := db.Find(w.op.Name, w.shape, dtype, w.target.Fingerprint())
	if err != nil {
		return tunedb.Record{}, false, err
	}
	var best tunedb.Record
	found := false
	for _, wl := range wls {
		r, ok, err := db.Best(wl)
		if err != nil {
			return tunedb.Record{}, false, err
		}
		if ok && (!found || r.Time.After(best.Time)) {
			best, found = r, true
		}
	}
	return best, found, nil
}

func describeWorkload(w workload) string {
	return fmt.Sprintf("%s %s %s on %s", w.op.Name, kernels.FormatShape(w.shape), dtype, w.target.Fingerprint())
}
