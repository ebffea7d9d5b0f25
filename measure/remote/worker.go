package remote

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/device"
	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/kernels"
	"github.com/autotune-dev/autotune/measure"
	"github.com/autotune-dev/autotune/schedule"
)

// LocalMeasurer is what a worker measures with: a backend's local measurer,
// such as tune.NewMeasurer's, which the command wires in (this package sits
// below tune and does not choose backends).
type LocalMeasurer interface {
	Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error)
}

// WorkerOptions configure a Worker.
type WorkerOptions struct {
	Target   device.Target // the device it measures on; its fingerprint picks the jobs
	Measurer LocalMeasurer
	// Name is the worker's name, which results and its registration
	// carry: its credential's name when the broker has credentials (the
	// broker refuses any other); "" means a random token.
	Name string
	Host string // shown by Workers and in results; "" means os.Hostname
	Tool string // the autotune version, stated in results

	AckWait time.Duration // how long a job may go unacknowledged before it is redelivered; 0 means one minute
	Batch   int           // jobs taken and measured together at most; 0 means 64
	Log     *log.Logger   // a line per batch of jobs, malformed jobs, failures; nil means the standard logger
}

// A Worker measures the jobs of its target's fingerprint until its context
// ends.
type Worker struct {
	o    WorkerOptions
	fp   string
	id   string // of this instance
	me   measure.Measurer
	js   jetstream.JetStream
	kv   jetstream.KeyValue
	done atomic.Int64

	// The live workers of fp, counted at most every registrationTTL/3
	// (share).
	peers   int
	counted time.Time
}

// NewWorker returns a worker that takes jobs through nc.
func NewWorker(ctx context.Context, nc *nats.Conn, o WorkerOptions) (*Worker, error) {
	if o.Measurer == nil {
		return nil, errors.New("remote: NewWorker: no measurer")
	}
	if o.AckWait <= 0 {
		o.AckWait = time.Minute
	}
	if o.Batch <= 0 {
		o.Batch = 64
	}
	if o.Log == nil {
		o.Log = log.Default()
	}
	if o.Host == "" {
		o.Host, _ = os.Hostname()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	kv, err := Setup(ctx, js)
	if err != nil {
		return nil, err
	}
	id := newID()[:12]
	if o.Name == "" {
		o.Name = id
	}
	if !validToken(o.Name) {
		return nil, fmt.Errorf("remote: NewWorker: name %q: want letters, digits, '-' or '_'", o.Name)
	}
	return &Worker{o: o, fp: o.Target.Fingerprint(), id: id, js: js, kv: kv,
		me: measure.Measurer{Name: o.Name, Host: o.Host, Tool: o.Tool}}, nil
}

// Name returns the name w goes by.
func (w *Worker) Name() string { return w.o.Name }

// Fingerprint returns the device fingerprint whose jobs w takes.
func (w *Worker) Fingerprint() string { return w.fp }

// JobsDone returns how many jobs w has published a result for.
func (w *Worker) JobsDone() int64 { return w.done.Load() }

// Run takes and measures jobs until ctx ends, then unregisters and returns
// nil; it returns an error only when it cannot take jobs at all.
func (w *Worker) Run(ctx context.Context) error {
	// The server may be restarting: give it as long as a batch of the
	// tuner waits for a worker.
	var cons, direct jetstream.Consumer
	err := retry(ctx, time.Minute, func(ctx context.Context) (err error) {
		if cons, err = w.consumer(ctx); err == nil {
			direct, err = w.directConsumer(ctx)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("remote: jobs consumer: %w", err)
	}
	key := registrationKey(w.fp, w.o.Name, w.id)
	reg := Registration{Name: w.o.Name, ID: w.id, Tool: w.o.Tool, Fingerprint: w.fp, Host: w.o.Host, PID: os.Getpid(), Started: time.Now().UTC()}
	register := func(ctx context.Context) error {
		reg.JobsDone = w.done.Load()
		data, _ := json.Marshal(reg)
		_, err := w.kv.Put(ctx, key, data)
		return err
	}
	if err := retry(ctx, time.Minute, register); err != nil {
		return fmt.Errorf("remote: registering: %w", err)
	}
	// The entry is refreshed before its TTL runs out, and after each
	// batch of jobs, so that 'autotune workers' shows the jobs done.
	served := make(chan struct{}, 1)
	refresher := make(chan struct{})
	go func() {
		defer close(refresher)
		t := time.NewTicker(registrationTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-served:
			}
			rctx, cancel := context.WithTimeout(ctx, attemptTimeout)
			err := register(rctx)
			cancel()
			if err != nil && ctx.Err() == nil {
				w.o.Log.Printf("remote: refreshing registration: %v", err)
			}
		}
	}()
	defer func() {
		<-refresher // so that no refresh comes after the delete
		// Not ctx, which has ended; and not for ever, the server may be gone.
		dctx, cancel := context.WithTimeout(context.Background(), attemptTimeout)
		defer cancel()
		w.kv.Delete(dctx, key)
	}()

	failing := false // since the last fetch that worked
	for ctx.Err() == nil {
		direct = w.serveDirect(ctx, direct)
		msgs, err := w.fetch(ctx, cons)
		if err != nil {
			if ctx.Err() != nil {
				continue
			}
			if !failing {
				w.o.Log.Printf("remote: fetching jobs: %v; trying again every second", err)
				failing = true
			}
			if c := w.rebind(ctx, err); c != nil {
				cons = c
			}
			sleep(ctx, time.Second)
			continue
		}
		if failing {
			w.o.Log.Printf("remote: taking jobs again")
			failing = false
		}
		if len(msgs) > 0 {
			w.serve(ctx, msgs)
			select {
			case served <- struct{}{}:
			default: // a refresh is due anyway
			}
		}
	}
	return nil
}

// consumer creates (or updates) the jobs consumer of w's fingerprint,
// which its workers share.
func (w *Worker) consumer(ctx context.Context) (jetstream.Consumer, error) {
	return w.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable:       consumerName(w.fp),
		FilterSubject: Subject(w.fp),
		AckPolicy:     jetstream.AckExplicitPolicy,
		AckWait:       w.o.AckWait,
		MaxDeliver:    MaxDeliver,
	})
}

// directConsumer creates (or updates) the consumer of the jobs sent to
// w by name. It is removed by the server once unused for a while: a
// worker without a credential has a new name each time it starts.
func (w *Worker) directConsumer(ctx context.Context) (jetstream.Consumer, error) {
	return w.js.CreateOrUpdateConsumer(ctx, JobsStream, jetstream.ConsumerConfig{
		Durable:           directConsumer(w.o.Name),
		FilterSubject:     directSubject(w.fp, w.o.Name),
		AckPolicy:         jetstream.AckExplicitPolicy,
		AckWait:           w.o.AckWait,
		MaxDeliver:        MaxDeliver,
		InactiveThreshold: time.Hour,
	})
}

// serveDirect measures the jobs waiting for w by name, before those of
// the shared consumer: they are few (a check of a run's leaders) and a
// tuner waits for them. It returns direct, or the consumer made again
// when the server lost it (a new store: the shared consumer's rebind sets
// the stream up again).
func (w *Worker) serveDirect(ctx context.Context, direct jetstream.Consumer) jetstream.Consumer {
	b, err := direct.FetchNoWait(w.o.Batch)
	if err != nil {
		return direct
	}
	var msgs []jetstream.Msg
	for m := range b.Messages() {
		msgs = append(msgs, m)
	}
	if len(msgs) > 0 {
		w.serve(ctx, msgs)
	}
	if errors.Is(b.Error(), jetstream.ErrConsumerNotFound) || errors.Is(b.Error(), nats.ErrNoResponders) {
		if c, err := w.directConsumer(ctx); err == nil {
			return c
		}
	}
	return direct
}

// rebind returns the jobs consumer created again when a failed fetch (err)
// was for want of it or of its stream (a server restarted on an empty
// store: a pull request to a missing consumer has no responders), and nil
// when it is there or the server cannot say.
func (w *Worker) rebind(ctx context.Context, err error) jetstream.Consumer {
	if !errors.Is(err, nats.ErrNoResponders) && !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	_, err = w.js.Consumer(ctx, JobsStream, consumerName(w.fp))
	if !errors.Is(err, jetstream.ErrConsumerNotFound) && !errors.Is(err, jetstream.ErrStreamNotFound) {
		return nil
	}
	if _, err := Setup(ctx, w.js); err != nil {
		return nil
	}
	cons, err := w.consumer(ctx)
	if err != nil {
		return nil
	}
	w.o.Log.Printf("remote: the jobs stream or consumer was missing (a server with a new store?): set up again")
	return cons
}

// gatherWait is how long a worker that got a job waits for more of them
// before it starts: a tuner sends a batch's jobs at once, so they arrive
// within a millisecond or so of each other, and measuring them together
// costs one build instead of several.
var gatherWait = 10 * time.Millisecond

// fetch waits up to a second for one job, then takes the jobs that arrive
// within gatherWait of each other after it, up to its share of the first
// one's batch.
func (w *Worker) fetch(ctx context.Context, cons jetstream.Consumer) ([]jetstream.Msg, error) {
	first, err := cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
	if err != nil {
		return nil, err
	}
	var msgs []jetstream.Msg
	for m := range first.Messages() {
		msgs = append(msgs, m)
	}
	if len(msgs) == 0 {
		return msgs, first.Error()
	}
	var head struct {
		Of int `json:"of"`
	}
	json.Unmarshal(msgs[0].Data(), &head) // a malformed job is rejected later
	share := w.share(ctx, head.Of)
	for len(msgs) < share && ctx.Err() == nil {
		sleep(ctx, gatherWait)
		more, err := cons.FetchNoWait(share - len(msgs))
		if err != nil {
			break
		}
		n := len(msgs)
		for m := range more.Messages() {
			msgs = append(msgs, m)
		}
		if len(msgs) == n {
			break
		}
	}
	return msgs, nil
}

// share returns how many of a batch of n jobs w takes at once: its part
// among the live workers of its device, so that a worker alone measures a
// batch in one build, as the tuner would locally, and two split it; at
// most Batch. n is 0 when the tuner did not say.
func (w *Worker) share(ctx context.Context, n int) int {
	if n <= 0 {
		return w.o.Batch
	}
	if time.Since(w.counted) > registrationTTL/3 {
		lctx, cancel := context.WithTimeout(ctx, attemptTimeout)
		regs, err := Workers(lctx, w.kv)
		cancel()
		if err == nil {
			w.peers, w.counted = 0, time.Now()
			for _, r := range regs {
				if r.Fingerprint == w.fp {
					w.peers++
				}
			}
		}
	}
	peers := max(w.peers, 1)
	return min((n+peers-1)/peers, w.o.Batch)
}

// A task is one decoded job and its message.
type task struct {
	msg jetstream.Msg
	job job
	cfg schedule.Config
}

// serve measures msgs, grouped into one batch per workload.
func (w *Worker) serve(ctx context.Context, msgs []jetstream.Msg) {
	type key struct {
		op, shape, template string
		dtype               dtype.DType
		best                int64
	}
	groups := map[key][]task{}
	var order []key
	for _, msg := range msgs {
		t, ok := w.decode(ctx, msg)
		if !ok {
			continue
		}
		k := key{t.job.Op, fmt.Sprint(t.job.Shape), t.job.Template, t.job.DType, t.job.BestNS}
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], t)
	}
	for _, k := range order {
		w.measure(ctx, groups[k])
	}
}

// decode checks one message. A message that is not a job is logged and
// terminated (never redelivered); a job this worker cannot run gets a
// failure result saying why.
func (w *Worker) decode(ctx context.Context, msg jetstream.Msg) (task, bool) {
	reject := func(why string) (task, bool) {
		w.o.Log.Printf("remote: rejected a malformed job on %s: %s", msg.Subject(), why)
		msg.Term()
		return task{}, false
	}
	if n := len(msg.Data()); n > maxJobBytes {
		return reject(fmt.Sprintf("%d bytes, more than the %d a job may have", n, maxJobBytes))
	}
	var j job
	if err := json.Unmarshal(msg.Data(), &j); err != nil {
		return reject(err.Error())
	}
	switch {
	case j.Format != Format:
		return reject(fmt.Sprintf("format %d, not %d", j.Format, Format))
	case j.Batch == "" || j.ID != jobID(j.Batch, j.Index) || !validToken(j.Batch):
		return reject(fmt.Sprintf("bad job ID %q", j.ID))
	}
	fail := func(format string, args ...any) (task, bool) {
		w.publish(task{msg: msg, job: j}, measure.Result{Status: measure.StatusRuntimeError, Error: "remote: " + fmt.Sprintf(format, args...)})
		return task{}, false
	}
	if j.Device != w.fp {
		return fail("job for device %s reached a worker of %s", j.Device, w.fp)
	}
	tmpl, ok := kernels.TemplateFor(j.Op, kernels.BackendOf(w.o.Target))
	if !ok {
		return fail("worker %s on %s has no %s template of %s", w.o.Name, w.o.Host, kernels.BackendOf(w.o.Target), j.Op)
	}
	if tmpl.Version != j.Template {
		return fail("worker %s on %s has template %s of %s, the job wants %s: update autotune there", w.o.Name, w.o.Host, tmpl.Version, j.Op, j.Template)
	}
	// A tuner before jobs named a dtype sent f32.
	dt, err := dtype.Parse(string(j.DType))
	if err != nil {
		return fail("worker %s on %s: %v: update autotune there", w.o.Name, w.o.Host, err)
	}
	if err := tmpl.CheckDType(dt); err != nil {
		return fail("worker %s on %s: %v", w.o.Name, w.o.Host, err)
	}
	j.DType = dt
	cfg, err := schedule.ParseConfig(j.Config)
	if err != nil {
		return fail("config %q: %v", j.Config, err)
	}
	return task{msg: msg, job: j, cfg: cfg}, true
}

// validToken reports whether s can end a subject.
func validToken(s string) bool {
	for _, r := range s {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_') {
			return false
		}
	}
	return s != ""
}

// measure runs the tasks of one workload as one batch of the local
// measurer, publishing each result as soon as it is final and keeping the
// others' messages alive meanwhile.
func (w *Worker) measure(ctx context.Context, ts []task) {
	tmpl, _ := kernels.TemplateFor(ts[0].job.Op, kernels.BackendOf(w.o.Target))
	w.o.Log.Printf("measuring %d jobs of %s %s", len(ts), ts[0].job.Op, kernels.FormatShape(ts[0].job.Shape))
	var mu sync.Mutex
	open := map[string][]int{} // config text → indexes into ts not yet published
	for i, t := range ts {
		open[t.job.Config] = append(open[t.job.Config], i)
	}
	take := func(cfg string) (task, bool) {
		mu.Lock()
		defer mu.Unlock()
		q := open[cfg]
		if len(q) == 0 {
			return task{}, false
		}
		open[cfg] = q[1:]
		return ts[q[0]], true
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		t := time.NewTicker(w.o.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				mu.Lock()
				for _, q := range open {
					for _, i := range q {
						ts[i].msg.InProgress()
					}
				}
				mu.Unlock()
			}
		}
	}()
	b := measure.Batch{
		Template: tmpl, Shape: ts[0].job.Shape, DType: ts[0].job.DType, Target: w.o.Target,
		Best: time.Duration(ts[0].job.BestNS),
		Finished: func(r measure.Result) {
			if t, ok := take(r.Config.String()); ok {
				w.publish(t, r)
			}
		},
	}
	for _, t := range ts {
		b.Configs = append(b.Configs, t.cfg)
	}
	results, err := w.o.Measurer.Measure(ctx, b)
	if err != nil {
		// Not the configs' fault: let another delivery (here or on another
		// worker) try them.
		if ctx.Err() == nil {
			w.o.Log.Printf("remote: measuring %d jobs of %s %v: %v", len(ts), ts[0].job.Op, ts[0].job.Shape, err)
		}
		mu.Lock()
		for _, q := range open {
			for _, i := range q {
				ts[i].msg.NakWithDelay(time.Second)
			}
		}
		clear(open)
		mu.Unlock()
		return
	}
	// Results the hook did not hear, if the measurer has no hook.
	for _, r := range results {
		if t, ok := take(r.Config.String()); ok {
			w.publish(t, r)
		}
	}
}

// publish sends t's result and then acknowledges t: a worker that dies in
// between has its job delivered again, and the duplicate result is dropped
// by its message ID. It keeps trying for an ack wait (the server may be
// restarting), after which the job would be delivered again anyway.
func (w *Worker) publish(t task, r measure.Result) {
	r.Measurer = &w.me
	data, err := json.Marshal(result{Format: Format, JobID: t.job.ID, Index: t.job.Index, Result: r})
	if err == nil {
		// Not ctx: a worker told to stop still delivers what it measured.
		err = retry(context.Background(), w.o.AckWait, func(ctx context.Context) error {
			_, err := w.js.Publish(ctx, resultSubject(t.job.Batch, w.o.Name), data, jetstream.WithMsgID(t.job.ID))
			return err
		})
	}
	if err != nil {
		w.o.Log.Printf("remote: publishing the result of job %s: %v", t.job.ID, err)
		t.msg.Nak()
		return
	}
	t.msg.Ack()
	w.done.Add(1)
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
