package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure/remote"
	"github.com/autotune-dev/autotune/tune"
)

// natsFlags are the flags that reach a NATS server.
type natsFlags struct {
	url, creds, key, ca string
}

func (n *natsFlags) register(fs *flag.FlagSet, usage string) {
	fs.StringVar(&n.url, "nats", "", usage)
	fs.StringVar(&n.key, "nats-key", "", "credential file made by 'autotune broker --auth' (tuner.key for tuners, NAME.key for a worker)")
	fs.StringVar(&n.ca, "nats-ca", "", "PEM certificate(s) to trust for the server's TLS: the broker.pem of 'autotune broker --auth', or your CA")
	fs.StringVar(&n.creds, "nats-creds", "", "NATS credentials file (user JWT and nkey seed) for a NATS cluster of your own that requires them")
}

// credential returns the credential of --nats-key; ok is false without one.
func (n natsFlags) credential() (c remote.Credential, ok bool, err error) {
	if n.key == "" {
		return c, false, nil
	}
	c, err = remote.ReadCredential(n.key)
	if err != nil {
		return c, false, fmt.Errorf("--nats-key: %w", err)
	}
	return c, true, nil
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
	c, ok, err := n.credential()
	if err != nil {
		return nil, err
	}
	if ok {
		copts, err := c.Options()
		if err != nil {
			return nil, err
		}
		opts = append(opts, copts...)
	}
	if n.ca != "" {
		opts = append(opts, nats.RootCAs(n.ca))
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
Usage: autotune broker [--listen ADDR] [--store DIR] [--auth DIR [--workers NAMES]] [--insecure]

Runs an embedded NATS server with JetStream, for a fleet without a NATS
cluster of its own: 'autotune worker' processes take jobs from it and
'autotune tune --nats' sends them. Its streams are kept in --store, so jobs
and results survive a restart: tuners and workers wait for it and go on
when it comes back on the same address with the same --store. It runs
until Ctrl-C, SIGTERM or SIGHUP.

Anyone who can publish jobs makes workers run generated code, and anyone
who can publish results writes timings into the tuner's database. With
--auth DIR the broker admits only the credentials in DIR, and speaks TLS
only. It makes those missing there: tuner.key (for 'tune' and 'workers')
and NAME.key for each worker of --workers (NAME@HASH binds a worker to the
device whose hash 'autotune worker --fingerprint' prints), each readable
by its owner only; copy each to its machine and pass it with --nats-key.
The tuner alone may publish jobs; a worker may take only the jobs of its
device (any device when unbound), publish results and register under its
own name, so every record names the worker that measured it as the broker
authenticated it. Without --tls-cert and --tls-key it makes a self-signed
certificate, DIR/broker.pem, that clients trust with --nats-ca. Listening
beyond loopback without --auth is refused unless --insecure says so.

Examples:
  autotune broker
  autotune broker --listen 10.0.0.5:4222 --store /var/lib/autotune/nats --auth /etc/autotune/fleet --workers gpu1,gpu2
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		listen := fs.String("listen", "127.0.0.1:4222", "host:port to listen on (port 0: any free port)")
		store := fs.String("store", filepath.Join(os.TempDir(), "autotune-nats"), "directory of the JetStream streams")
		auth := fs.String("auth", "", "directory of the fleet's credentials: admit only them, over TLS, making those missing")
		workers := fs.String("workers", "", "comma-separated worker names (NAME or NAME@HASH) to make credentials for in --auth")
		cert := fs.String("tls-cert", "", "PEM certificate of the broker (default with --auth: a self-signed one made in DIR)")
		key := fs.String("tls-key", "", "PEM private key of --tls-cert")
		insecure := fs.Bool("insecure", false, "allow listening beyond loopback without --auth: anyone who reaches it can run code on the workers")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		host, port, err := net.SplitHostPort(*listen)
		if err == nil {
			_, err = strconv.ParseUint(port, 10, 16)
		}
		if err != nil {
			return usagef("--listen %q: want host:port with a port from 0 to 65535, such as 127.0.0.1:4222", *listen)
		}
		switch {
		case *workers != "" && *auth == "":
			return usagef("--workers makes credentials in --auth DIR: give --auth")
		case (*cert == "") != (*key == ""):
			return usagef("--tls-cert and --tls-key go together")
		case *auth == "" && !loopback(host) && !*insecure:
			return usagef("--listen %s reaches beyond this machine: give --auth DIR to admit only your fleet, or --insecure to admit anyone", *listen)
		}
		sec, err := brokerSecurity(*auth, splitList(*workers), *cert, *key, host)
		if err != nil {
			return err
		}
		// The handler first: a signal that comes once the broker has said
		// where it listens must stop it, not kill the process.
		ctx, caught, stop := signalContext()
		defer stop()
		s, err := remote.Serve(*listen, *store, sec)
		if err != nil {
			return err
		}
		if *auth != "" {
			// Workers may not create the streams: set them up as the tuner.
			if err := setupAsTuner(s.ClientURL(), *auth, *cert); err != nil {
				s.Shutdown()
				return err
			}
			fmt.Fprintf(std.errs, "broker admits the credentials in %s, over TLS (clients trust %s)\n", *auth, cmp.Or(*cert, filepath.Join(*auth, brokerCert)))
		}
		fmt.Fprintf(std.errs, "broker listening on %s, streams in %s\n", s.ClientURL(), *store)
		<-ctx.Done()
		s.Shutdown()
		s.WaitForShutdown()
		fmt.Fprintln(std.errs, "broker stopped; its streams are kept for the next start")
		return stoppedBy(caught(), "")
	},
}

// The self-signed certificate and key that 'broker --auth DIR' makes in DIR.
const (
	brokerCert = "broker.pem"
	brokerKey  = "broker-key.pem"
)

// brokerSecurity returns what the broker demands: nil without --auth and
// TLS flags, else the credentials of auth (made where missing) and TLS
// with cert and key or, with none given, the self-signed pair of auth.
func brokerSecurity(auth string, workers []string, cert, key, host string) (*remote.Security, error) {
	if auth == "" && cert == "" {
		return nil, nil
	}
	sec := &remote.Security{}
	if auth != "" {
		creds, err := remote.EnsureCredentials(auth, workers)
		if err != nil {
			return nil, err
		}
		sec.Credentials = creds
		if cert == "" {
			cert, key = filepath.Join(auth, brokerCert), filepath.Join(auth, brokerKey)
			name, _ := os.Hostname()
			if err := remote.SelfSigned(cert, key, []string{host, name}); err != nil {
				return nil, err
			}
		}
	}
	tc, err := remote.ServerTLS(cert, key)
	if err != nil {
		return nil, err
	}
	sec.TLS = tc
	return sec, nil
}

// setupAsTuner creates the streams and the workers bucket of the broker
// at url with the tuner's credential in auth.
func setupAsTuner(url, auth, cert string) error {
	n := natsFlags{url: url, key: filepath.Join(auth, remote.CredentialFile(remote.TunerName)), ca: cmp.Or(cert, filepath.Join(auth, brokerCert))}
	nc, err := n.connect("autotune broker", nil)
	if err != nil {
		return err
	}
	defer nc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err == nil {
		_, err = remote.Setup(ctx, js)
	}
	return err
}

// loopback reports whether a listen host is reachable from this machine
// only.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// splitList splits a comma-separated list, dropping empty items.
func splitList(s string) []string {
	var out []string
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

var workerCommand = command{
	name:    "worker",
	summary: "measure jobs sent through NATS on this machine",
	help: `
Usage: autotune worker [--nats URL] [--nats-key FILE --nats-ca FILE] [--device DEV]
       autotune worker --fingerprint [--device DEV]

Measures, with this machine's measurer, the jobs that 'autotune tune --nats'
sends for this machine's device fingerprint, and sends back the results. A
job names a workload, a template version and a config; the worker generates
the code itself, and refuses a template version its autotune does not have.
It registers in the workers bucket ('autotune workers') while it runs, and
stops on Ctrl-C, SIGTERM or SIGHUP; a job it was measuring goes to another worker
once --ack-wait has passed without a sign of life from it (a worker that
is measuring says it is alive every third of --ack-wait). When the NATS
server goes away it waits for it and reconnects.

With a credential of 'autotune broker --auth' (--nats-key), the worker
goes by the credential's name, and the broker checks it: the results it
sends are recorded as measured by that name. Without one it goes by a
random name. --fingerprint prints the device's fingerprint and the hash
that binds a credential to it (--workers NAME@HASH of the broker), and
exits.

Examples:
  autotune worker --nats nats://10.0.0.5:4222
  autotune worker --nats nats://10.0.0.5:4222 --nats-key gpu1.key --nats-ca broker.pem
  autotune worker --fingerprint --device sm_86
`,
	run: func(c *command, std *stdio, args []string) error {
		fs := newFlags(c, std)
		var n natsFlags
		n.register(fs, "URL of the NATS server")
		dev := fs.String("device", "cpu", "target measured here: cpu or a CUDA architecture")
		seed := fs.Uint64("seed", 1, "seed of the test inputs")
		printFP := fs.Bool("fingerprint", false, "print the device fingerprint and its hash, and exit")
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
		if *printFP {
			fmt.Fprintf(std.out, "%s\t%s\n", remote.Hash(target.Fingerprint()), target.Fingerprint())
			return nil
		}
		cred, _, err := n.credential()
		if err != nil {
			return err
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
			Target: target, Measurer: m, Log: logs, AckWait: *ackWait, Name: cred.Name, Tool: version,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "worker %s for %s taking jobs from %s\n", w.Name(), w.Fingerprint(), n.url)
		if err := w.Run(ctx); err != nil {
			return err
		}
		fmt.Fprintf(std.errs, "worker stopped after %d jobs\n", w.JobsDone())
		return stoppedBy(caught(), "")
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
