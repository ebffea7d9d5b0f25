package remote

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/kernels/softmax"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// workerURLEnv makes the test binary a worker process for TestWorkerKilled.
const workerURLEnv = "AUTOTUNE_REMOTE_TEST_WORKER"

func TestMain(m *testing.M) {
	registrationTTL = 3 * time.Second
	pollEvery = 100 * time.Millisecond
	recheckEvery = 500 * time.Millisecond
	attemptTimeout = time.Second
	if url := os.Getenv(workerURLEnv); url != "" {
		// A worker that a test kills with SIGKILL mid-batch.
		nc, err := nats.Connect(url)
		if err != nil {
			log.Fatal(err)
		}
		w, err := NewWorker(context.Background(), nc, WorkerOptions{
			Target: targetA, Measurer: &fake{delay: 300 * time.Millisecond}, AckWait: time.Second, Batch: 8,
		})
		if err != nil {
			log.Fatal(err)
		}
		log.Fatal(w.Run(context.Background()))
	}
	os.Exit(m.Run())
}

var (
	targetA = device.Target{Name: "cpu", CPU: &device.CPU{Model: "fake-a", Cores: 1}}
	targetB = device.Target{Name: "cpu", CPU: &device.CPU{Model: "fake-b", Cores: 1}}
)

// fake measures a config in delay, giving it a median that depends only on
// its text, and counts what it measured.
type fake struct {
	delay time.Duration
	mu    sync.Mutex
	seen  []string
}

func medianOf(cfg schedule.Config) float64 {
	return float64(100 + len(cfg.String())*7 + int(cfg.Int("v")))
}

func (f *fake) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	var out []measure.Result
	for _, cfg := range b.Configs {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(f.delay):
		}
		f.mu.Lock()
		f.seen = append(f.seen, cfg.String())
		f.mu.Unlock()
		r := measure.Result{Config: cfg, Status: measure.StatusOK, MedianNS: medianOf(cfg), SamplesNS: []float64{medianOf(cfg)}}
		if b.Finished != nil {
			b.Finished(r)
		}
		out = append(out, r)
	}
	return out, nil
}

func (f *fake) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen)
}

// serve starts an embedded server on loopback and returns a connection to it.
func serve(t testing.TB) (string, *nats.Conn) {
	t.Helper()
	s, err := Serve("127.0.0.1:0", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	nc, err := nats.Connect(s.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return s.ClientURL(), nc
}

// startWorker runs a worker in this process until the test ends.
func startWorker(t testing.TB, nc *nats.Conn, target device.Target, m LocalMeasurer, logs *syncBuffer) *Worker {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	o := WorkerOptions{Target: target, Measurer: m, Host: "test", Tool: "test-tool", AckWait: time.Second}
	if logs != nil {
		o.Log = log.New(logs, "", 0)
	}
	w, err := NewWorker(ctx, nc, o)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return w
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func batchOf(n int, target device.Target) measure.Batch {
	b := measure.Batch{Template: softmax.Template, Shape: []int{64, 64}, Target: target}
	for i := range n {
		cfg, err := schedule.ParseConfig(fmt.Sprintf("v=%d,unroll=%d", i, i%3))
		if err != nil {
			panic(err)
		}
		b.Configs = append(b.Configs, cfg)
	}
	return b
}

// measureOnce measures b and checks that every config's result arrived
// exactly once, through the hook and in the returned slice, in order.
func measureOnce(t *testing.T, m *Measurer, b measure.Batch, during func(finished int)) []measure.Result {
	t.Helper()
	var mu sync.Mutex
	heard := map[string]int{}
	b.Finished = func(r measure.Result) {
		mu.Lock()
		heard[r.Config.String()]++
		n := len(heard)
		mu.Unlock()
		if during != nil {
			during(n)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	results, err := m.Measure(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != len(b.Configs) {
		t.Fatalf("%d results for %d configs", len(results), len(b.Configs))
	}
	for i, r := range results {
		if !r.Config.Equal(b.Configs[i]) {
			t.Errorf("result %d is of %s, want %s", i, r.Config, b.Configs[i])
		}
		if n := heard[r.Config.String()]; n != 1 {
			t.Errorf("Finished heard %s %d times, want once", r.Config, n)
		}
	}
	return results
}

func TestRoundTrip(t *testing.T) {
	_, nc := serve(t)
	a, b := &fake{}, &fake{}
	wa := startWorker(t, nc, targetA, a, nil)
	wb := startWorker(t, nc, targetB, b, nil)
	m, err := New(context.Background(), nc, &Options{Stall: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	batch := batchOf(10, targetA)
	results := measureOnce(t, m, batch, nil)
	for i, r := range results {
		if r.Status != measure.StatusOK || r.MedianNS != medianOf(batch.Configs[i]) || len(r.SamplesNS) != 1 {
			t.Errorf("result %d: %+v, want ok with median %v", i, r, medianOf(batch.Configs[i]))
		}
		if want := (measure.Measurer{Name: wa.Name(), Host: "test", Tool: "test-tool"}); r.Measurer == nil || *r.Measurer != want {
			t.Errorf("result %d measured by %+v, want %+v", i, r.Measurer, want)
		}
	}
	if a.count() != 10 {
		t.Errorf("the worker of the batch's device measured %d configs, want 10", a.count())
	}
	if b.count() != 0 || wb.JobsDone() != 0 {
		t.Errorf("the worker of another device measured %d configs", b.count())
	}

	js, _ := jetstream.New(nc)
	kv, _ := js.KeyValue(context.Background(), WorkersBucket)
	regs, err := Workers(context.Background(), kv)
	if err != nil {
		t.Fatal(err)
	}
	if len(regs) != 2 || regs[0].Fingerprint != targetA.Fingerprint() || regs[1].Fingerprint != targetB.Fingerprint() {
		t.Errorf("Workers = %+v, want one of each fingerprint", regs)
	}
}

func TestTemplateVersionRefused(t *testing.T) {
	_, nc := serve(t)
	a := &fake{}
	startWorker(t, nc, targetA, a, nil)
	m, err := New(context.Background(), nc, nil)
	if err != nil {
		t.Fatal(err)
	}
	batch := batchOf(3, targetA)
	batch.Template.Version = "not-this-one"
	for i, r := range measureOnce(t, m, batch, nil) {
		if r.Status != measure.StatusRuntimeError || !strings.Contains(r.Error, "not-this-one") {
			t.Errorf("result %d: %s %q, want a runtime error naming the version", i, r.Status, r.Error)
		}
	}
	if a.count() != 0 {
		t.Errorf("measured %d configs of a template version the worker does not have", a.count())
	}
}

func TestMalformedJobs(t *testing.T) {
	_, nc := serve(t)
	m, err := New(context.Background(), nc, nil) // creates the streams
	if err != nil {
		t.Fatal(err)
	}
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	for _, data := range [][]byte{[]byte("{not json"), []byte(`{"format":99}`), bytes.Repeat([]byte("x"), maxJobBytes+1)} {
		if _, err := js.Publish(ctx, Subject(targetA.Fingerprint()), data); err != nil {
			t.Fatal(err)
		}
	}
	var logs syncBuffer
	a := &fake{}
	startWorker(t, nc, targetA, a, &logs)
	measureOnce(t, m, batchOf(4, targetA), nil)
	if a.count() != 4 {
		t.Errorf("measured %d configs, want 4", a.count())
	}
	if n := strings.Count(logs.String(), "rejected a malformed job"); n != 3 {
		t.Errorf("logged %d rejections, want 3:\n%s", n, logs.String())
	}
	for _, want := range []string{"invalid character", "format 99", "more than the"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not say %q:\n%s", want, logs.String())
		}
	}
}

func TestNoWorkerFails(t *testing.T) {
	_, nc := serve(t)
	m, err := New(context.Background(), nc, &Options{Stall: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	_, err = m.Measure(ctx, batchOf(2, targetA))
	if err == nil || !strings.Contains(err.Error(), "no live worker") || ctx.Err() != nil {
		t.Fatalf("Measure with no worker: %v after %v, want a 'no live worker' error", err, time.Since(start))
	}
}

// TestWorkerKilled kills a worker process with SIGKILL in the middle of a
// batch: its jobs go to another worker after the ack wait, and every
// config's result arrives exactly once.
func TestWorkerKilled(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a worker process")
	}
	url, nc := serve(t)
	m, err := New(context.Background(), nc, &Options{Stall: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), workerURLEnv+"="+url)
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cmd.Process.Kill(); <-exited })

	local := &fake{}
	var once sync.Once
	measureOnce(t, m, batchOf(8, targetA), func(finished int) {
		once.Do(func() {
			// The process took the whole batch; kill it after its first
			// result and let a worker of this process take over.
			cmd.Process.Signal(syscall.SIGKILL)
			<-exited
			startWorker(t, nc, targetA, local, nil) // the hook runs on the goroutine that called Measure
		})
	})
	// It may measure all 8 again: the killed process can die between
	// publishing a result and acknowledging its job, and the duplicate
	// result is dropped (measureOnce checks that).
	if local.count() < 7 {
		t.Errorf("the second worker measured %d of 8 configs, want the killed one's rest", local.count())
	}
}

// TestBrokerRestart shuts the NATS server down in the middle of a batch and
// starts it again on the same port and store: the batch goes on and every
// config's result arrives exactly once. Twice: once while the worker is
// measuring, once before the jobs are published, so that publishing has to
// wait for the server.
func TestBrokerRestart(t *testing.T) {
	for _, tt := range []struct {
		name  string
		after int // results heard before the restart; -1: before publishing
	}{
		{"mid-batch", 3},
		{"while publishing", -1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s, err := Serve("127.0.0.1:0", dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			addr := s.Addr().String()
			var mu sync.Mutex
			t.Cleanup(func() {
				mu.Lock()
				defer mu.Unlock()
				s.Shutdown()
			})
			restarted := make(chan struct{})
			restart := func() {
				defer close(restarted)
				mu.Lock()
				defer mu.Unlock()
				s.Shutdown()
				s.WaitForShutdown()
				time.Sleep(500 * time.Millisecond) // long enough for every client to notice
				s, err = Serve(addr, dir, nil)
				if err != nil {
					t.Error(err)
				}
			}
			connect := func() *nats.Conn {
				nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(nc.Close)
				return nc
			}
			// The tuner and the worker have connections of their own, as
			// processes on two machines would.
			m, err := New(context.Background(), connect(), &Options{Stall: 10 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			a := &fake{delay: 100 * time.Millisecond}
			var logs syncBuffer
			startWorker(t, connect(), targetA, a, &logs)
			defer func() {
				if t.Failed() {
					t.Logf("the worker's log:\n%s", logs.String())
				}
			}()
			if tt.after < 0 {
				mu.Lock()
				s.Shutdown()
				s.WaitForShutdown()
				mu.Unlock()
				go func() {
					time.Sleep(300 * time.Millisecond)
					mu.Lock()
					s, err = Serve(addr, dir, nil)
					mu.Unlock()
					if err != nil {
						t.Error(err)
					}
				}()
			}
			var once sync.Once
			measureOnce(t, m, batchOf(12, targetA), func(finished int) {
				if tt.after >= 0 && finished == tt.after {
					once.Do(func() { go restart() })
				}
			})
			if tt.after >= 0 {
				<-restarted
			}
			if a.count() < 12 {
				t.Errorf("the worker measured %d configs, want at least 12", a.count())
			}
			t.Logf("the worker measured %d configs for 12 jobs", a.count())
		})
	}
}

// BenchmarkRoundTrip measures what going through the broker adds to a job:
// a batch published by a Measurer, taken by a worker (on a connection of
// its own, as on another machine) whose measurer takes no time, and its
// results back at the Measurer. ns/job is that overhead per job; it
// includes the worker's gatherWait once per batch.
func BenchmarkRoundTrip(b *testing.B) {
	for _, n := range []int{1, 16} {
		b.Run(fmt.Sprintf("batch=%d", n), func(b *testing.B) {
			url, nc := serve(b)
			wc, err := nats.Connect(url)
			if err != nil {
				b.Fatal(err)
			}
			defer wc.Close()
			startWorker(b, wc, targetA, &fake{}, &syncBuffer{}) // not its log lines
			m, err := New(context.Background(), nc, nil)
			if err != nil {
				b.Fatal(err)
			}
			batch := batchOf(n, targetA)
			for b.Loop() {
				if _, err := m.Measure(context.Background(), batch); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/job")
		})
	}
}

// proxy forwards TCP connections to a server until cut, which closes them
// and stops listening, and restore, which listens again on the same
// address: a network between one client and the server that fails.
type proxy struct {
	addr, target string
	mu           sync.Mutex
	ln           net.Listener
	conns        []net.Conn
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{addr: ln.Addr().String(), target: target, ln: ln}
	go p.serve(ln)
	t.Cleanup(p.cut)
	return p
}

func (p *proxy) serve(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, s)
		p.mu.Unlock()
		go func() { io.Copy(s, c); s.Close() }()
		go func() { io.Copy(c, s); c.Close() }()
	}
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go p.serve(ln)
}

// TestGivenUpWhileDisconnected has a job delivered three times to a
// consumer that never acknowledges it (a config that kills every worker
// that runs it), and the tuner's connection cut when the server gives the
// job up: the batch still ends, with the job recorded as a crash.
func TestGivenUpWhileDisconnected(t *testing.T) {
	url, nc := serve(t)
	js, _ := jetstream.New(nc)
	ctx := context.Background()
	if _, err := Setup(ctx, js); err != nil {
		t.Fatal(err)
	}
	fp := targetA.Fingerprint()
	cons, err := js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable: consumerName(fp), FilterSubject: Subject(fp),
		AckPolicy: jetstream.AckExplicitPolicy, AckWait: 300 * time.Millisecond, MaxDeliver: MaxDeliver,
	})
	if err != nil {
		t.Fatal(err)
	}

	p := newProxy(t, strings.TrimPrefix(url, "nats://"))
	tc, err := nats.Connect("nats://"+p.addr, nats.MaxReconnects(-1), nats.ReconnectWait(50*time.Millisecond), nats.IgnoreDiscoveredServers())
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	m, err := New(ctx, tc, &Options{Stall: time.Minute}) // no worker registers: stalling is not what ends this batch
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		results []measure.Result
		err     error
	}
	done := make(chan outcome, 1)
	mctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	go func() {
		r, err := m.Measure(mctx, batchOf(1, targetA))
		done <- outcome{r, err}
	}()

	for d := 1; d <= MaxDeliver; d++ {
		batch, err := cons.Fetch(1, jetstream.FetchMaxWait(10*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for msg := range batch.Messages() {
			meta, _ := msg.Metadata()
			if meta.NumDelivered != uint64(d) {
				t.Fatalf("delivery %d of the job says it is delivery %d", d, meta.NumDelivered)
			}
			n++
		}
		if n != 1 {
			t.Fatalf("delivery %d: got %d jobs", d, n)
		}
	}
	p.cut()
	// The next pull after the last ack wait makes the server give the job
	// up and send its advisory, while the tuner is away.
	time.Sleep(400 * time.Millisecond)
	if batch, err := cons.Fetch(1, jetstream.FetchMaxWait(500*time.Millisecond)); err == nil {
		for range batch.Messages() {
			t.Fatal("the job was delivered a fourth time")
		}
	}
	time.Sleep(200 * time.Millisecond)
	p.restore(t)

	o := <-done
	if o.err != nil {
		t.Fatal(o.err)
	}
	if len(o.results) != 1 || o.results[0].Status != measure.StatusCrash || !strings.Contains(o.results[0].Error, "delivered 3 times") {
		t.Errorf("results %+v, want one crash delivered 3 times", o.results)
	}
}

// TestBrokerNewStore restarts the server on the same port with an empty
// store, as a broker whose store was wiped: between two batches, where the
// workers and the tuner set up the streams and the consumer again, and in
// the middle of a batch, whose lost jobs the tuner publishes again. Every
// result arrives exactly once.
func TestBrokerNewStore(t *testing.T) {
	s, err := Serve("127.0.0.1:0", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	addr := s.Addr().String()
	var mu sync.Mutex
	restart := func() {
		mu.Lock()
		defer mu.Unlock()
		s.Shutdown()
		s.WaitForShutdown()
		if s, err = Serve(addr, t.TempDir(), nil); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		s.Shutdown()
	})
	connect := func() *nats.Conn {
		nc, err := nats.Connect("nats://"+addr, nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		return nc
	}
	m, err := New(context.Background(), connect(), &Options{Stall: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	a := &fake{delay: 50 * time.Millisecond}
	startWorker(t, connect(), targetA, a, &logs)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the worker's log:\n%s", logs.String())
		}
	})
	measureOnce(t, m, batchOf(4, targetA), nil)
	restart()
	measureOnce(t, m, batchOf(6, targetA), nil)
	var once sync.Once
	measureOnce(t, m, batchOf(8, targetA), func(finished int) {
		if finished == 2 {
			once.Do(func() { go restart() })
		}
	})
	if a.count() < 18 {
		t.Errorf("the worker measured %d configs, want at least 18", a.count())
	}
}
