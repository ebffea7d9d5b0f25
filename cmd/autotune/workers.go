package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/measure/remote"
	"github.com/autotune-dev/autotune/tunedb"
)

var workersCommand = command{
	name:    "workers",
	summary: "list the live remote workers, or how far each one's results are trusted",
	help: `
Usage: autotune workers [--nats URL --nats-key FILE --nats-ca FILE]
       autotune workers --db PATH

Lists the workers registered with the NATS server: name, device
fingerprint, host, process, start time and jobs done (refreshed after each
batch of jobs). A worker that stopped refreshing its entry drops off the
list within half a minute. With none registered it prints nothing and says
so on stderr.

With --db it reports instead, from the tuning database, every measurer of
its records (a worker by name, or the tuner on a host): how many results
it gave, how many ok timings, and how many of those a cross-check marked
suspect (docs/remote.md: a leader measured again on another worker
disagreed beyond the spreads and a third did not side with it). A
measurer with two or more suspect timings is flagged
"distrusted": its figures keep disagreeing with the others'; look at the
machine (or the person) behind it before using its credential again.

Examples:
  autotune workers --nats nats://10.0.0.5:4222 --nats-key tuner.key --nats-ca broker.pem
  autotune workers --db tune.db
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		var n natsFlags
		n.register(fs, "URL of the NATS server")
		var path string
		fs.StringVar(&path, "db", "", "report each measurer's results in this tuning database instead")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if path != "" {
			return reportMeasurers(std.out, path)
		}
		if n.url == "" {
			n.url = defaultNATS
		}
		nc, err := n.connect("autotune workers", nil)
		if err != nil {
			return err
		}
		defer nc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		kv, err := remote.Setup(ctx, js)
		if err != nil {
			return err
		}
		regs, err := remote.Workers(ctx, kv)
		if err != nil {
			return err
		}
		if len(regs) == 0 {
			fmt.Fprintf(std.errs, "no live workers at %s (start one with 'autotune worker --nats %s')\n", n.url, n.url)
			return nil
		}
		tw := tabwriter.NewWriter(std.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "NAME\tFINGERPRINT\tHOST\tPID\tSTARTED\tJOBS DONE")
		for _, r := range regs {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\n", r.Name, r.Fingerprint, r.Host, r.PID, r.Started.Format(time.RFC3339), r.JobsDone)
		}
		return tw.Flush()
	},
}

// DistrustAfter is how many suspect timings flag a measurer as
// distrusted: one may be a machine that was busy at the wrong moment, two
// are a habit.
const DistrustAfter = 2

// measurerTally is what the database holds of one measurer.
type measurerTally struct {
	name, host, tool string
	results, ok, sus int
}

// reportMeasurers writes, for every measurer of the records of the
// database at path, its results, ok timings and suspect ones.
func reportMeasurers(out io.Writer, path string) error {
	db, err := openDB(path, readDB)
	if err != nil {
		return err
	}
	defer db.Close()
	sums, err := db.Workloads()
	if err != nil {
		return err
	}
	tallies := map[[2]string]*measurerTally{}
	for _, s := range sums {
		recs, err := db.Records(s.Workload)
		if err != nil {
			return err
		}
		for _, r := range recs {
			var who measurerTally
			if r.Measurer != nil {
				who = measurerTally{name: r.Measurer.Name, host: r.Measurer.Host, tool: r.Measurer.Tool}
			}
			// A worker by its name (its host may change); the tuner's
			// own process by its host.
			key := [2]string{who.name, ""}
			if who.name == "" {
				key[1] = who.host
			}
			t := tallies[key]
			if t == nil {
				t = &who
				tallies[key] = t
			}
			t.results++
			if r.Status == tunedb.StatusOK {
				t.ok++
				if r.Suspect != "" {
					t.sus++
				}
			}
		}
	}
	list := make([]*measurerTally, 0, len(tallies))
	for _, t := range tallies {
		list = append(list, t)
	}
	slices.SortFunc(list, func(a, b *measurerTally) int { return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.host, b.host)) })
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "MEASURER\tHOST\tTOOL\tRESULTS\tOK\tSUSPECT\t")
	for _, t := range list {
		name, flag := cmp.Or(t.name, "(tuner)"), ""
		if t.sus >= DistrustAfter {
			flag = "distrusted"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", name, cmp.Or(t.host, "?"), cmp.Or(t.tool, "?"), t.results, t.ok, t.sus, flag)
	}
	return tw.Flush()
}
