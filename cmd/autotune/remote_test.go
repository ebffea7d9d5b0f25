package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/measure/remote"
	"github.com/autotune-dev/autotune/tunedb"
)

// asMainEnv makes the test binary run Main with its arguments: the worker
// processes of TestTuneTasksThroughWorkers, one of which it kills.
const asMainEnv = "AUTOTUNE_CMD_TEST_AS_MAIN"

// watchWriter collects what a command writes and closes seen once the text
// contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func newWatch(want string) *watchWriter {
	return &watchWriter{want: want, seen: make(chan struct{})}
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, err := w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return n, err
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// start runs Main with args on a goroutine; the returned channel gets its
// exit code. It waits until stderr says want.
func start(t *testing.T, want string, args ...string) (<-chan int, *watchWriter) {
	t.Helper()
	errs := newWatch(want)
	done := make(chan int, 1)
	go func() { done <- Main(args, strings.NewReader(""), &bytes.Buffer{}, errs) }()
	select {
	case <-errs.seen:
	case code := <-done:
		t.Fatalf("%v ended with exit %d before saying %q:\n%s", args, code, want, errs.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("%v did not say %q within 30s:\n%s", args, want, errs.String())
	}
	return done, errs
}

// stop sends sig to this process, which the command started by start has
// a handler for, and returns its exit code.
func stop(t *testing.T, done <-chan int, sig syscall.Signal) int {
	t.Helper()
	if err := syscall.Kill(os.Getpid(), sig); err != nil {
		t.Fatal(err)
	}
	select {
	case code := <-done:
		return code
	case <-time.After(30 * time.Second):
		t.Fatalf("did not stop within 30s of %v", sig)
		return 0
	}
}

func TestRemoteUsageErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Close()
	for _, tt := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"broker", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"broker", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"broker", "--listen", "4222"}, 2, `--listen "4222": want host:port`},
		{[]string{"broker", "--listen", "127.0.0.1:http"}, 2, `--listen "127.0.0.1:http": want host:port`},
		{[]string{"worker", "--bogus"}, 2, "flag provided but not defined: -bogus"},
		{[]string{"worker", "--device", "sm_99"}, 2, `--device: unknown device "sm_99"`},
		{[]string{"worker", "--ack-wait", "10ms"}, 2, "--ack-wait must be at least 1s"},
		{[]string{"worker", "stray"}, 2, `unexpected argument "stray"`},
		{[]string{"workers", "--nats"}, 2, "flag needs an argument: -nats"},
		{[]string{"broker", "--listen", busy.Addr().String(), "--store", t.TempDir()}, 1, "address already in use"},
		// Nothing listens on port 1 of loopback.
		{[]string{"worker", "--nats", "nats://127.0.0.1:1"}, 1, "connecting to NATS at nats://127.0.0.1:1: "},
		{[]string{"workers", "--nats", "nats://127.0.0.1:1"}, 1, "connecting to NATS at nats://127.0.0.1:1: "},
		{[]string{"worker", "--nats", "nats://[::1"}, 1, "connecting to NATS at nats://[::1: "},
	} {
		code, stdout, stderr := run(t, "", tt.args...)
		if code != tt.code || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d and one line with %q", tt.args, code, stdout, stderr, tt.code, tt.want)
		}
	}
}

// TestBrokerCommand starts the broker, uses it, stops it with SIGTERM,
// starts it again on the same port and store, finds what was published
// before, and stops it with Ctrl-C.
func TestBrokerCommand(t *testing.T) {
	store := t.TempDir()
	done, errs := start(t, "broker listening on ", "broker", "--listen", "127.0.0.1:0", "--store", store)
	url := regexp.MustCompile(`listening on (nats://\S+),`).FindStringSubmatch(errs.String())
	if url == nil {
		t.Fatalf("the broker does not say where it listens:\n%s", errs.String())
	}
	code, stdout, stderr := run(t, "", "workers", "--nats", url[1])
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no live workers at "+url[1]) {
		t.Errorf("workers on an empty broker: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	// 'workers' created the streams; publish a job, to be found after the
	// restart.
	publish := func() uint64 {
		nc, err := nats.Connect(url[1])
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		js, _ := jetstream.New(nc)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := js.Publish(ctx, remote.Subject("kept"), []byte("{}")); err != nil {
			t.Fatal(err)
		}
		s, err := js.Stream(ctx, remote.JobsStream)
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return info.State.Msgs
	}
	if n := publish(); n != 1 {
		t.Fatalf("the jobs stream holds %d messages, want 1", n)
	}
	if code := stop(t, done, syscall.SIGTERM); code != 143 || !strings.Contains(errs.String(), "broker stopped") {
		t.Errorf("broker after SIGTERM: exit %d, want 143\n%s", code, errs.String())
	}
	if nc, err := nats.Connect(url[1]); err == nil {
		nc.Close()
		t.Errorf("%s still answers after the broker stopped", url[1])
	}

	done, errs = start(t, "broker listening on "+url[1], "broker", "--listen", strings.TrimPrefix(url[1], "nats://"), "--store", store)
	if n := publish(); n != 2 {
		t.Errorf("after a restart the jobs stream holds %d messages, want the one from before and a new one", n)
	}
	if code := stop(t, done, syscall.SIGINT); code != 130 {
		t.Errorf("broker after Ctrl-C: exit %d, want 130\n%s", code, errs.String())
	}
}

// serveNATS starts an embedded NATS server for the test.
func serveNATS(t *testing.T) string {
	t.Helper()
	s, err := remote.Serve("127.0.0.1:0", t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

// TestWorkerCommand runs a worker, lists it, has it measure real kernels,
// lists it with its jobs done, stops it and finds the list empty.
func TestWorkerCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels")
	}
	url := serveNATS(t)
	target, err := lookupDevice("cpu")
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	done, errs := start(t, "taking jobs from "+url, "worker", "--nats", url, "--device", "cpu")

	// listed waits until 'workers' shows the worker with jobs done.
	listed := func(jobs int) {
		t.Helper()
		var stdout, stderr string
		for range 50 {
			var code int
			code, stdout, stderr = run(t, "", "workers", "--nats", url)
			lines := strings.Split(strings.TrimSpace(stdout), "\n")
			if code == 0 && len(lines) == 2 {
				f := strings.Fields(lines[1])
				if strings.Contains(lines[1], target.Fingerprint()) && f[len(f)-4] == host && f[len(f)-1] == fmt.Sprint(jobs) {
					return
				}
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Fatalf("workers does not list one worker of %s on %s with %d jobs done:\n%s%s", target.Fingerprint(), host, jobs, stdout, stderr)
	}
	listed(0)

	nc, err := nats.Connect(url)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m, err := remote.New(context.Background(), nc, &remote.Options{Stall: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	tmpl, _ := kernels.TemplateFor("softmax", kernels.CPU)
	shape := []int{4, 24}
	b := measure.Batch{Template: tmpl, Shape: shape, Target: target}
	space := tmpl.SearchSpace(shape, dtype.F32, target) // a float32 batch: no 16-bit-only knob values
	r := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for len(b.Configs) < 3 {
		cfg, err := space.Sample(r)
		if err != nil {
			t.Fatal(err)
		}
		if !seen[cfg.String()] {
			seen[cfg.String()] = true
			b.Configs = append(b.Configs, cfg)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	results, err := m.Measure(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	for i, res := range results {
		if res.Status != measure.StatusOK || res.MedianNS <= 0 || !res.Config.Equal(b.Configs[i]) {
			t.Errorf("result %d: %s %q median %v, want ok with a median", i, res.Status, res.Error, res.MedianNS)
		}
	}
	listed(3)

	if code := stop(t, done, syscall.SIGTERM); code != 143 || !strings.Contains(errs.String(), "worker stopped after 3 jobs") {
		t.Errorf("worker after SIGTERM: exit %d, want 143 and the jobs it did:\n%s", code, errs.String())
	}
	code, stdout, stderr := run(t, "", "workers", "--nats", url)
	if code != 0 || stdout != "" || !strings.Contains(stderr, "no live workers") {
		t.Errorf("workers after the worker stopped: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}

// TestTuneTasksThroughWorkers is the fault test of tune --nats: a tasks
// file tuned through two worker processes, one of them killed with
// SIGKILL after the first batch; every trial gives one record, and no
// config is measured into the database twice.
func TestTuneTasksThroughWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs generated kernels in worker processes")
	}
	url := serveNATS(t)
	var workers []*exec.Cmd
	var exited []chan struct{}
	busy := make(chan int, 100) // the index of a worker that starts measuring jobs
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "worker", "--nats", url, "--device", "cpu", "--ack-wait", "3s")
		cmd.Env = append(os.Environ(), asMainEnv+"=1")
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		ready := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stderr)
			once := sync.Once{}
			for sc.Scan() {
				if strings.Contains(sc.Text(), "taking jobs from") {
					once.Do(func() { close(ready) })
				}
				if strings.Contains(sc.Text(), "measuring ") {
					select {
					case busy <- i:
					default:
					}
				}
				t.Logf("worker %d: %s", i, sc.Text())
			}
		}()
		ex := make(chan struct{})
		go func() { cmd.Wait(); close(ex) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-ex })
		select {
		case <-ready:
		case <-ex:
			t.Fatalf("worker %d exited before taking jobs", i)
		case <-time.After(30 * time.Second):
			t.Fatalf("worker %d is not ready after 30s", i)
		}
		workers, exited = append(workers, cmd), append(exited, ex)
	}

	dir := t.TempDir()
	tasks := filepath.Join(dir, "tasks.json")
	os.WriteFile(tasks, []byte(`[{"op": "softmax", "shape": "3x17"}, {"op": "gemm", "shape": "4x8x8", "weight": 2}]`), 0o644)
	path := filepath.Join(dir, "tune.db")
	errs := newWatch("] ")
	var out bytes.Buffer
	done := make(chan int, 1)
	const trials = 16
	go func() {
		done <- Main([]string{"tune", "--tasks", tasks, "--nats", url, "--db", path, "--trials", fmt.Sprint(trials),
			"--batch", "4", "--remeasure", "0", "--strategy", "random", "--json"}, strings.NewReader(""), &out, errs)
	}()
	select {
	case <-errs.seen: // the first batch is in
	case code := <-done:
		t.Fatalf("tune ended before the first batch was in: exit %d\n%s", code, errs.String())
	}
	// Kill the first worker that starts on jobs after that, while it
	// builds them: its jobs go to the other one after the ack wait.
	for len(busy) > 0 {
		<-busy
	}
	var victim int
	select {
	case victim = <-busy:
	case code := <-done:
		t.Fatalf("tune ended before a worker started on its second batch: exit %d\n%s", code, errs.String())
	}
	workers[victim].Process.Signal(syscall.SIGKILL)
	<-exited[victim]
	t.Logf("killed worker %d", victim)
	var code int
	select {
	case code = <-done:
	case <-time.After(3 * time.Minute):
		t.Fatalf("tune did not finish within 3 minutes of the kill:\n%s", errs.String())
	}
	var s tasksSummaryJSON
	if err := json.Unmarshal(out.Bytes(), &s); code != 0 || err != nil {
		t.Fatalf("exit %d, %v\n%s\n%s", code, err, out.String(), errs.String())
	}
	if s.Trials != trials || s.Missing != 0 || s.Interrupted {
		t.Errorf("summary %+v, want %d trials and a best for every task", s, trials)
	}

	code, exported, stderr := run(t, "", "db", "export", "--db", path)
	if code != 0 {
		t.Fatalf("db export: exit %d, %s", code, stderr)
	}
	perWorkload := map[string]int{}
	measured := map[string]int{}
	for line := range strings.Lines(exported) {
		var r tunedb.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		w := r.Workload.Op + " " + kernels.FormatShape(r.Workload.Shape)
		perWorkload[w]++
		measured[w+" "+r.Config.String()]++
	}
	records := 0
	for w, n := range perWorkload {
		records += n
		t.Logf("%s: %d records", w, n)
	}
	if records != trials || len(perWorkload) != 2 {
		t.Errorf("the database holds %d records of %d workloads, want %d of 2", records, len(perWorkload), trials)
	}
	for k, n := range measured {
		if n != 1 {
			t.Errorf("%s: %d records, want 1", k, n)
		}
	}
}

// TestSecureBrokerCommands runs 'broker --auth' (a process of its own, so
// that a signal reaches it alone) and a worker with the credential it
// made, lists the worker as the tuner, refuses a worker without a
// credential, and stops both with SIGHUP.
func TestSecureBrokerCommands(t *testing.T) {
	auth := filepath.Join(t.TempDir(), "fleet")
	broker := exec.Command(os.Args[0], "broker", "--listen", "127.0.0.1:0", "--store", t.TempDir(), "--auth", auth, "--workers", "w1")
	broker.Env = append(os.Environ(), asMainEnv+"=1")
	berrs := newWatch("broker stopped")
	pr, pw := io.Pipe()
	broker.Stderr = io.MultiWriter(berrs, pw)
	if err := broker.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan int, 1)
	go func() { broker.Wait(); pw.Close(); exited <- broker.ProcessState.ExitCode() }()
	t.Cleanup(func() { broker.Process.Kill() })
	var url []string
	for sc := bufio.NewScanner(pr); url == nil && sc.Scan(); {
		url = regexp.MustCompile(`listening on (tls://\S+),`).FindStringSubmatch(sc.Text())
	}
	go io.Copy(io.Discard, pr)
	if url == nil {
		t.Fatalf("the broker does not say it listens with TLS:\n%s", berrs.String())
	}
	for _, f := range []string{"tuner.key", "w1.key", "broker-key.pem"} {
		if fi, err := os.Stat(filepath.Join(auth, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v, want a file readable by its owner only", f, err)
		}
	}
	key := func(name string) string { return filepath.Join(auth, name+".key") }
	ca := filepath.Join(auth, "broker.pem")
	code, stdout, stderr := run(t, "", "worker", "--nats", url[1], "--nats-ca", ca)
	if code != 1 || stdout != "" || !strings.Contains(stderr, "Authorization Violation") {
		t.Errorf("a worker without a credential: exit %d, stdout %q, stderr %q; want exit 1 and an authorization violation", code, stdout, stderr)
	}
	wdone, werrs := start(t, "taking jobs from", "worker", "--nats", url[1], "--nats-key", key("w1"), "--nats-ca", ca)
	if !strings.Contains(werrs.String(), "worker w1 for ") {
		t.Errorf("the worker does not go by its credential's name:\n%s", werrs.String())
	}
	listed := false
	for range 50 {
		code, stdout, _ = run(t, "", "workers", "--nats", url[1], "--nats-key", key("tuner"), "--nats-ca", ca)
		if code == 0 && strings.Contains(stdout, "\nw1 ") {
			listed = true
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if !listed {
		t.Errorf("workers does not list w1:\n%s", stdout)
	}
	if code := stop(t, wdone, syscall.SIGHUP); code != 129 {
		t.Errorf("worker after SIGHUP: exit %d, want 129\n%s", code, werrs.String())
	}
	broker.Process.Signal(syscall.SIGHUP)
	select {
	case code := <-exited:
		if code != 129 || !strings.Contains(berrs.String(), "broker stopped") {
			t.Errorf("broker after SIGHUP: exit %d, want 129\n%s", code, berrs.String())
		}
	case <-time.After(30 * time.Second):
		t.Errorf("the broker did not stop within 30s of SIGHUP")
	}
}

func TestBrokerRefusesAnOpenNetwork(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"broker", "--listen", "0.0.0.0:0"}, "--listen 0.0.0.0:0 reaches beyond this machine: give --auth DIR"},
		{[]string{"broker", "--listen", ":0"}, "--listen :0 reaches beyond this machine"},
		{[]string{"broker", "--workers", "w1"}, "--workers makes credentials in --auth DIR"},
		{[]string{"broker", "--tls-cert", "x.pem"}, "--tls-cert and --tls-key go together"},
	} {
		code, stdout, stderr := run(t, "", tt.args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and one line with %q", tt.args, code, stdout, stderr, tt.want)
		}
	}
	auth := t.TempDir()
	if code, _, stderr := run(t, "", "broker", "--listen", "127.0.0.1:0", "--store", t.TempDir(), "--auth", auth, "--workers", "a.b"); code != 1 || !strings.Contains(stderr, `credential name "a.b"`) {
		t.Errorf("a worker name with a dot: exit %d, %s", code, stderr)
	}
}
