package remote_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/remote"
	"github.com/autotune-dev/autotune/schedule"
	"github.com/autotune-dev/autotune/tune"
	"github.com/autotune-dev/autotune/tunedb"
)

var fleetTarget = device.Target{Name: "cpu", CPU: &device.CPU{Model: "fake-fleet", Cores: 1}}

// honest times config v=N at 1000+100N ns, taking delay per config; a
// rogue reports a hundredth.
type honest struct {
	factor float64
	delay  time.Duration
}

func (h honest) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	var out []measure.Result
	for _, cfg := range b.Configs {
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(h.delay):
		}
		ns := float64(1000+100*cfg.Int("v")) * h.factor
		r := measure.Result{Config: cfg, Status: measure.StatusOK, SamplesNS: []float64{ns * 0.98, ns, ns * 1.02}}
		r.MedianNS, r.P20NS, r.P80NS = measure.Summarize(r.SamplesNS)
		if b.Finished != nil {
			b.Finished(r)
		}
		out = append(out, r)
	}
	return out, ctx.Err()
}

// secureBroker starts a broker that admits the credentials it makes for
// the tuner and workers, over TLS with a self-signed certificate. restart
// stops it and starts it again on the same address and store.
func secureBroker(t *testing.T, workers ...string) (url, dir, ca string, restart func()) {
	t.Helper()
	dir = t.TempDir()
	creds, err := remote.EnsureCredentials(dir, workers)
	if err != nil {
		t.Fatal(err)
	}
	ca, key := filepath.Join(dir, "broker.pem"), filepath.Join(dir, "broker-key.pem")
	if err := remote.SelfSigned(ca, key, nil); err != nil {
		t.Fatal(err)
	}
	tc, err := remote.ServerTLS(ca, key)
	if err != nil {
		t.Fatal(err)
	}
	sec, store := &remote.Security{Credentials: creds, TLS: tc}, t.TempDir()
	s, err := remote.Serve("127.0.0.1:0", store, sec)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		s.Shutdown()
	})
	addr := s.Addr().String()
	restart = func() {
		mu.Lock()
		defer mu.Unlock()
		s.Shutdown()
		s.WaitForShutdown()
		time.Sleep(500 * time.Millisecond) // long enough for every client to notice
		if s, err = remote.Serve(addr, store, sec); err != nil {
			t.Error(err)
		}
	}
	return s.ClientURL(), dir, ca, restart
}

// dial connects as the member whose credential is in dir under name ("":
// none), trusting ca ("": trusting nothing but the system's roots).
func dial(url, dir, name, ca string) (*nats.Conn, error) {
	opts := []nats.Option{nats.MaxReconnects(-1), nats.ReconnectWait(100 * time.Millisecond), nats.RetryOnFailedConnect(false)}
	if name != "" {
		c, err := remote.ReadCredential(filepath.Join(dir, remote.CredentialFile(name)))
		if err != nil {
			return nil, err
		}
		copts, err := c.Options()
		if err != nil {
			return nil, err
		}
		opts = append(opts, copts...)
	}
	if ca != "" {
		opts = append(opts, nats.RootCAs(ca))
	}
	return nats.Connect(url, opts...)
}

// TestSecureFleet runs a broker with credentials and TLS. Clients without a
// credential, or that do not trust its certificate, are refused; a worker
// may neither publish jobs nor results under another worker's name. Then a
// tuning run on two honest workers and a rogue that reports every config
// 100× faster than it is: the rogue's figures never make the winner, and
// every one of them is marked suspect.
func TestSecureFleet(t *testing.T) {
	url, dir, ca, _ := secureBroker(t, "h1", "h2", "rogue")
	if nc, err := dial(url, dir, "", ca); err == nil || !strings.Contains(err.Error(), "Authorization Violation") {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("a client without a credential: %v, want an authorization violation", err)
	}
	if nc, err := dial(url, dir, "h1", ""); err == nil || !strings.Contains(err.Error(), "certificate") {
		if nc != nil {
			nc.Close()
		}
		t.Fatalf("a client that does not trust the broker's certificate: %v, want a certificate error", err)
	}
	conn := func(name string) *nats.Conn {
		nc, err := dial(url, dir, name, ca)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	tuner := conn(remote.TunerName)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, err := remote.New(ctx, tuner, &remote.Options{Stall: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}

	// What a worker may not do.
	js, _ := jetstream.New(conn("rogue"))
	// The server answers nothing to a request it does not let through:
	// each is given a second.
	refused := func(what string, try func(ctx context.Context) error) {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		defer pcancel()
		if err := try(pctx); err == nil {
			t.Errorf("a worker %s", what)
		}
	}
	for _, subject := range []string{remote.Subject(fleetTarget.Fingerprint()), "autotune.results.abc.h1"} {
		refused("published to "+subject, func(ctx context.Context) error {
			_, err := js.Publish(ctx, subject, []byte("{}"))
			return err
		})
	}
	refused("created a stream", func(ctx context.Context) error {
		_, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "STEAL", Subjects: []string{"autotune.results.>"}})
		return err
	})

	for _, w := range []struct {
		name   string
		factor float64
	}{{"h1", 1}, {"h2", 1}, {"rogue", 0.01}} {
		wctx, wcancel := context.WithCancel(ctx)
		worker, err := remote.NewWorker(wctx, conn(w.name), remote.WorkerOptions{
			Target: fleetTarget, Measurer: honest{factor: w.factor}, Name: w.name, Host: w.name + ".test", Tool: "test", AckWait: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- worker.Run(wctx) }()
		t.Cleanup(func() {
			wcancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Errorf("worker %s: %v", w.name, err)
			}
		})
	}

	space := func([]int, device.Target) *schedule.Space {
		return schedule.NewSpace([]schedule.Knob{schedule.Choice("v", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)})
	}
	store := tunedb.NewMemory()
	task := tune.Task{
		Template: softmax.Template, Shape: []int{8, 8}, Target: fleetTarget, Space: space(nil, fleetTarget),
		Measurer: m, Store: store, Strategy: "grid", Seed: 1, Trials: 12, BatchSize: 3, Remeasure: 3, Tool: "test",
	}
	s, err := tune.Run(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if s.Best == nil || s.Best.Config.String() != "v=0" || s.Best.MedianNS != 1000 || s.Best.Measurer == nil || s.Best.Measurer.Name == "rogue" {
		t.Fatalf("best %+v, want v=0 at its true 1000 ns by an honest worker", s.Best)
	}
	recs, err := store.Records(task.Workload())
	if err != nil {
		t.Fatal(err)
	}
	rogue := 0
	for _, r := range recs {
		if r.Measurer == nil || !strings.HasSuffix(r.Measurer.Host, ".test") {
			t.Errorf("%s: measurer %+v, want a worker of the fleet", r.Config, r.Measurer)
			continue
		}
		switch {
		case r.Measurer.Name == "rogue":
			rogue++
			if r.Suspect == "" {
				t.Errorf("the rogue's %s at %v ns is not suspect", r.Config, r.MedianNS)
			}
		case r.Suspect != "":
			t.Errorf("%s by %s is suspect: %s", r.Config, r.Measurer.Name, r.Suspect)
		}
	}
	if rogue == 0 {
		t.Error("the rogue measured nothing: the test proves nothing")
	}
}

// TestSecureBrokerRestartDuringTasks restarts a broker with credentials
// and TLS twice while it serves a run of two tasks, leaders checked on
// other workers included: the run ends, every trial is one record, and
// none is lost or measured twice.
func TestSecureBrokerRestartDuringTasks(t *testing.T) {
	url, dir, ca, restart := secureBroker(t, "h1", "h2")
	conn := func(name string) *nats.Conn {
		nc, err := dial(url, dir, name, ca)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	m, err := remote.New(ctx, conn(remote.TunerName), &remote.Options{Stall: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"h1", "h2"} {
		wctx, wcancel := context.WithCancel(ctx)
		worker, err := remote.NewWorker(wctx, conn(name), remote.WorkerOptions{
			Target: fleetTarget, Measurer: honest{factor: 1, delay: 20 * time.Millisecond}, Name: name, Host: name + ".test", AckWait: 2 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- worker.Run(wctx) }()
		t.Cleanup(func() { wcancel(); <-done })
	}
	space := schedule.NewSpace([]schedule.Knob{schedule.Choice("v", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)})
	store := tunedb.NewMemory()
	var set tune.TaskSet
	for _, shape := range [][]int{{8, 8}, {16, 8}} {
		set.Tasks = append(set.Tasks, tune.Task{
			Template: softmax.Template, Shape: shape, Target: fleetTarget, Space: space,
			Measurer: m, Store: store, Strategy: "grid", Seed: 1, BatchSize: 3, Remeasure: 3, Tool: "test",
		})
	}
	const trials = 18
	set.Trials = trials
	restarts := make(chan struct{}, 2)
	batches := 0
	set.Observer = func(tune.TaskProgress) {
		if batches++; batches == 1 || batches == 4 {
			go func() { restart(); restarts <- struct{}{} }()
		}
	}
	s, err := tune.RunTasks(ctx, set)
	if err != nil {
		t.Fatal(err)
	}
	<-restarts
	<-restarts
	if s.Trials != trials || s.Missing != 0 || s.Interrupted {
		t.Errorf("trials %d, missing %d, interrupted %v; want %d trials and a best for each task", s.Trials, s.Missing, s.Interrupted, trials)
	}
	records := 0
	for _, task := range set.Tasks {
		recs, err := store.Records(task.Workload())
		if err != nil {
			t.Fatal(err)
		}
		first := map[string]int{} // records of each config before the leaders' checks
		for _, r := range recs {
			if r.Suspect != "" {
				t.Errorf("%s by %s is suspect: %s", r.Config, r.Measurer.Name, r.Suspect)
			}
			first[r.Config.String()]++
		}
		for c, n := range first {
			records++
			if n > 2 {
				t.Errorf("%v %s: %d records; want one, and one more for a leader", task.Shape, c, n)
			}
		}
	}
	if records != trials {
		t.Errorf("%d configs measured, want %d", records, trials)
	}
}
