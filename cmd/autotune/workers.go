package main

import (
	"context"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/measure/remote"
)

var workersCommand = command{
	name:    "workers",
	summary: "list the live remote workers",
	help: `
Usage: autotune workers [--nats URL]

Lists the workers registered with the NATS server: device fingerprint, host,
process, start time and jobs done (refreshed after each batch of jobs). A
worker that stopped refreshing its entry drops off the list within half a
minute. With none registered it prints nothing and says so on stderr.

Examples:
  autotune workers --nats nats://10.0.0.5:4222
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		var n natsFlags
		n.register(fs, "URL of the NATS server")
		if err := parseFlags(fs, args); err != nil {
			return err
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
