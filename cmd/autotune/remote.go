package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/remote"
	"github.com/autotune-dev/autotune/tune"
)

// natsFlags are the flags that reach a NATS server.
type natsFlags struct {
	url, creds string
}

func (n *natsFlags) register(fs *flag.FlagSet, usage string) {
	fs.StringVar(&n.url, "nats", "", usage)
	fs.StringVar(&n.creds, "nats-creds", "", "NATS credentials file (user JWT and nkey seed) for a server that requires them")
}

// connect dials n.url, reconnecting for ever when the server goes away
// (jobs and results survive a restart of the server: measure/remote); logs,
// if not nil, hears when the connection drops and comes back.
func (n natsFlags) connect(name string, logs *log.Logger) (*nats.Conn, error) {
	opts := []nats.Option{nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(time.Second)}
	if logs != nil {
		opts = append(opts,
			nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
				if err != nil {
					logs.Printf("lost the NATS server (%v); reconnecting", err)
				}
			}),
			nats.ReconnectHandler(func(nc *nats.Conn) { logs.Printf("reconnected to the NATS server at %s", nc.ConnectedUrlRedacted()) }))
	}
	if n.creds != "" {
		opts = append(opts, nats.UserCredentials(n.creds))
	}
	nc, err := nats.Connect(n.url, opts...)
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", n.url, err)
	}
	return nc, nil
}

const defaultNATS = "nats://127.0.0.1:4222"

var brokerCommand = command{
	name:    "broker",
	summary: "run a NATS server with JetStream for remote workers",
	help: `
Usage: autotune broker [--listen ADDR] [--store DIR]

Runs an embedded NATS server with JetStream, for a fleet without a NATS
cluster of its own: 'autotune worker' processes take jobs from it and
'autotune tune --nats' sends them. Its streams are kept in --store, so jobs
and results survive a restart: tuners and workers wait for it and go on
when it comes back on the same address with the same --store. It runs
until Ctrl-C or SIGTERM. Anyone who can publish jobs to it makes workers
run generated code: listen on a private network only (see docs/remote.md).

Examples:
  autotune broker
  autotune broker --listen 10.0.0.5:4222 --store /var/lib/autotune/nats
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		listen := fs.String("listen", "127.0.0.1:4222", "host:port to listen on (port 0: any free port)")
		store := fs.String("store", filepath.Join(os.TempDir(), "autotune-nats"), "directory of the JetStream streams")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		_, port, err := net.SplitHostPort(*listen)
		if err == nil {
			_, err = strconv.ParseUint(port, 10, 16)
		}
		if err != nil {
			return usagef("--listen %q: want host:port with a port from 0 to 65535, such as 127.0.0.1:4222", *listen)
		}
		// The handler first: a signal that comes once the broker has said
		// where it listens must stop it, not kill the process.
		ctx, caught, stop := signalContext()
		defer stop()
		s, err := remote.Serve(*listen, *store)
		if err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "broker listening on %s, streams in %s\n", s.ClientURL(), *store)
		<-ctx.Done()
		s.Shutdown()
		s.WaitForShutdown()
		fmt.Fprintln(std.errs, "broker stopped; its streams are kept for the next start")
		return stoppedBy(caught(), "")
	},
}

var workerCommand = command{
	name:    "worker",
	summary: "measure jobs sent through NATS on this machine",
	help: `
Usage: autotune worker [--nats URL] [--device DEV]

Measures, with this machine's measurer, the jobs that 'autotune tune --nats'
sends for this machine's device fingerprint, and sends back the results. A
job names a workload, a template version and a config; the worker generates
the code itself, and refuses a template version its autotune does not have.
It registers in the workers bucket ('autotune workers') while it runs, and
stops on Ctrl-C or SIGTERM; a job it was measuring goes to another worker
once --ack-wait has passed without a sign of life from it (a worker that
is measuring says it is alive every third of --ack-wait). When the NATS
server goes away it waits for it and reconnects.

Examples:
  autotune worker --nats nats://10.0.0.5:4222
  autotune worker --nats nats://10.0.0.5:4222 --device cpu --nats-creds worker.creds
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		var n natsFlags
		n.register(fs, "URL of the NATS server")
		dev := fs.String("device", "cpu", "target measured here: cpu or a CUDA architecture")
		seed := fs.Uint64("seed", 1, "seed of the test inputs")
		ackWait := fs.Duration("ack-wait", time.Minute, "how long a job may go without a sign of life from its worker before another worker gets it; the workers of a device share one value, set by the last one that created the device's consumer")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		if *ackWait < time.Second {
			return usagef("--ack-wait must be at least 1s, not %v", *ackWait)
		}
		if n.url == "" {
			n.url = defaultNATS
		}
		target, err := lookupDevice(*dev)
		if err != nil {
			return usagef("--device: %s", strings.TrimPrefix(err.Error(), "device: "))
		}
		m, err := tune.NewMeasurer(kernels.BackendOf(target), tune.MeasurerOptions{Seed: *seed, Target: target})
		if err != nil {
			return err
		}
		logs := log.New(std.errs, "", log.LstdFlags)
		nc, err := n.connect("autotune worker", logs)
		if err != nil {
			return err
		}
		defer nc.Close()
		ctx, caught, stop := signalContext()
		defer stop()
		w, err := remote.NewWorker(ctx, nc, remote.WorkerOptions{
			Target: target, Measurer: m, Log: logs, AckWait: *ackWait,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "worker for %s taking jobs from %s\n", w.Fingerprint(), n.url)
		if err := w.Run(ctx); err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "worker stopped after %d jobs\n", w.JobsDone())
		return stoppedBy(caught(), "")
	},
}

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
		fmt.Fprintln(tw, "FINGERPRINT\tHOST\tPID\tSTARTED\tJOBS DONE")
		for _, r := range regs {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%d\n", r.Fingerprint, r.Host, r.PID, r.Started.Format(time.RFC3339), r.JobsDone)
		}
		return tw.Flush()
	},
}

// newTuneMeasurer returns the measurer of a tuning run: remote when --nats
// is given, the local backend's otherwise. close releases it.
func newTuneMeasurer(o tuneOptions, backend kernels.Backend, mo tune.MeasurerOptions) (tune.Measurer, func(), error) {
	if o.nats.url == "" {
		m, err := tune.NewMeasurer(backend, mo)
		return m, func() {}, err
	}
	nc, err := o.nats.connect("autotune tune", nil)
	if err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m, err := remote.New(ctx, nc, nil)
	if err != nil {
		nc.Close()
		return nil, nil, err
	}
	return m, nc.Close, nil
}
