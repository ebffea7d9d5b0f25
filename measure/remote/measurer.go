package remote

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/autotune-dev/autotune/dtype"
	"github.com/autotune-dev/autotune/measure"
)

// Options configure a Measurer. A nil *Options means the defaults.
type Options struct {
	// Stall is how long a batch waits while no worker of its fingerprint is
	// registered before it fails, and how long it retries publishing a job
	// while the server does not answer; 0 means one minute. A batch whose
	// workers are alive but slow waits as long as they take.
	Stall time.Duration
	// DType is the element type the jobs of a batch that names none
	// (measure.Batch.DType) name; "" means dtype.Default.
	DType dtype.DType
}

// A Measurer measures each batch on the workers of the batch's target
// fingerprint: it publishes one job per config, collects one result per job,
// hands each to the batch's Finished hook as it arrives, and returns them in
// the batch's order. It is safe for concurrent use by several tasks.
type Measurer struct {
	nc    *nats.Conn
	js    jetstream.JetStream
	kv    jetstream.KeyValue
	stall time.Duration
	dtype dtype.DType
}

// New returns a Measurer that sends batches through nc, creating the
// streams and the workers bucket if they are missing.
func New(ctx context.Context, nc *nats.Conn, o *Options) (*Measurer, error) {
	if o == nil {
		o = &Options{}
	}
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, fmt.Errorf("remote: %w", err)
	}
	kv, err := Setup(ctx, js)
	if err != nil {
		return nil, err
	}
	m := &Measurer{nc: nc, js: js, kv: kv, stall: o.Stall, dtype: o.DType}
	if m.stall <= 0 {
		m.stall = time.Minute
	}
	if m.dtype == "" {
		m.dtype = dtype.Default
	}
	return m, nil
}

// pollEvery is how often a waiting batch checks that workers are alive.
var pollEvery = time.Second

// Measure publishes b's configs as jobs and waits for their results. Each
// result's Measurer names the worker that measured it: by the name in the
// subject it was published to, which a broker with credentials
// authenticates, and by the host and version the worker states.
func (m *Measurer) Measure(ctx context.Context, b measure.Batch) ([]measure.Result, error) {
	return m.measure(ctx, b, "")
}

// MeasureExcept measures b on one live worker of its fingerprint whose
// name is none of not, such as the worker whose figures are to be checked;
// ok is false when there is no such worker.
func (m *Measurer) MeasureExcept(ctx context.Context, b measure.Batch, not []string) (_ []measure.Result, ok bool, _ error) {
	lctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	regs, err := Workers(lctx, m.kv)
	cancel()
	if err != nil {
		return nil, false, err
	}
	for _, r := range regs {
		if r.Fingerprint == b.Target.Fingerprint() && !slices.Contains(not, r.Name) {
			results, err := m.measure(ctx, b, r.Name)
			return results, true, err
		}
	}
	return nil, false, nil
}

// measure measures b on the workers of its fingerprint, or on the worker
// named to alone when to is not "".
func (m *Measurer) measure(ctx context.Context, b measure.Batch, to string) ([]measure.Result, error) {
	if len(b.Configs) == 0 {
		return nil, nil
	}
	fp := b.Target.Fingerprint()
	batch := newID()
	subject, consumer := Subject(fp), consumerName(fp)
	if to != "" {
		subject, consumer = directSubject(fp, to), directConsumer(to)
	}

	// Listen before publishing, through ordered consumers, which resume
	// where they were when the connection comes back: the results, and
	// the advisories of jobs given up, which the given-up stream keeps
	// (a plain subscription would miss one sent while the tuner was
	// disconnected, and the batch would wait for it for ever). Advisories
	// are read from a minute before now, which covers any skew between
	// this clock and the server's: an advisory comes at least three ack
	// waits after its job was published, and those of other batches are
	// told apart by their stream sequence.
	done := make(chan struct{})
	defer close(done)
	arrived := make(chan jetstream.Msg, len(b.Configs))
	givenUp := make(chan jetstream.Msg, len(b.Configs))
	forward := func(ch chan jetstream.Msg) jetstream.MessageHandler {
		return func(msg jetstream.Msg) {
			select {
			case ch <- msg:
			case <-done:
			}
		}
	}
	readers := []struct {
		stream string
		cfg    jetstream.OrderedConsumerConfig
		to     chan jetstream.Msg
	}{
		{ResultsStream, jetstream.OrderedConsumerConfig{FilterSubjects: []string{resultsPrefix + batch + ".*"}}, arrived},
		{GivenUpStream, jetstream.OrderedConsumerConfig{
			FilterSubjects: []string{givenUpPrefix + consumer},
			DeliverPolicy:  jetstream.DeliverByStartTimePolicy, OptStartTime: ptr(time.Now().Add(-time.Minute)),
		}, givenUp},
	}
	// listen (re)starts reading from the start; a result read twice is
	// dropped like any duplicate. An ordered consumer ends when its stream
	// is gone (a server restarted on an empty store), and on a stream
	// made anew it would resume after the last sequence it saw in the old
	// one, missing the first messages of the new; so the batch listens
	// again then.
	var reading []jetstream.ConsumeContext
	stopReading := func() {
		for _, cc := range reading {
			cc.Stop()
		}
		reading = nil
	}
	defer func() { stopReading() }()
	listen := func() error {
		stopReading()
		for _, r := range readers {
			var cc jetstream.ConsumeContext
			err := retry(ctx, m.stall, func(ctx context.Context) error {
				cons, err := m.js.OrderedConsumer(ctx, r.stream, r.cfg)
				if err == nil {
					cc, err = cons.Consume(forward(r.to))
				}
				return m.heal(ctx, err)
			})
			if err != nil {
				return fmt.Errorf("remote: reading %s: %w", r.stream, err)
			}
			reading = append(reading, cc)
		}
		return nil
	}
	if err := listen(); err != nil {
		return nil, err
	}

	// Publish the jobs, remembering each one's stream sequence: the
	// advisory names a job by it, and the jobs left when the batch ends are
	// deleted by it so that no worker runs them for nobody.
	bySeq := map[uint64]int{}
	pending := map[int]uint64{}
	defer func() {
		if len(pending) == 0 {
			return
		}
		// A fresh context: ctx may be what ended the batch.
		dctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if s, err := m.js.Stream(dctx, JobsStream); err == nil {
			for _, seq := range pending {
				s.DeleteMsg(dctx, seq) // already taken and acknowledged: gone anyway
			}
		}
	}()
	// Every job is sent at once and the server's acknowledgements are
	// awaited after, so that the jobs reach the workers together: a worker
	// takes the jobs waiting when it takes its first, and jobs published
	// one after the other went out in scraps, each a build of its own.
	data := make([][]byte, len(b.Configs))
	futures := make([]jetstream.PubAckFuture, len(b.Configs))
	for i, cfg := range b.Configs {
		j := job{
			Format: Format, ID: jobID(batch, i), Batch: batch, Index: i, Of: len(b.Configs),
			Op: b.Template.Op.Name, Shape: b.Shape, DType: cmp.Or(b.DType, m.dtype), Device: fp,
			Template: b.Template.Version, Config: cfg.String(), BestNS: int64(b.Best),
		}
		var err error
		if data[i], err = json.Marshal(j); err != nil {
			return nil, fmt.Errorf("remote: %w", err)
		}
		futures[i], _ = m.js.PublishAsync(subject, data[i], jetstream.WithMsgID(j.ID))
	}
	acked, cancelAcks := context.WithTimeout(ctx, attemptTimeout)
	defer cancelAcks()
	for i, f := range futures {
		var ack *jetstream.PubAck
		if f != nil {
			select {
			case ack = <-f.Ok():
			case <-f.Err():
			case <-acked.Done():
			}
		}
		if ack == nil {
			// Not sent or not acknowledged (the server may be restarting):
			// again, until it is, which its message ID makes safe.
			start := time.Now()
			err := retry(ctx, m.stall, func(ctx context.Context) (err error) {
				ack, err = m.js.Publish(ctx, subject, data[i], jetstream.WithMsgID(jobID(batch, i)))
				return m.heal(ctx, err)
			})
			if err != nil {
				return nil, fmt.Errorf("remote: publishing job %d of %d (tried for %v): %w", i+1, len(b.Configs), time.Since(start).Round(time.Second), err)
			}
		}
		bySeq[ack.Sequence] = i
		pending[i] = ack.Sequence
	}

	results := make([]measure.Result, len(b.Configs))
	finish := func(i int, r measure.Result) {
		if _, ok := pending[i]; !ok {
			return // a duplicate
		}
		delete(pending, i)
		r.Config = b.Configs[i]
		results[i] = r
		if b.Finished != nil {
			b.Finished(r)
		}
	}
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	lastAlive, lastHeard, lastCheck := time.Now(), time.Now(), time.Now()
	missing := map[int]bool{} // jobs not in the jobs stream at the last check
	for len(pending) > 0 {
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("remote: batch interrupted with %d of %d results: %w", len(b.Configs)-len(pending), len(b.Configs), ctx.Err())
		case msg := <-arrived:
			var r result
			if err := json.Unmarshal(msg.Data(), &r); err != nil || r.Format != Format || r.JobID != jobID(batch, r.Index) {
				continue // not a result of this batch's jobs
			}
			finish(r.Index, withName(r.Result, strings.TrimPrefix(msg.Subject(), resultsPrefix+batch+".")))
			lastAlive, lastHeard = time.Now(), time.Now()
		case msg := <-givenUp:
			var adv struct {
				StreamSeq  uint64 `json:"stream_seq"`
				Deliveries uint64 `json:"deliveries"`
			}
			if json.Unmarshal(msg.Data(), &adv) != nil {
				continue
			}
			if i, ok := bySeq[adv.StreamSeq]; ok {
				finish(i, measure.Result{Status: measure.StatusCrash,
					Error: fmt.Sprintf("remote: delivered %d times to workers of %s and never finished: it killed or stalled each of them", adv.Deliveries, fp)})
			}
		case <-tick.C:
			lctx, cancel := context.WithTimeout(ctx, attemptTimeout)
			live, err := m.live(lctx, fp, to)
			cancel()
			if err == nil && live > 0 {
				lastAlive = time.Now()
			} else if since := time.Since(lastAlive); since > m.stall && to != "" {
				return nil, fmt.Errorf("remote: worker %s of device %s gone for %v; %d of %d results of the batch arrived",
					to, fp, since.Round(time.Second), len(b.Configs)-len(pending), len(b.Configs))
			} else if since > m.stall {
				return nil, fmt.Errorf("remote: no live worker of device %s for %v; %d of %d results of the batch arrived (start one there with 'autotune worker --device %s', and check 'autotune workers')",
					fp, since.Round(time.Second), len(b.Configs)-len(pending), len(b.Configs), b.Target.Name)
			}
			ended := false
			for _, cc := range reading {
				select {
				case <-cc.Closed():
					ended = true
				default:
				}
			}
			if time.Since(lastHeard) >= recheckEvery && time.Since(lastCheck) >= recheckEvery {
				lastCheck = time.Now()
				if m.recover(ctx, subject, batch, data, pending, bySeq, missing) {
					ended = true // the stream was made anew
				}
			}
			if ended {
				if err := listen(); err != nil {
					return nil, err
				}
			}
		}
	}
	return results, nil
}

// recheckEvery is how long a batch goes without a result before it checks
// that its jobs are still in the jobs stream, and how often it checks
// again. Tests shorten it.
var recheckEvery = 10 * time.Second

// recover publishes again the pending jobs of a batch that are no longer
// in the jobs stream, where a server restarted on an empty store lost
// them, and which would otherwise be waited for as long as workers live.
// A job is published again only when it was missing at the check before
// too: a job that is gone because a worker acknowledged it has its result
// published before, and the result arrives in the meantime. Publishing
// again is safe anyway: in the stream that held the job, its message ID
// is still known and the copy is dropped, and a job measured twice yields
// one result. missing carries the jobs found missing from one check to
// the next. It reports whether it published any job again.
func (m *Measurer) recover(ctx context.Context, subject, batch string, data [][]byte, pending map[int]uint64, bySeq map[uint64]int, missing map[int]bool) (republished bool) {
	ctx, cancel := context.WithTimeout(ctx, attemptTimeout)
	defer cancel()
	s, err := m.js.Stream(ctx, JobsStream)
	if err != nil {
		m.heal(ctx, err)
		return false
	}
	for i, seq := range pending {
		msg, err := s.GetMsg(ctx, seq)
		switch {
		case err == nil && msg.Header.Get(jetstream.MsgIDHeader) == jobID(batch, i):
			delete(missing, i) // still there
		case err != nil && !errors.Is(err, jetstream.ErrMsgNotFound):
			// cannot tell
		case !missing[i]:
			missing[i] = true
		default:
			ack, err := m.js.Publish(ctx, subject, data[i], jetstream.WithMsgID(jobID(batch, i)))
			if err != nil {
				continue // at the next check
			}
			delete(missing, i)
			delete(bySeq, seq)
			bySeq[ack.Sequence], pending[i] = i, ack.Sequence
			republished = true
		}
	}
	return republished
}

// heal sets up the streams and the workers bucket again when err says
// they are missing (a server restarted on an empty store), so that the
// next try finds them, and returns err.
func (m *Measurer) heal(ctx context.Context, err error) error {
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrNoStreamResponse) {
		Setup(ctx, m.js)
	}
	return err
}

// withName returns r as measured by the worker named name: the name the
// result was published under, whatever the worker says in it.
func withName(r measure.Result, name string) measure.Result {
	who := measure.Measurer{}
	if r.Measurer != nil {
		who = *r.Measurer
	}
	who.Name = name
	r.Measurer = &who
	return r
}

// live counts the registered workers of fingerprint fp, or those named to
// when to is not "".
func (m *Measurer) live(ctx context.Context, fp, to string) (int, error) {
	regs, err := Workers(ctx, m.kv)
	n := 0
	for _, r := range regs {
		if r.Fingerprint == fp && (to == "" || r.Name == to) {
			n++
		}
	}
	return n, err
}

// Workers returns the registrations of the live workers, sorted by
// fingerprint and host.
func Workers(ctx context.Context, kv jetstream.KeyValue) ([]Registration, error) {
	keys, err := kv.ListKeys(ctx)
	if err != nil {
		if errors.Is(err, jetstream.ErrNoKeysFound) {
			return nil, nil
		}
		return nil, fmt.Errorf("remote: workers: %w", err)
	}
	var out []Registration
	for key := range keys.Keys() {
		e, err := kv.Get(ctx, key)
		if err != nil {
			continue // expired or deleted since it was listed
		}
		var r Registration
		if json.Unmarshal(e.Value(), &r) == nil {
			// The name in the key, which a broker with credentials
			// checks, over the one the worker states.
			if parts := strings.Split(key, "."); len(parts) == 3 {
				r.Name = parts[1]
			}
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b Registration) int {
		if c := strings.Compare(a.Fingerprint, b.Fingerprint); c != 0 {
			return c
		}
		return strings.Compare(a.Host+a.ID, b.Host+b.ID)
	})
	return out, nil
}

// jobID is the ID of job i of a batch: its message ID in both streams.
func jobID(batch string, i int) string { return fmt.Sprintf("%s.%d", batch, i) }

func ptr[T any](v T) *T { return &v }

// newID returns a random token usable in a subject.
func newID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
